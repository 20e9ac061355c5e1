// Subflow and ForEachItem: child executions requested from the controller (deterministic ids), waited for when asked,
// and their outcome transmitted to the parent task run.
import { depthOverflow } from './budget.js';
import { derivedId } from './ids.js';
import type { StepContext } from './engine-types.js';
import { FOR_EACH_ITEM_BATCH, FOR_EACH_ITEM_SPLIT } from './flow-index.js';
import type { Resolution } from './flowables.js';
import { mergeLabels } from './execution.js';
import { childrenOf, variablesFor } from './runs.js';
import { newState, transition } from './state.js';
import type { Label, Task, TaskRun, TaskRunState } from './types.js';
import { isTerminal } from './types.js';

function labelsOf(v: unknown): Label[] {
  if (!v) return [];
  if (Array.isArray(v)) return (v as Label[]).map((l) => ({ key: String(l.key), value: String(l.value) }));
  return Object.entries(v as Record<string, unknown>).map(([key, value]) => ({ key, value: String(value) }));
}

const flag = (v: unknown, dflt: boolean) => (v === undefined || v === null ? dflt : v === true || v === 'true');

export function subflowSettings(task: Task): { wait: boolean; transmitFailed: boolean } {
  const batch = task.type === FOR_EACH_ITEM_BATCH;
  return { wait: flag(task.wait, batch), transmitFailed: flag(task.transmitFailed, batch) };
}

export function subflowResolver(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const fs = (run.flowableState ??= {});
  const { wait, transmitFailed } = subflowSettings(task);
  if (typeof fs.error === 'string') return { create: [], state: 'FAILED', error: fs.error };
  if (fs.ended) {
    const childState = String(fs.childState);
    const outputs = { executionId: run.subflowExecutionId, state: childState, outputs: fs.childOutputs ?? {} };
    const bad = childState === 'FAILED' || childState === 'KILLED' || childState === 'CANCELLED';
    if (bad && transmitFailed) return { create: [], state: 'FAILED', outputs, error: `Subflow execution '${run.subflowExecutionId}' ended ${childState}` };
    if (childState === 'WARNING' && transmitFailed) return { create: [], state: 'WARNING', outputs };
    return { create: [], state: 'SUCCESS', outputs };
  }
  if (!fs.requested) {
    const vars = variablesFor(ctx, run, task);
    const namespace = ctx.deps.renderer.render(String(task.namespace), vars);
    const flowId = ctx.deps.renderer.render(String(task.flowId), vars);
    const tooDeep = depthOverflow(ctx, run, task, `${namespace}.${flowId}`);
    if (tooDeep) return { create: [], state: 'FAILED', error: tooDeep.message };
    const inputs = (ctx.deps.renderer.renderTyped(task.inputs ?? {}, vars) ?? {}) as Record<string, unknown>;
    const own = labelsOf(ctx.deps.renderer.renderValue(task.labels, vars));
    const labels = flag(task.inheritLabels, false) ? mergeLabels(ctx.exec.labels, own) : own;
    run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
    const childId = derivedId(ctx.exec.id, run.id, String(run.attempts.length));
    run.subflowExecutionId = childId;
    fs.requested = true;
    delete fs.created;
    const request = {
      taskRunId: run.id, executionId: childId,
      namespace, flowId,
      ...(task.revision !== undefined ? { revision: Number(task.revision) } : {}),
      inputs, labels, wait,
    };
    fs.request = request; // kept so that a restarted controller can create the child if the crash came first
    ctx.actions.push({ type: 'create-subflow', request });
    return { create: [] };
  }
  if (fs.created && !wait) return { create: [], state: 'SUCCESS', outputs: { executionId: run.subflowExecutionId } };
  return { create: [] };
}

/** Ends the live attempt of a subflow-like run along with the run (attempt states mirror the run). */
export function endSubflowAttempt(ctx: StepContext, run: TaskRun): void {
  const att = run.attempts[run.attempts.length - 1];
  if (att && !isTerminal(att.state.current) && isTerminal(run.state.current)) transition(att.state, run.state.current, ctx.deps.now);
}

export function forEachItemResolver(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const runs = childrenOf(ctx, run.id);
  const splitId = `${task.id}_split`;
  const split = runs.find((r) => r.taskId === splitId);
  if (!split) {
    // Refused before anything is split when no batch could start (names as written: they are rendered per batch).
    const tooDeep = depthOverflow(ctx, run, task, `${String(task.namespace)}.${String(task.flowId)}`);
    if (tooDeep) return { create: [], state: 'FAILED', error: tooDeep.message };
    return { create: [{ task: { ...task, id: splitId, type: FOR_EACH_ITEM_SPLIT }, branch: 'tasks' }] };
  }
  if (!isTerminal(split.state.current)) return { create: [] };
  if (split.state.current !== 'SUCCESS' && split.state.current !== 'WARNING') {
    return { create: [], state: 'FAILED', error: `Splitting items failed: ${split.error ?? split.state.current}` };
  }
  const uris = ((split.outputs?.batches ?? []) as string[]);
  const batches = runs.filter((r) => r.taskId === `${task.id}_items`);
  const have = new Set(batches.map((b) => b.iteration));
  const create = uris.flatMap((uri, i) => (have.has(i) ? [] : [{
    task: { ...task, id: `${task.id}_items`, type: FOR_EACH_ITEM_BATCH }, branch: 'tasks' as const,
    value: String(i + 1), iteration: i, items: uri,
  }]));
  if (create.length || batches.some((b) => !isTerminal(b.state.current))) return { create };
  const counts: Record<string, number> = {};
  for (const b of batches) {
    const s = String((b.flowableState?.childState as string | undefined) ?? b.state.current);
    counts[s] = (counts[s] ?? 0) + 1;
  }
  const outputs = { numberOfBatches: uris.length, iterations: counts };
  const states = batches.map((b) => b.state.current as TaskRunState);
  const state = states.includes('FAILED') || states.includes('KILLED') ? 'FAILED' : states.includes('WARNING') ? 'WARNING' : 'SUCCESS';
  return { create: [], state, outputs, ...(state === 'FAILED' ? { error: 'At least one subflow execution failed' } : {}) };
}
