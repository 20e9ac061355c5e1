// Restart of failed work inside the same execution (manual restart, flow-level RETRY_FAILED_TASK): failed runs get a
// new attempt, their failed parents run again, and error/finally handlers are cleared so they can run again.
import type { StepContext } from './engine-types.js';
import { FOR_EACH_ITEM_BATCH, isFlowableType } from './flow-index.js';
import { resetFailedBatches } from './foreach-item.js';
import { subflowSettings } from './subflow.js';
import { indexRuns } from './run-index.js';
import { startAttempt, taskOf } from './runs.js';
import { newState, transition } from './state.js';
import type { TaskRun, TaskRunState } from './types.js';

export function restartFailed(ctx: StepContext): void {
  const { exec, deps } = ctx;
  const drop = new Set<string>();
  for (const run of exec.taskRunList) {
    const parentDropped = run.parentTaskRunId !== undefined && drop.has(run.parentTaskRunId);
    if (run.branch === 'errors' || run.branch === 'finally' || parentDropped) drop.add(run.id);
  }
  exec.taskRunList = exec.taskRunList.filter((r) => !drop.has(r.id));
  ctx.runs = indexRuns(exec.taskRunList);
  const failed = exec.taskRunList.filter((r) => r.state.current === 'FAILED' || r.state.current === 'KILLED');
  for (const run of failed) reset(ctx, run);
}

function reset(ctx: StepContext, run: TaskRun): void {
  const task = taskOf(ctx, run);
  delete run.error;
  if (!isFlowableType(task.type)) { startAttempt(ctx, run); return; }
  const fs = run.flowableState;
  if (task.type === FOR_EACH_ITEM_BATCH) {
    resetFailedBatches(run, subflowSettings(task).transmitFailed);
    if (Array.isArray(fs?.batches)) run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
  }
  if (fs) for (const k of ['status', 'onExpiry', 'requested', 'created', 'ended', 'childState', 'childOutputs', 'error', 'refused']) delete fs[k];
  delete run.resumeDate;
  transition(run.state, 'RUNNING', ctx.deps.now);
}
