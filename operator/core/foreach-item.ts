// ForEachItem as Kestra records it: a sequence of three task runs, `<id>_split` (batch files), `<id>_items` (one
// subflow execution per batch, its `iterations` counted by state as they change) and `<id>_merge` (their outputs).
import { depthOverflow, taskRunOverflow } from './budget.js';
import type { StepContext } from './engine-types.js';
import { forEachItemParts } from './flow-index.js';
import type { Resolution } from './flowables.js';
import { sequentialGroup } from './groups.js';
import { derivedId } from './ids.js';
import { childrenOf, taskOf, variablesFor } from './runs.js';
import { newState } from './state.js';
import { type ChildSlot, childFailure, childRequest, settingWarnings, subflowSettings, transmittedState } from './subflow.js';
import type { Task, TaskRun, TaskRunState } from './types.js';

/** The file of the split run that lists its batch files, one URI a line (Kestra's `splits` output). */
export const SPLITS_FILE = 'splits.txt';
/** Name of batch `i` (0-based) beside the splits file. */
export const batchFileName = (i: number): string => `batch-${i + 1}.txt`;
/** URI of batch `i` from the split run's `splits` URI (both live in the split run's folder). */
export const batchUri = (splits: string, i: number): string => `${splits.slice(0, splits.lastIndexOf('/') + 1)}${batchFileName(i)}`;

export function forEachItemResolver(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const runs = childrenOf(ctx, run.id);
  if (runs.length === 0) {
    // Refused before anything is split when no batch could start (names as written: they are rendered per batch).
    const tooDeep = depthOverflow(ctx, run, task, `${String(task.namespace)}.${String(task.flowId)}`);
    if (tooDeep) return { create: [], state: 'FAILED', error: tooDeep.message };
  }
  const { split, items, merge } = forEachItemParts(task);
  return sequentialGroup([split, items, merge], runs, { branch: 'tasks' });
}

const isBatchDone = (slot: ChildSlot, wait: boolean): boolean => slot.ended === true || slot.error !== undefined || (!wait && slot.created === true);

/**
 * Counts of the batches by state, as Kestra keeps them on the `_items` run: CREATED (asked for, not started yet) and
 * RUNNING always present while waiting, then each ended batch under the state it gave (SUCCESS without transmitFailed).
 */
export function iterationCounts(batches: readonly ChildSlot[], wait: boolean, transmitFailed: boolean): Record<string, number> {
  const counts: Record<string, number> = wait ? { CREATED: 0, RUNNING: 0 } : { RUNNING: 0 };
  for (const slot of batches) {
    let key: string;
    if (slot.error !== undefined) key = 'FAILED';
    else if (slot.ended) key = transmittedState(slot, transmitFailed);
    else if (!wait) key = slot.created ? 'SUCCESS' : 'RUNNING';
    else key = slot.created ? 'RUNNING' : 'CREATED';
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function splitOf(ctx: StepContext, run: TaskRun, task: Task): TaskRun | undefined {
  const splitId = `${task.id.slice(0, -'_items'.length)}_split`;
  return childrenOf(ctx, run.parentTaskRunId).find((r) => r.taskId === splitId);
}

/** The `_items` run: one child execution per batch, all requested at once (as Kestra does), then waited for. */
export function forEachBatchResolver(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const fs = (run.flowableState ??= {});
  const { wait, transmitFailed } = subflowSettings(task);
  if (!Array.isArray(fs.batches)) {
    const split = splitOf(ctx, run, task);
    const splits = split?.outputs?.splits;
    const n = Number(split?.outputs?.numberOfBatches ?? 0);
    if (!Number.isSafeInteger(n) || n < 0 || (n > 0 && typeof splits !== 'string')) {
      return { create: [], state: 'FAILED', error: `The split run of '${run.taskId}' reported no batches` };
    }
    // Each batch is a child execution this execution records and waits on: they count as task runs.
    const over = taskRunOverflow(ctx, n, () => `ForEachItem '${run.taskId}' cannot start ${n} subflow executions (one per batch; each counts as a task run)`);
    if (over) return { create: [], state: 'FAILED', error: over.message };
    run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
    fs.batches = Array.from({ length: n }, () => ({}));
    if (typeof splits === 'string') fs.splits = splits;
    if (n === 0) return { create: [], state: 'SUCCESS' }; // Kestra: no subflow, no outputs
    settingWarnings(ctx, run, task);
  }
  const batches = fs.batches as ChildSlot[];
  let base: Record<string, unknown> | undefined;
  batches.forEach((slot, i) => {
    if (slot.requested) return;
    base ??= variablesFor(ctx, run, task);
    const id = derivedId(ctx.exec.id, run.id, String(i), String(slot.attempt ?? 1));
    const request = childRequest(ctx, run, task, id, { taskrun: { items: batchUri(String(fs.splits), i), iteration: i }, iteration: i, base });
    Object.assign(slot, { executionId: id, requested: true, request });
    ctx.actions.push({ type: 'create-subflow', request });
  });
  const outputs = { numberOfBatches: batches.length, iterations: iterationCounts(batches, wait, transmitFailed) };
  if (!batches.every((slot) => isBatchDone(slot, wait))) return { create: [], outputs };
  const bad = batches.filter((slot) => slot.error !== undefined || (slot.ended && ['FAILED', 'KILLED'].includes(transmittedState(slot, transmitFailed))));
  if (bad.length) {
    const first = bad[0]!;
    const why = first.error ?? childFailure(first, String(first.executionId));
    return { create: [], state: 'FAILED', outputs, error: `${bad.length} of ${batches.length} subflow executions failed; first: ${why}` };
  }
  const warned = batches.some((slot) => slot.ended && transmittedState(slot, transmitFailed) === 'WARNING');
  return { create: [], state: warned ? 'WARNING' : 'SUCCESS', outputs };
}

/**
 * A retry, or a restart with Kestra's default restartBehavior RETRY_FAILED, reruns the failed batches only: each gets a
 * new child; the others are kept. A restart with restartBehavior NEW_EXECUTION gives every batch a new child.
 */
export function retryFailedBatches(ctx: StepContext, run: TaskRun, cause: 'restart' | 'retry'): void {
  const batches = run.flowableState?.batches;
  if (!Array.isArray(batches)) return;
  const task = taskOf(ctx, run);
  const { transmitFailed } = subflowSettings(task);
  const every = cause === 'restart' && task.restartBehavior === 'NEW_EXECUTION';
  for (const slot of batches as ChildSlot[]) {
    const failed = slot.error !== undefined || (slot.ended && ['FAILED', 'KILLED'].includes(transmittedState(slot, transmitFailed)));
    if (!failed && !every) continue;
    const attempt = (slot.attempt ?? 1) + 1;
    for (const k of Object.keys(slot)) delete (slot as Record<string, unknown>)[k];
    slot.attempt = attempt;
  }
  run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
}
