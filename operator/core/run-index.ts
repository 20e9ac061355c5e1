// Indexes over the task runs of one execution (by id, children by parent in creation order), so that no lookup walks
// the whole run list: built once per record snapshot (memoized by the record object) or maintained run by run in a step.
import { copyData } from './keyed.js';
import type { Execution, TaskRun } from './types.js';

export interface RunIndex {
  byId: Map<string, TaskRun>;
  /** Runs by `parentTaskRunId`, root runs under ''. Each list is in creation (= run list) order. */
  children: Map<string, TaskRun[]>;
  /** The `outputs` tree of the template variables, built on first use (context.ts). */
  outputs?: Record<string, unknown>;
}

const NONE: readonly TaskRun[] = Object.freeze([]);

export function indexRuns(runs: readonly TaskRun[]): RunIndex {
  const index: RunIndex = { byId: new Map(), children: new Map() };
  for (const run of runs) addRun(index, run);
  return index;
}

/** Records a run appended to the run list (the index of a step follows its record). */
export function addRun(index: RunIndex, run: TaskRun): void {
  index.byId.set(run.id, run);
  const key = run.parentTaskRunId ?? '';
  const list = index.children.get(key);
  if (list) list.push(run); else index.children.set(key, [run]);
}

/** Children of a run (or the root runs when `parentId` is undefined), in creation order. Do not modify. */
export function childrenIn(index: RunIndex, parentId: string | undefined): readonly TaskRun[] {
  return index.children.get(parentId ?? '') ?? NONE;
}

const snapshots = new WeakMap<Execution, { list: TaskRun[]; length: number; index: RunIndex }>();

/**
 * The index of a record that no longer changes (a step's result, handed to launchers and run contexts): built once
 * and shared by every attempt launched from it. A record whose run list was replaced or grew gets a new index.
 */
export function snapshotIndex(exec: Execution): RunIndex {
  const known = snapshots.get(exec);
  if (known && known.list === exec.taskRunList && known.length === exec.taskRunList.length) return known.index;
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
 * ended run (it becomes RETRIED). Walks the list: not for hot paths.
 */
export function ownRun(exec: Execution, index: RunIndex, run: TaskRun): TaskRun {
  if (!Object.isFrozen(run)) return run;
  const copy = copyData(run);
  const at = exec.taskRunList.indexOf(run);
  if (at >= 0) exec.taskRunList[at] = copy;
  index.byId.set(run.id, copy);
  const siblings = index.children.get(run.parentTaskRunId ?? '');
  const i = siblings?.indexOf(run) ?? -1;
  if (i >= 0) siblings![i] = copy;
  return copy;
}
