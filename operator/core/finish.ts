// The root of an execution: its task list with `errors` and `finally`, and how the execution ends
// (flow outputs, flow-level retry with RETRY_FAILED_TASK or CREATE_NEW_EXECUTION, warningOnRetry).
import { taskRunOverflow } from './budget.js';
import type { StepContext } from './engine-types.js';
import { depthOf, metadataOf, newExecution } from './execution.js';
import { enabled } from './flow-index.js';
import { dict } from './keyed.js';
import { container, type Final, sequentialGroup } from './groups.js';
import { nextRetryDelay } from './retry.js';
import { childrenOf, createRun, log, variablesFor } from './runs.js';
import { transition } from './state.js';
import { coerceInputValue } from '../model/index.js';
import type { Input } from './types.js';

/** Flow outputs are converted to their declared type (an INT output rendered as "42" becomes 42). */
function typedOutput(id: string, type: string, value: unknown): unknown {
  if (value === null || value === undefined || type === 'STRING' || type === 'FILE' || type === 'SECRET') return value;
  const r = coerceInputValue({ id, type } as Input, value);
  if (!r.ok) throw new Error(`output '${id}': ${r.message}`);
  return r.value;
}

export function resolveRoot(ctx: StepContext): { created: boolean; state?: Final } {
  const runs = childrenOf(ctx, undefined);
  const main = sequentialGroup(enabled(ctx.flow.tasks), runs.filter((r) => !r.branch), { branch: 'tasks' });
  const res = container(main, runs, enabled(ctx.flow.errors), enabled(ctx.flow.finally));
  const over = res.create.length ? taskRunOverflow(ctx, res.create.length, () => `task '${res.create[0]!.task.id}' cannot start`) : undefined;
  if (over) {
    // Root runs are sequential: every earlier one has ended, so the execution can end here.
    ctx.exec.error = over.message;
    log(ctx, 'ERROR', over.message);
    return { created: false, state: 'FAILED' };
  }
  for (const spec of res.create) createRun(ctx, spec, undefined);
  return { created: res.create.length > 0, ...(res.state ? { state: res.state } : {}) };
}

export function finishRoot(ctx: StepContext, final: Final): void {
  const { exec, flow, deps } = ctx;
  let state: Final = final;
  if (state === 'FAILED' && flow.retry && scheduleFlowRetry(ctx)) return;
  const legacy = flow.outputs?.length ? undefined : exec.legacyOutputs;
  if ((state === 'SUCCESS' || state === 'WARNING') && (flow.outputs?.length || legacy)) {
    try {
      const vars = variablesFor(ctx, undefined);
      const outputs = dict();
      for (const o of flow.outputs ?? []) outputs[o.id] = typedOutput(o.id, o.type, deps.renderer.renderTyped(o.value, vars));
      // Kestra's deprecated Subflow `outputs`: untyped values, rendered here as the child's own outputs would be.
      for (const [id, value] of Object.entries(legacy ?? {})) outputs[id] = deps.renderer.renderTyped(value, vars);
      exec.outputs = outputs;
    } catch (err) {
      exec.error = `Failed to render flow outputs: ${(err as Error).message}`;
      log(ctx, 'ERROR', exec.error);
      state = 'FAILED';
    }
  }
  if (flow.outputs?.length && exec.legacyOutputs) {
    log(ctx, 'WARN', `The parent's Subflow task gave \`outputs\` (deprecated); flow ${flow.namespace}.${flow.id} declares its own outputs, which are used instead`);
  }
  if (state === 'SUCCESS' && metadataOf(exec).attemptNumber > 1 && flow.retry?.warningOnRetry) state = 'WARNING';
  transition(exec.state, state, deps.now);
  ctx.actions.push({ type: 'ended', state });
}

/** Returns true when a flow-level retry takes over the failed execution. */
function scheduleFlowRetry(ctx: StepContext): boolean {
  const { exec, flow, deps } = ctx;
  const policy = flow.retry!;
  // As Kestra: attempts are counted across the retry chain (metadata.attemptNumber) and maxDuration from the creation
  // of its first execution (metadata.originalCreatedDate), so CREATE_NEW_EXECUTION cannot restart the clock.
  const meta = metadataOf(exec);
  const attempt = meta.attemptNumber;
  const elapsed = deps.now.getTime() - Date.parse(meta.originalCreatedDate);
  const delay = nextRetryDelay(policy, attempt, elapsed, deps.random());
  if (delay === undefined) {
    log(ctx, 'WARN', `Execution failed; no flow retry left (attempt ${attempt}${policy.maxAttempt !== undefined ? ` of ${policy.maxAttempt}` : ''}${policy.maxDuration ? `, maxDuration ${policy.maxDuration} since ${meta.originalCreatedDate}` : ''})`);
    return false;
  }
  const at = new Date(deps.now.getTime() + delay).toISOString();
  if ((policy.behavior ?? 'RETRY_FAILED_TASK') === 'CREATE_NEW_EXECUTION') {
    const next = newExecution({
      id: deps.newId(), flow, inputs: exec.inputs, labels: exec.labels, originalId: exec.originalId,
      metadata: { attemptNumber: attempt + 1, originalCreatedDate: meta.originalCreatedDate }, now: deps.now, ...(exec.trigger ? { trigger: exec.trigger } : {}),
      ...(exec.parent ? { parent: exec.parent } : {}), depth: depthOf(exec),
      ...(exec.legacyOutputs ? { legacyOutputs: exec.legacyOutputs } : {}),
      ...(delay > 0 ? { scheduleDate: at } : {}),
    });
    log(ctx, 'WARN', `Execution failed; retrying as new execution ${next.id} (attempt ${attempt + 1})`);
    for (const run of exec.taskRunList) if (run.state.current === 'FAILED') transition(run.state, 'RETRIED', deps.now);
    transition(exec.state, 'RETRIED', deps.now);
    ctx.actions.push({ type: 'create-execution', execution: next }, { type: 'ended', state: 'RETRIED' });
    return true;
  }
  log(ctx, 'WARN', `Execution failed; retrying failed tasks at ${at} (attempt ${attempt + 1})`);
  transition(exec.state, 'RETRYING', deps.now);
  exec.scheduleDate = at;
  return true;
}
