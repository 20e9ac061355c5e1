// Copy on first change for the task runs of a step that only takes task results (a fan-out's results): the written
// (frozen) runs still going are shared with the record the step was given instead of copied, and a run is copied when
// the step changes it (`ownShared`: the result's own run). A fan-out of 100,000 running children no longer costs
// 100,000 copies and comparisons per step, only the runs its results touch. Anything else that would change a shared
// run meets a frozen object and throws a TypeError: `stepMany` then steps the record again the usual way (engine.ts).
import type { StepContext } from './engine-types.js';
import { copyData } from './keyed.js';
import type { RunIndex } from './run-index.js';
import type { Execution, TaskRun } from './types.js';
import { isTerminal } from './types.js';

/** The runs a step shares frozen: by id, their position in the run list and among their siblings; and those it owned since. */
export interface SharedRuns {
  at: Map<string, { list: number; sibling: number }>;
  /** Positions in the run list of the shared runs the step copied to change them. */
  owned: number[];
}

/**
 * The step's own record for `copyShared`: ended frozen runs and frozen leaf runs still going are shared, the others
 * (runs not written yet, flowable parents, which resolvers change) are copied; with the record's index built on the way.
 * `copied`: positions of the copies.
 */
export function copyShared(execution: Execution): { exec: Execution; copied: number[]; shared: SharedRuns; index: RunIndex } {
  const { taskRunList, ...header } = execution;
  const parents = new Set<string>();
  for (const r of taskRunList) if (r.parentTaskRunId !== undefined) parents.add(r.parentTaskRunId);
  const runs = new Array<TaskRun>(taskRunList.length);
  const copied: number[] = [];
  const shared: SharedRuns = { at: new Map(), owned: [] };
  const index: RunIndex = { byId: new Map(), children: new Map() };
  for (let i = 0; i < taskRunList.length; i++) {
    const run = taskRunList[i]!;
    const frozen = Object.isFrozen(run);
    const share = frozen && !isTerminal(run.state.current) && !parents.has(run.id);
    const mine = (frozen && isTerminal(run.state.current)) || share ? run : copyData(run, true);
    if (mine !== run) copied.push(i);
    runs[i] = mine;
    index.byId.set(mine.id, mine);
    const key = mine.parentTaskRunId ?? '';
    let siblings = index.children.get(key);
    if (!siblings) index.children.set(key, siblings = []);
    if (share) shared.at.set(run.id, { list: i, sibling: siblings.length });
    siblings.push(mine);
  }
  return { exec: { ...copyData(header), taskRunList: runs }, copied, shared, index };
}

/** `run` made changeable: a copy put in place of a shared run (in the run list and the index), else `run` itself. */
export function ownShared(ctx: StepContext, run: TaskRun): TaskRun {
  const at = ctx.shared?.at.get(run.id);
  if (!at || ctx.exec.taskRunList[at.list] !== run) return run;
  const copy = copyData(run, true);
  ctx.exec.taskRunList[at.list] = copy;
  ctx.runs.byId.set(copy.id, copy);
  const siblings = ctx.runs.children.get(copy.parentTaskRunId ?? '');
  if (siblings?.[at.sibling] === run) siblings[at.sibling] = copy;
  ctx.shared!.at.delete(run.id);
  ctx.shared!.owned.push(at.list);
  return copy;
}
