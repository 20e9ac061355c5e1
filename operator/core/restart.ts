// Restart of failed work inside the same execution (manual restart, flow-level RETRY_FAILED_TASK): failed runs get a
// new attempt, their failed parents run again, and error/finally handlers (and the flow's afterExecution and listener
// runs) are cleared so they can run again.
import type { StepContext } from './engine-types.js';
import { FLOWABLE, FOR_EACH_ITEM_BATCH } from './flow-index.js';
import { retryFailedBatches } from './foreach-item.js';
import { freshIterations } from './loops.js';
import { indexRuns } from './run-index.js';
import { nextAttempt, taskOf } from './runs.js';
import type { TaskRun } from './types.js';

/**
 * A new attempt of a failed flowable run (restart, or the run's own `retry`): what its type keeps and what starts
 * afresh (ForEachItem `_items`: only its failed batches, or all with NEW_EXECUTION; LoopUntil: a fresh set of
 * iterations after a maximum), then the attempt.
 */
export function restartFlowable(ctx: StepContext, run: TaskRun, cause: 'restart' | 'retry'): void {
  const type = taskOf(ctx, run).type;
  if (type === FOR_EACH_ITEM_BATCH) retryFailedBatches(ctx, run, cause);
  if (type === FLOWABLE.LoopUntil) freshIterations(ctx, run);
  nextAttempt(ctx, run);
}

/** `cause`: a manual restart, or a flow-level RETRY_FAILED_TASK retry. */
export function restartFailed(ctx: StepContext, cause: 'restart' | 'retry'): void {
  const { exec } = ctx;
  const drop = new Set<string>();
  for (const run of exec.taskRunList) {
    const parentDropped = run.parentTaskRunId !== undefined && drop.has(run.parentTaskRunId);
    if ((run.branch !== undefined && run.branch !== 'tasks') || parentDropped) drop.add(run.id);
  }
  exec.taskRunList = exec.taskRunList.filter((r) => !drop.has(r.id));
  delete exec.ending;
  ctx.runs = indexRuns(exec.taskRunList);
  const failed = exec.taskRunList.filter((r) => r.state.current === 'FAILED' || r.state.current === 'KILLED');
  // nextAttempt starts a runnable's new attempt as is; a flowable's type decides what it keeps.
  for (const run of failed) restartFlowable(ctx, run, cause);
}
