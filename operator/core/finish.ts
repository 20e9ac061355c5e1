// The root of an execution: its task list with `errors` and `finally`, and how the execution ends (flow outputs,
// flow-level retry with RETRY_FAILED_TASK or CREATE_NEW_EXECUTION, warningOnRetry, then the flow's afterExecution
// tasks and matching listeners, which run once the final state is decided and never change it).
import { taskRunOverflow } from './budget.js';
import type { StepContext } from './engine-types.js';
import { depthOf, metadataOf, newExecution } from './execution.js';
import { enabled } from './flow-index.js';
import { dict } from './keyed.js';
import { container, type Final, sequentialGroup } from './groups.js';
import { nextRetryDelay } from './retry.js';
import { mainChildrenIn, ownRun } from './run-index.js';
import { matchingListeners } from './listeners.js';
import { childrenOf, createRun, log, retryPolicyOf, variablesFor } from './runs.js';
import { transition } from './state.js';
import { coerceInputValue, LISTENERS_DEPRECATED } from '../model/index.js';
import type { FlowOutput, Input, RetryPolicy } from './types.js';

/** Flow outputs are converted to their declared type (an INT output rendered as "42" becomes 42). */
function typedOutput(id: string, type: string, value: unknown): unknown {
  if (value === null || value === undefined || type === 'STRING' || type === 'FILE' || type === 'SECRET') return value;
  const r = coerceInputValue({ id, type } as Input, value);
  if (!r.ok) throw new Error(`output '${id}': ${r.message}`);
  return r.value;
}

const OMITTED = Symbol('omitted');

/** A flow output's value; an optional one (`required: false`) that cannot be rendered is left out with a warning, as Kestra does. */
function renderOutput(ctx: StepContext, o: FlowOutput, vars: Record<string, unknown>): unknown {
  if (o.required !== false) return ctx.deps.renderer.renderTyped(o.value, vars);
  try {
    const value = ctx.deps.renderer.renderTyped(o.value, vars);
    return value === undefined || value === null ? OMITTED : value;
  } catch (err) {
    log(ctx, 'WARN', `Optional flow output '${o.id}' is left out: ${(err as Error).message}`);
    return OMITTED;
  }
}

export function resolveRoot(ctx: StepContext): { created: boolean; state?: Final } {
  if (ctx.exec.ending) return resolveEnding(ctx);
  const runs = childrenOf(ctx, undefined);
  const main = sequentialGroup(enabled(ctx.flow.tasks), mainChildrenIn(ctx.runs, undefined), { branch: 'tasks' });
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

/**
 * While the execution ends: the matching listeners (each its own sequence) and the afterExecution list run side by
 * side; once all have ended the execution takes the state decided before (a failure among them changes nothing).
 */
function resolveEnding(ctx: StepContext): { created: boolean; state?: Final } {
  const ending = ctx.exec.ending!;
  const runs = childrenOf(ctx, undefined);
  const listenerRuns = runs.filter((r) => r.branch === 'listeners');
  const groups = [
    ...(ending.listeners ?? []).map((i) => sequentialGroup(enabled(ctx.flow.listeners?.[i]?.tasks), listenerRuns, { branch: 'listeners' })),
    sequentialGroup(enabled(ctx.flow.afterExecution), runs.filter((r) => r.branch === 'afterExecution'), { branch: 'afterExecution' }),
  ];
  const create = groups.flatMap((g) => g.create);
  const over = create.length ? taskRunOverflow(ctx, create.length, () => `afterExecution task '${create[0]!.task.id}' cannot start`) : undefined;
  if (over) {
    log(ctx, 'ERROR', over.message);
    return { created: false, state: ending.state };
  }
  for (const spec of create) createRun(ctx, spec, undefined);
  const done = groups.every((g) => g.state !== undefined);
  return { created: create.length > 0, ...(done ? { state: ending.state } : {}) };
}

/** Whether the flow has tasks to run once the execution ended (afterExecution, listeners). */
const hasAfterTasks = (flow: StepContext['flow']): boolean =>
  enabled(flow.afterExecution).length > 0 || (flow.listeners ?? []).some((l) => enabled(l.tasks).length > 0);

/**
 * The root list reached `final`: returns true when the execution ended (or a flow retry took it over), false when it
 * starts running its afterExecution tasks and listeners first (`exec.ending` holds the decided state meanwhile).
 */
export function finishRoot(ctx: StepContext, final: Final): boolean {
  const { exec, flow, deps } = ctx;
  if (exec.ending) {
    const { state } = exec.ending;
    delete exec.ending;
    transition(exec.state, state, deps.now);
    ctx.actions.push({ type: 'ended', state });
    return true;
  }
  let state: Final = final;
  if (state === 'FAILED') {
    const policy = newExecutionPolicyOfTask(ctx) ?? flow.retry;
    if (policy && scheduleFlowRetry(ctx, policy)) return true;
  }
  const legacy = flow.outputs?.length ? undefined : exec.legacyOutputs;
  if ((state === 'SUCCESS' || state === 'WARNING') && (flow.outputs?.length || legacy)) {
    try {
      const vars = variablesFor(ctx, undefined);
      const outputs = dict();
      for (const o of flow.outputs ?? []) {
        const value = renderOutput(ctx, o, vars);
        if (value !== OMITTED) outputs[o.id] = typedOutput(o.id, o.type, value);
      }
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
  if (hasAfterTasks(flow)) {
    if (flow.listeners?.length) log(ctx, 'WARN', LISTENERS_DEPRECATED);
    const listeners = matchingListeners(ctx, state);
    exec.ending = { state, ...(listeners.length ? { listeners } : {}) };
    return false;
  }
  transition(exec.state, state, deps.now);
  ctx.actions.push({ type: 'ended', state });
  return true;
}

/**
 * A task-level retry with `behavior: CREATE_NEW_EXECUTION` (the failed task's own, or its nearest enclosing flowable's):
 * as in Kestra it wins over the flow's retry and retries the whole execution as a new one, counted across the chain.
 */
function newExecutionPolicyOfTask(ctx: StepContext): RetryPolicy | undefined {
  for (const run of ctx.exec.taskRunList) {
    if (run.state.current !== 'FAILED') continue;
    const policy = retryPolicyOf(ctx, run);
    if (policy?.behavior === 'CREATE_NEW_EXECUTION') return policy;
  }
  return undefined;
}

/** Returns true when a retry (the flow's, or a task's CREATE_NEW_EXECUTION) takes over the failed execution. */
function scheduleFlowRetry(ctx: StepContext, policy: RetryPolicy): boolean {
  const { exec, flow, deps } = ctx;
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
    for (const run of exec.taskRunList) if (run.state.current === 'FAILED') transition(ownRun(exec, ctx.runs, run).state, 'RETRIED', deps.now);
    transition(exec.state, 'RETRIED', deps.now);
    ctx.actions.push({ type: 'create-execution', execution: next }, { type: 'ended', state: 'RETRIED' });
    return true;
  }
  log(ctx, 'WARN', `Execution failed; retrying failed tasks at ${at} (attempt ${attempt + 1})`);
  transition(exec.state, 'RETRYING', deps.now);
  exec.scheduleDate = at;
  return true;
}
