// Indexes over the task runs of one execution (by id, children by parent in creation order, where each run sits), so
// that no lookup walks the whole run list. A record's index is handed on from step to step: the next step forks it
// (versioned maps: a fork copies nothing), so a step pays for the runs it touches, not for the record.
import { copyData } from './keyed.js';
import { forkTallies, markReplaced } from './loop-tally.js';
import type { Execution, Flow, TaskRun } from './types.js';
import { isTerminal } from './types.js';

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
  /** Children of `errors`/`finally` branches (a run's branch is set when it is created) by parent key, when any. */
  branched: VersionedMap<number>;
  /** Keys of `children` whose lists this version made (others are shared with the version it was forked from). */
  mine: Set<string>;
  /** The `outputs` tree of the template variables, built on first use (context.ts). */
  outputs?: Record<string, unknown>;
  /**
   * Where the runs with outputs are, by task id (context.ts): built by one walk of a record's runs, then handed on from
   * fork to fork and added to as runs get outputs, so that a step's `outputs` tree costs its task ids, not its runs.
   */
  withOutputs?: OutputsLog;
  /**
   * Positions of the flowable runs going when a step on shared runs looked at them, of the runs before `seen`, for
   * `flow` (engine.ts flowableRuns): the next such step looks at the runs appended since only. Never changed once
   * a fork shares it (a step sets a new one).
   */
  flowables?: { flow: Flow; seen: number; positions: number[] };
  /**
   * Positions of the run list at which this version put a run (appended, or replaced by a copy or an original; a
   * position may repeat): the only places where its record's list differs from `base.list`. A run that is not frozen
   * sits at one of them (every run is put in a list through addRun or replaceRun, and a step copies the runs of its
   * given record that are not frozen), which is what lets a step look at what the previous one changed only.
   */
  placed: number[];
  /** The record this version was forked from: its run list (empty for a fresh build) and what was counted of it. */
  base: BaseCounts;
}

/**
 * Positions of the runs of one task id that have outputs (a position may repeat; any order), and the smallest. The
 * array is shared with the versions forked from the one that made it: each reads its first `length` entries, and a
 * version appends in place only while no other did (else it copies its part first).
 */
export interface OutputsAt { at: number[]; length: number; first: number }

/** Runs with outputs by task id (OutputsAt), in the order task ids first got one; a fork copies the map, not the lists. */
export type OutputsLog = Map<string, OutputsAt>;

/** Records that the run at `position` (of `taskId`) now has outputs, in the index's log when it keeps one. */
export function logOutputs(index: RunIndex, taskId: string, position: number): void {
  const log = index.withOutputs;
  if (!log) return;
  const e = log.get(taskId);
  if (!e) { log.set(taskId, { at: [position], length: 1, first: position }); return; }
  const at = e.length === e.at.length ? e.at : e.at.slice(0, e.length);
  at.push(position);
  log.set(taskId, { at, length: e.length + 1, first: Math.min(e.first, position) });
}

/** What a fork records of the run list it was forked from (a list no step changes any more). */
interface BaseCounts {
  list: readonly TaskRun[];
  /** Runs of `list` going (not ended). */
  going: number;
  /** Positions of those runs, ascending, when there are few of them (at most GOING_LISTED); else undefined. */
  goingAt: readonly number[] | undefined;
}

/** Runs going up to which a fork lists where they are (`BaseCounts.goingAt`): a step then finds them without a walk. */
const GOING_LISTED = 256;

const NONE: readonly TaskRun[] = Object.freeze([]);

const EMPTY_BASE: BaseCounts = { list: NONE, going: 0, goingAt: Object.freeze([]) };

const emptyIndex = (): RunIndex => ({
  byId: VersionedMap.empty(), children: VersionedMap.empty(), places: VersionedMap.empty(), branched: VersionedMap.empty(), mine: new Set(),
  placed: [], base: EMPTY_BASE,
});

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
  index.placed.push(at);
  if (run.branch) { const key = run.parentTaskRunId ?? ''; index.branched.set(key, (index.branched.get(key) ?? 0) + 1); }
}

/** Puts `run` in the index in place of the run of the same id (a copy of it, or the original swapped back). */
export function replaceRun(index: RunIndex, run: TaskRun): void {
  const place = index.places.get(run.id);
  if (!place) throw new Error(`Task run '${run.id}' is not in the index`);
  index.byId.set(run.id, run);
  const key = run.parentTaskRunId ?? '';
  ownList(index, key)[place.sibling] = run;
  markReplaced(index, key, place.sibling);
  index.placed.push(place.list);
}

/**
 * A version of `index` a step may change without changing `index` (its outputs tree is built again on first use).
 * `list`: the run list of the record `index` is the index of, which no step changes any more.
 */
