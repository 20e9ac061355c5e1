// Indexes over the task runs of one execution (by id, children by parent in creation order, where each run sits), so
// that no lookup walks the whole run list. A record's index is handed on from step to step: the next step forks it
// (layered maps: the versions share what did not change), so a step pays for the runs it touches, not for the record.
import { copyData } from './keyed.js';
import { forkTallies, markReplaced } from './loop-tally.js';
import type { Execution, Flow, TaskRun } from './types.js';

/** The few map operations the indexes are used through (a `Map` has them too). */
export interface RunLookup<V> {
  get(key: string): V | undefined;
}

/** Own entries below which a layer is never folded into a new base. */
const FOLD_MIN = 1_024;
/** A fork folds its origin's own layer into a new base once it holds more than 1/FOLD_RATIO of the base's entries. */
const FOLD_RATIO = 8;

/**
 * A map of which each version changes a few entries of many: reads fall through to a base that is never changed once a
 * version shares it; writes go to the version's own layer. A fork copies the own layer only, or, once that layer holds
 * more than 1/8 of the base, starts from a new base with it folded in (the old base is left as it is): amortised O(1)
 * per write, and no copy while a version is written (a step creating 100,000 runs). Iteration is in first-insertion
 * order, as a `Map`'s. Keys are never deleted; `undefined` is never stored.
 */
export class LayeredMap<V> implements RunLookup<V> {
  private constructor(private readonly base: ReadonlyMap<string, V>, private readonly own: Map<string, V>) {}

  static empty<V>(): LayeredMap<V> { return new LayeredMap<V>(new Map(), new Map()); }

  get(key: string): V | undefined {
    const v = this.own.get(key);
    return v !== undefined ? v : this.base.get(key);
  }

  has(key: string): boolean { return this.own.has(key) || this.base.has(key); }

  set(key: string, value: V): this {
    this.own.set(key, value);
    return this;
  }

  get size(): number {
    let n = this.base.size;
    for (const k of this.own.keys()) if (!this.base.has(k)) n++;
    return n;
  }

  *keys(): IterableIterator<string> {
    for (const k of this.base.keys()) yield k;
    for (const k of this.own.keys()) if (!this.base.has(k)) yield k;
  }

  *values(): IterableIterator<V> {
    for (const k of this.keys()) yield this.get(k)!;
  }

  /** A version of its own: later writes to either are not seen by the other. */
  fork(): LayeredMap<V> {
    if (this.own.size <= FOLD_MIN || this.own.size * FOLD_RATIO <= this.base.size) return new LayeredMap(this.base, new Map(this.own));
    const base = new Map(this.base);
    for (const [k, v] of this.own) base.set(k, v);
    return new LayeredMap(base, new Map());
  }
}

/** Where a run sits: its position in the run list and among its siblings (both fixed once it is appended). */
export interface RunPlace { list: number; sibling: number }

export interface RunIndex {
  byId: LayeredMap<TaskRun>;
  /** Runs by `parentTaskRunId`, root runs under ''. Each list is in creation (= run list) order. Read through `childrenIn`. */
  children: LayeredMap<TaskRun[]>;
  places: LayeredMap<RunPlace>;
  /** Keys of `children` whose lists this version made (others are shared with the version it was forked from). */
  mine: Set<string>;
  /** The `outputs` tree of the template variables, built on first use (context.ts). */
  outputs?: Record<string, unknown>;
  /** The runs of each branch of `outputs` not made yet (made on first read), which setRunOutputs adds to. */
  unplaced?: Map<string, TaskRun[]>;
  /**
   * Positions of the flowable runs going when a step on shared runs looked at them, of the runs before `seen`, for
   * `flow` (engine.ts flowableRuns): the next such step looks at the runs appended since only. Never changed once
   * a fork shares it (a step sets a new one).
   */
  flowables?: { flow: Flow; seen: number; positions: number[] };
}

const NONE: readonly TaskRun[] = Object.freeze([]);

