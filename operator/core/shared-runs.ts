// Copy on first change for the task runs of a step that only takes task results (a fan-out's results): the written
// (frozen) runs still going are shared with the record the step was given instead of copied, and a run is copied when
// the step changes it (`ownShared`: the result's own run). A fan-out of 100,000 running children no longer costs
// 100,000 copies and comparisons per step, only the runs its results touch; the record's index is forked from the one
// the previous step handed on (run-index.ts), not built again. Anything else that would change a shared run meets a
// frozen object and throws a TypeError: `stepMany` then steps the record again the usual way (engine.ts).
import type { StepContext } from './engine-types.js';
import { indexFlow, isFlowableType } from './flow-index.js';
import { copyData } from './keyed.js';
import { forkIndex, indexRuns, knownIndex, replaceRun, type RunIndex } from './run-index.js';
import type { Execution, Flow, TaskRun } from './types.js';
import { isTerminal } from './types.js';

/** What a step that shares runs records: the positions of the shared runs it copied (on their first change). */
export interface SharedRuns { owned: number[] }

/**
 * The index a step of `execution` starts from: a fork of the one its previous step handed on (costs what that step
 * changed), else one built from the run list.
 */
export function stepIndex(execution: Execution): RunIndex {
  const known = knownIndex(execution);
  return known ? forkIndex(known, execution.taskRunList) : indexRuns(execution.taskRunList);
}

/** Ids of the flow's runnable tasks (not flowables: resolvers change those), by flow. */
const runnables = new WeakMap<Flow, ReadonlySet<string>>();
function runnableIds(flow: Flow): ReadonlySet<string> {
  let ids = runnables.get(flow);
  if (!ids) {
    ids = new Set([...indexFlow(flow).byId.values()].filter((t) => !isFlowableType(t.type)).map((t) => t.id));
    runnables.set(flow, ids);
  }
  return ids;
}

/**
 * The step's own record for `copyShared`: ended frozen runs and frozen runnable runs still going are shared, the others
 * (runs not written yet, flowables, which resolvers change, parents) are copied, in the run list and the index.
 * `copied`: positions of the copies. When the record carries the index its step left, only the runs that can be of
 * the others are looked at: those its step placed (a run not frozen is one of them, run-index.ts `placed`), the
 * flowables going it listed and the runs appended since (engine.ts flowableRuns); else every run.
 */
export function copyShared(execution: Execution, flow: Flow): { exec: Execution; copied: number[]; shared: SharedRuns; index: RunIndex } {
  const { taskRunList, ...header } = execution;
  const known = knownIndex(execution);
  const index = known ? forkIndex(known, taskRunList) : indexRuns(taskRunList);
  const runs = taskRunList.slice();
  const copied: number[] = [];
  const copyAt = (i: number): void => {
    const copy = copyData(runs[i]!, true);
    runs[i] = copy;
    replaceRun(index, copy);
    copied.push(i);
  };
  const runnable = runnableIds(flow);
  const look = (i: number): void => {
    const run = runs[i]!;
    if (run !== taskRunList[i]) return; // copied already
    if (!Object.isFrozen(run)) copyAt(i);
    else if (!isTerminal(run.state.current) && !runnable.has(run.taskId)) copyAt(i);
  };
  const flowables = known?.flowables?.flow === flow ? known.flowables : undefined;
  if (known && flowables) {
    for (const i of known.placed) look(i);
    for (const i of flowables.positions) look(i);
    for (let i = flowables.seen; i < runs.length; i++) look(i);
  } else {
    for (let i = 0; i < runs.length; i++) look(i);
  }
  // Parents still going: resolvers change them. Found through the index (one entry per parent), not the whole list.
  for (const parentId of index.children.keys()) {
    const at = parentId === '' ? undefined : index.places.get(parentId)?.list;
    if (at === undefined) continue;
    const run = runs[at]!;
    if (run === taskRunList[at] && Object.isFrozen(run) && !isTerminal(run.state.current)) copyAt(at);
  }
  return { exec: { ...copyData(header), taskRunList: runs }, copied, shared: { owned: [] }, index };
}

/** `run` made changeable: a copy put in place of a shared (frozen) run, in the run list and the index; else `run` itself. */
export function ownShared(ctx: StepContext, run: TaskRun): TaskRun {
  if (!ctx.shared || !Object.isFrozen(run)) return run;
  const at = ctx.runs.places.get(run.id)?.list;
  if (at === undefined || ctx.exec.taskRunList[at] !== run) return run;
  const copy = copyData(run, true);
  ctx.exec.taskRunList[at] = copy;
  replaceRun(ctx.runs, copy);
  ctx.shared.owned.push(at);
  return copy;
}
