// Restart of failed work inside the same execution (manual restart, flow-level RETRY_FAILED_TASK): failed runs get a
// new attempt, their failed parents run again, and error/finally handlers are cleared so they can run again.
import type { StepContext } from './engine-types.js';
import { FOR_EACH_ITEM_BATCH } from './flow-index.js';
import { retryFailedBatches } from './foreach-item.js';
import { indexRuns } from './run-index.js';
import { nextAttempt, taskOf } from './runs.js';

export function restartFailed(ctx: StepContext): void {
  const { exec } = ctx;
  const drop = new Set<string>();
  for (const run of exec.taskRunList) {
    const parentDropped = run.parentTaskRunId !== undefined && drop.has(run.parentTaskRunId);
    if (run.branch === 'errors' || run.branch === 'finally' || parentDropped) drop.add(run.id);
  }
  exec.taskRunList = exec.taskRunList.filter((r) => !drop.has(r.id));
  ctx.runs = indexRuns(exec.taskRunList);
  const failed = exec.taskRunList.filter((r) => r.state.current === 'FAILED' || r.state.current === 'KILLED');
  for (const run of failed) {
    // A ForEachItem `_items` run keeps its batches that ended well: only the failed ones get a new child (Kestra's RETRY_FAILED).
    if (taskOf(ctx, run).type === FOR_EACH_ITEM_BATCH) retryFailedBatches(ctx, run);
    nextAttempt(ctx, run);
  }
}