const emptyIndex = (): RunIndex => ({ byId: LayeredMap.empty(), children: LayeredMap.empty(), places: LayeredMap.empty(), mine: new Set() });

export function indexRuns(runs: readonly TaskRun[]): RunIndex {
  const index = emptyIndex();
  for (let i = 0; i < runs.length; i++) addRun(index, runs[i]!, i);
  return index;
}

/** A list of children this version may change. */
function ownList(index: RunIndex, key: string): TaskRun[] {
  let list = index.children.get(key);
  if (!index.mine.has(key)) {
    list = list ? list.slice() : [];
    index.children.set(key, list);
    index.mine.add(key);
  }
  return list!;
}

/** Records a run appended to the run list at position `at` (the index of a step follows its record). */
export function addRun(index: RunIndex, run: TaskRun, at: number): void {
  index.byId.set(run.id, run);
  const siblings = ownList(index, run.parentTaskRunId ?? '');
  index.places.set(run.id, { list: at, sibling: siblings.length });
  siblings.push(run);
}

/** Puts `run` in the index in place of the run of the same id (a copy of it, or the original swapped back). */
export function replaceRun(index: RunIndex, run: TaskRun): void {
  const place = index.places.get(run.id);
  if (!place) throw new Error(`Task run '${run.id}' is not in the index`);
  index.byId.set(run.id, run);
  const key = run.parentTaskRunId ?? '';
  ownList(index, key)[place.sibling] = run;
  markReplaced(index, key, place.sibling);
}

/** A version of `index` a step may change without changing `index` (its outputs tree is built again on first use). */
export function forkIndex(index: RunIndex): RunIndex {
  const fork: RunIndex = {
    byId: index.byId.fork(), children: index.children.fork(), places: index.places.fork(), mine: new Set(), flowables: index.flowables,
  };
  forkTallies(index, fork);
  return fork;
}

/** Children of a run (or the root runs when `parentId` is undefined), in creation order. Do not modify. */
export function childrenIn(index: RunIndex, parentId: string | undefined): readonly TaskRun[] {
  return index.children.get(parentId ?? '') ?? NONE;
}

const snapshots = new WeakMap<Execution, { list: TaskRun[]; length: number; index: RunIndex }>();

/** The index a step handed to this record (adoptIndex) while the record's run list is still the one it indexed. */
export function knownIndex(exec: Execution): RunIndex | undefined {
  const known = snapshots.get(exec);
  return known && known.list === exec.taskRunList && known.length === exec.taskRunList.length ? known.index : undefined;
}

/**
 * The index of a record that no longer changes (a step's result, handed to launchers and run contexts): built once
 * and shared by every attempt launched from it. A record whose run list was replaced or grew gets a new index.
 */
export function snapshotIndex(exec: Execution): RunIndex {
  const known = knownIndex(exec);
  if (known) return known;
  const index = indexRuns(exec.taskRunList);
  snapshots.set(exec, { list: exec.taskRunList, length: exec.taskRunList.length, index });
  return index;
}

/** Makes `index` the snapshot index of `exec` (an engine step hands over the index it kept while making the record). */
export function adoptIndex(exec: Execution, index: RunIndex): void {
  snapshots.set(exec, { list: exec.taskRunList, length: exec.taskRunList.length, index });
}

/** A run of a record by id, without walking the list. */
export const runById = (exec: Execution, id: string): TaskRun | undefined => snapshotIndex(exec).byId.get(id);

/**
 * A changeable copy of an ended run shared with the record the step started from (frozen, see engine.ts copyRecord),
 * put in its place in the run list and the index; the run itself when it is not frozen. For the rare changes of an
 * ended run (it becomes RETRIED).
 */
export function ownRun(exec: Execution, index: RunIndex, run: TaskRun): TaskRun {
  if (!Object.isFrozen(run)) return run;
  const copy = copyData(run);
  const at = index.places.get(run.id)?.list;
  if (at !== undefined && exec.taskRunList[at] === run) exec.taskRunList[at] = copy;
  replaceRun(index, copy);
  return copy;
}
