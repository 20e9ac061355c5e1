// Indexes over the task runs of one execution (by id, children by parent in creation order, where each run sits), so
// that no lookup walks the whole run list. A record's index is handed on from step to step: the next step forks it
// (versioned maps: a fork copies nothing), so a step pays for the runs it touches, not for the record.
import { copyData } from './keyed.js';
import { forkTallies, markReplaced } from './loop-tally.js';
import type { Execution, Flow, TaskRun } from './types.js';

/** The few map operations the indexes are used through (a `Map` has them too). */
export interface RunLookup<V> {
  get(key: string): V | undefined;
}

/** What an older version holds for a key its newer version added. */
const ABSENT: unique symbol = Symbol('absent');

/** Versions an older version's read may walk through before it copies itself into a chain of its own. */
const WALK_MAX = 8;

/** The entries of one chain of versions: those of its newest version (`head`). */
interface Chain<V> { data: Map<string, V>; head: VersionedMap<V> }

/** Copies made of older versions of maps (a fork or a write of a version forked already, a long walk), for tests. */
export const versionCopies = { count: 0 };

/**
 * A map of which each version changes a few entries of many, without copying any of the others (Baker's persistent
 * arrays): the newest version of a chain holds the entries, in one `Map` its reads and writes go straight to. A fork
 * makes the new version the newest; the version forked keeps, for every key the new one then writes, the value it had
 * (`undo`), so an older version reads through the undo entries of the versions after it, then the entries. A fork and
 * a write cost O(1) whatever the size (a step forks the index of a 100,000-run record and changes 2,000 of its runs).
 *
 * An older version that is forked or written (the rare second try of a step, engine.ts stepMany), or whose read walks
 * past WALK_MAX newer versions (a record read long after it was stepped), first becomes the newest of a chain of its
 * own (O(n), once): a stand-in takes its place in the old chain for the versions older still. A version is referenced
 * weakly from the one forked from it: once nothing else holds it, its undo entries are no longer kept. Iteration is in
 * first-insertion order, as a `Map`'s. Keys are never deleted; `undefined` is never stored.
 *
 * Memory: an older version holds the versions after it, so a record held without being read (the run context of a
 * long attempt) keeps every later change of its chain (the replaced runs) until it is let go; the layered maps kept
 * that record's own view only. Not bounded yet: liveness through weak references is only known after a collection.
 */
export class VersionedMap<V> implements RunLookup<V> {
  private chain: Chain<V>;
  /** Set once forked: the version made from this one. */
  private newer?: VersionedMap<V>;
  /** Set once forked: this version's value of each key its newer version wrote (ABSENT: added by that version). */
  private undo?: Map<string, V | typeof ABSENT>;
  /** Set once forked: this version's number of keys (its keys are the first `count` of the chain's, never deleted). */
  private count = 0;
  /** The version this one was forked from, which records its values of the keys this one writes. */
  private older?: WeakRef<VersionedMap<V>>;

  private constructor(chain?: Chain<V>) {
    this.chain = chain ?? { data: new Map(), head: this };
  }

  static empty<V>(): VersionedMap<V> { return new VersionedMap<V>(); }

  get(key: string): V | undefined {
    if (this.chain.head === this) return this.chain.data.get(key);
    const v = this.olderValue(key);
    return v === ABSENT ? undefined : v;
  }

  has(key: string): boolean {
    if (this.chain.head === this) return this.chain.data.has(key);
    const v = this.olderValue(key);
    return v !== ABSENT && v !== undefined;
  }

  /** An older version's value of `key` (ABSENT or undefined: it has none), through the undo entries after it. */
  private olderValue(key: string): V | typeof ABSENT | undefined {
    let walked = 0;
    for (let v: VersionedMap<V> = this; v.chain.head !== v; v = v.newer!) {
      if (++walked > WALK_MAX) {
        this.detach();
        return this.chain.data.get(key);
      }
      const u = v.undo!.get(key);
      if (u !== undefined) return u;
    }
    return this.chain.data.get(key);
  }

  set(key: string, value: V): this {
    if (this.chain.head !== this) this.detach();
    const { data } = this.chain;
    const older = this.older?.deref();
    if (older && older.newer === this && !older.undo!.has(key)) older.undo!.set(key, data.has(key) ? data.get(key)! : ABSENT);
    data.set(key, value);
    return this;
  }

  get size(): number { return this.chain.head === this ? this.chain.data.size : this.count; }

  *keys(): IterableIterator<string> {
    if (this.chain.head === this) { yield* this.chain.data.keys(); return; }
    let n = this.count;
    for (const k of this.chain.data.keys()) { if (n-- === 0) return; yield k; }
  }

  *values(): IterableIterator<V> {
    for (const k of this.keys()) yield this.get(k)!;
  }

  /** A version of its own: later writes to either are not seen by the other. */
  fork(): VersionedMap<V> {
    if (this.chain.head !== this) this.detach();
    const next = new VersionedMap<V>(this.chain);
    this.undo = new Map();
    this.newer = next;
    this.count = this.chain.data.size;
    next.older = new WeakRef(this);
    this.chain.head = next;
    return next;
  }

  /**
   * Makes this older version the newest of a chain of its own. Its entries: the chain's, with the undo entries from
   * the newest version's back to its own applied over them (ABSENT keys were added after it: deleting them keeps the
   * order of the others). A stand-in with its undo entries takes its place in the old chain, for the version it was
   * forked from and its newer version (which records there from now on).
   */
  private detach(): void {
    versionCopies.count++;
    const data = new Map(this.chain.data);
    const undos: Map<string, V | typeof ABSENT>[] = [];
    for (let v: VersionedMap<V> = this; v.chain.head !== v; v = v.newer!) undos.push(v.undo!);
    for (let i = undos.length - 1; i >= 0; i--) {
      for (const [k, u] of undos[i]!) if (u === ABSENT) data.delete(k); else data.set(k, u);
    }
    const stand = new VersionedMap<V>(this.chain);
    stand.undo = this.undo;
    stand.newer = this.newer;
    stand.count = this.count;
    const older = this.older?.deref();
    if (older && older.newer === this) { older.newer = stand; stand.older = this.older; }
    if (this.newer) this.newer.older = new WeakRef(stand);
    this.chain = { data, head: this };
    this.newer = undefined;
    this.undo = undefined;
    this.older = undefined;
  }
}

/** Where a run sits: its position in the run list and among its siblings (both fixed once it is appended). */
export interface RunPlace { list: number; sibling: number }

export interface RunIndex {
  byId: VersionedMap<TaskRun>;
  /** Runs by `parentTaskRunId`, root runs under ''. Each list is in creation (= run list) order. Read through `childrenIn`. */
  children: VersionedMap<TaskRun[]>;
  places: VersionedMap<RunPlace>;
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

const emptyIndex = (): RunIndex => ({ byId: VersionedMap.empty(), children: VersionedMap.empty(), places: VersionedMap.empty(), mine: new Set() });

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