export function forkIndex(index: RunIndex, list: readonly TaskRun[]): RunIndex {
  const fork: RunIndex = {
    byId: index.byId.fork(), children: index.children.fork(), places: index.places.fork(), branched: index.branched.fork(), mine: new Set(),
    flowables: index.flowables,
    placed: [], base: countsOf(index, list), ...(index.withOutputs ? { withOutputs: new Map(index.withOutputs) } : {}),
  };
  forkTallies(index, fork);
  return fork;
}

const going = (run: TaskRun | undefined): boolean => run !== undefined && !isTerminal(run.state.current);

/** The set of a version's placed positions, kept up as `placed` grows (it only grows): read several times a step. */
const placedSets = new WeakMap<RunIndex, { set: Set<number>; covered: number }>();

/** The positions a version placed runs at, each once. Do not modify. */
export function placedOnce(index: RunIndex): ReadonlySet<number> {
  let known = placedSets.get(index);
  if (!known) placedSets.set(index, known = { set: new Set(), covered: 0 });
  const { placed } = index;
  for (; known.covered < placed.length; known.covered++) known.set.add(placed[known.covered]!);
  return known.set;
}

/**
 * The counts of `list` (the run list of the record `index` indexes): those of its base, corrected at the positions the
 * version placed runs at (elsewhere the runs are the base's very objects, which no longer change): O(what it changed).
 */
function countsOf(index: RunIndex, list: readonly TaskRun[]): BaseCounts {
  const { base } = index;
  const placed = placedOnce(index);
  let count = base.going;
  for (const at of placed) count += Number(going(list[at])) - Number(going(base.list[at]));
  let goingAt: number[] | undefined;
  if (base.goingAt && count <= GOING_LISTED) {
    goingAt = base.goingAt.filter((at) => !placed.has(at));
    for (const at of placed) if (going(list[at])) goingAt.push(at);
    goingAt.sort((a, b) => a - b);
  } else if (count <= GOING_LISTED / 2) {
    // Few enough now to list (the first time since they were many): one walk, then kept up fork after fork.
    goingAt = [];
    for (let at = 0; at < list.length; at++) if (going(list[at])) goingAt.push(at);
  }
  return { list, going: count, goingAt };
}

/** Runs of the record's run list `list` going (not ended), from the index's counts: O(runs the version placed). */
export function goingCount(index: RunIndex, list: readonly TaskRun[]): number {
  return countsOf(index, list).going;
}

function frozenGoingOf(index: RunIndex, list: readonly TaskRun[], counts: BaseCounts): number {
  let unfrozen = 0;
  for (const at of placedOnce(index)) if (going(list[at]) && !Object.isFrozen(list[at])) unfrozen++;
  return counts.going - unfrozen;
}

/** How many frozen runs of `list` (the run list of the record `index` indexes) are going: O(runs the version placed). */
export function frozenGoingCount(index: RunIndex, list: readonly TaskRun[]): number {
  return frozenGoingOf(index, list, countsOf(index, list));
}

/**
 * Positions of the frozen runs going in `list` (the run list of the record `index` indexes), ascending, or undefined
 * when there are more than `max`. Runs that are not frozen sit at positions the version placed (see `placed`), so the
 * count is the going runs less the placed ones not frozen; where they are is known without a walk while few runs go.
 */
export function frozenGoingIn(index: RunIndex, list: readonly TaskRun[], max: number): number[] | undefined {
  const counts = countsOf(index, list);
  if (frozenGoingOf(index, list, counts) > max) return undefined;
  const out: number[] = [];
  if (counts.goingAt) {
    for (const at of counts.goingAt) if (Object.isFrozen(list[at])) out.push(at);
    return out;
  }
  for (let at = 0; at < list.length; at++) if (going(list[at]) && Object.isFrozen(list[at])) out.push(at);
  return out;
}

/**
 * Positions at which the run list of `exec` differs from that of `since` (ascending), when `exec` was stepped from
 * `since` (its index a fork of the one of `since`, every step since in place); undefined when that is not known.
 */
export function changedSince(exec: Execution, since: Execution): number[] | undefined {
  const index = knownIndex(exec);
  if (!index || index.base.list !== since.taskRunList) return undefined;
  return [...placedOnce(index)].sort((a, b) => a - b);
}

/** Children of a run (or the root runs when `parentId` is undefined), in creation order. Do not modify. */
export function childrenIn(index: RunIndex, parentId: string | undefined): readonly TaskRun[] {
  return index.children.get(parentId ?? '') ?? NONE;
}

/** Children of a run (or the root runs) on its main list (not `errors`/`finally`), in creation order, without a walk when none is on a branch. */
export function mainChildrenIn(index: RunIndex, parentId: string | undefined): readonly TaskRun[] {
  const runs = childrenIn(index, parentId);
  return index.branched.get(parentId ?? '') ? runs.filter((r) => !r.branch) : runs;
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
