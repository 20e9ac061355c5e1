// Task-run primitives used by the engine: find a run's task, create/start runs, record attempts and outcomes.
import { buildVariables, setRunOutputs } from './context.js';
import type { StepContext } from './engine-types.js';
import { FLOWABLE, forEachItemParts, indexFlow, isFlowableType } from './flow-index.js';
import { backoffDelay } from './backoff.js';
import { DEFAULT_LIMITS, LIMIT_SETTINGS } from './limits.js';
import { nextRetryDelay } from './retry.js';
import { newState, transition } from './state.js';
import { addRun, childrenIn, snapshotIndex } from './run-index.js';
import type { Branch, Execution, Flow, RetryPolicy, Task, TaskRun, TaskRunState } from './types.js';
import { truthy } from './truth.js';
import { isTerminal } from './types.js';

/** The task definition behind a run, including the synthetic children of ForEachItem. */
export function taskOf(ctx: Pick<StepContext, 'flow' | 'index' | 'runs'>, run: TaskRun): Task {
  const task = ctx.index.byId.get(run.taskId);
  if (task) return task;
  const parent = run.parentTaskRunId ? ctx.runs.byId.get(run.parentTaskRunId) : undefined;
  const parentTask = parent ? ctx.index.byId.get(parent.taskId) : undefined;
  if (parentTask?.type === FLOWABLE.ForEachItem) {
    const part = Object.values(forEachItemParts(parentTask)).find((t) => t.id === run.taskId);
    if (part) return part;
  }
  throw new Error(`Task '${run.taskId}' of task run '${run.id}' is not in flow revision ${ctx.flow.revision ?? '?'}`);
}

export const isRunnable = (task: Task): boolean => !isFlowableType(task.type);

/** Children of a run (root runs for undefined), in creation order, from the step's index. Do not modify. */
export function childrenOf(ctx: StepContext, parentId: string | undefined): readonly TaskRun[] {
  return childrenIn(ctx.runs, parentId);
}

export function variablesFor(ctx: StepContext, run: TaskRun | undefined, task?: Task): Record<string, unknown> {
  return buildVariables(ctx.flow, ctx.exec, run, task, { open: ctx.deps.openSecret, index: ctx.runs });
}

export function log(ctx: StepContext, level: 'INFO' | 'WARN' | 'ERROR', message: string, run?: TaskRun): void {
  ctx.actions.push({ type: 'log', level, message, ...(run ? { taskRunId: run.id } : {}) });
}

/**
 * New task runs one step creates at most (a 100,000-value EachParallel: 200 steps, each one bounded block of the event
 * loop and one bounded write, instead of one of each for all 100,000). Resolution is level-based: the next step (the
 * controller steps again on a `continue` action, or any later event) creates the runs still due. The same as the
 * controller's EVENTS_PER_BATCH, for the same reason (docs/performance.md, "Batches of 500").
 */
export const RUNS_PER_STEP = 500;

/**
 * How many more runs this step may create. A resolver that stops listing children for want of room says so
 * (`ctx.more`): the step then ends with a `continue` action.
 */
export function roomToCreate(ctx: StepContext): number {
  return Math.max(0, RUNS_PER_STEP - ctx.created);
}

export interface ChildSpec {
  task: Task;
  branch: Branch;
  value?: string;
  iteration?: number;
  items?: string;
}

/** Creates a run for `spec` under `parent` and starts it (RUNNING; runnables get their first attempt and a launch). */
export function createRun(ctx: StepContext, spec: ChildSpec, parent: TaskRun | undefined): TaskRun {
  const { now } = ctx.deps;
  const run: TaskRun = {
    id: ctx.deps.newId(),
    executionId: ctx.exec.id,
    namespace: ctx.exec.namespace,
    flowId: ctx.exec.flowId,
    taskId: spec.task.id,
    state: newState<TaskRunState>('CREATED', now),
    attempts: [],
  };
  if (parent) run.parentTaskRunId = parent.id;
  if (spec.value !== undefined) run.value = spec.value;
  if (spec.iteration !== undefined) run.iteration = spec.iteration;
  if (spec.items !== undefined) run.items = spec.items;
  if (spec.branch !== 'tasks') run.branch = spec.branch;
  addRun(ctx.runs, run, ctx.exec.taskRunList.push(run) - 1);
  transition(run.state, 'RUNNING', now);
  if (spec.task.runIf !== undefined && !runIfHolds(ctx, run, spec.task)) return run;
  if (isRunnable(spec.task)) startAttempt(ctx, run);
  return run;
}

/**
 * `runIf` (Kestra): rendered when the run is created; false ends the run at once without any attempt or child, and the
 * flow goes on. Kestra records such a run SKIPPED; the contract has no SKIPPED task-run state, so it ends SUCCESS (and
 * says why in the log). A runIf that cannot be rendered fails the run.
 */
function runIfHolds(ctx: StepContext, run: TaskRun, task: Task): boolean {
  let hit: boolean;
  try {
    hit = truthy(ctx.deps.renderer.renderTyped(task.runIf, variablesFor(ctx, run, task)));
  } catch (err) {
    completeRun(ctx, run, 'FAILED', { error: `runIf of task '${task.id}' cannot be rendered: ${(err as Error).message}` });
    return false;
  }
  if (hit) return true;
  log(ctx, 'INFO', `Task '${task.id}' skipped: its runIf rendered false`, run);
  completeRun(ctx, run, 'SUCCESS');
  return false;
}

export function startAttempt(ctx: StepContext, run: TaskRun): void {
  run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
  transition(run.state, 'RUNNING', ctx.deps.now);
  delete run.nextAttemptDate;
  ctx.actions.push({ type: 'launch', taskRunId: run.id, attempt: run.attempts.length });
}

/**
 * Ends a run. As Kestra: a failure of a task with `allowFailure` ends it in WARNING (SUCCESS with `allowWarning` too) so
 * that its siblings continue; a WARNING of a task with `allowWarning` ends it in SUCCESS.
 */
export function completeRun(
  ctx: StepContext, run: TaskRun, state: 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED',
  extra: { outputs?: Record<string, unknown>; error?: string } = {},
): void {
  if (isTerminal(run.state.current)) return;
  if (extra.outputs !== undefined) setRunOutputs(ctx.runs, run, extra.outputs);
  let final: TaskRunState = state;
  if (extra.error) { run.error = extra.error; log(ctx, 'ERROR', extra.error, run); }
  const task = state === 'FAILED' || state === 'WARNING' ? taskOf(ctx, run) : undefined;
  if (state === 'FAILED' && task?.allowFailure === true) {
    final = task.allowWarning === true ? 'SUCCESS' : 'WARNING';
    log(ctx, 'WARN', `Task '${run.taskId}' failed and is allowed to fail: continuing`, run);
  } else if (state === 'WARNING' && task?.allowWarning === true) {
    final = 'SUCCESS';
    log(ctx, 'INFO', `Task '${run.taskId}' ended with warnings, which it is allowed to: SUCCESS`, run);
  }
  transition(run.state, final, ctx.deps.now);
  delete run.nextAttemptDate;
}

/** Attempts that were the task's own tries (infrastructure failures excluded): what the `retry` policy counts. */
export const taskAttempts = (run: TaskRun): number => run.attempts.reduce((n, a) => (a.infrastructure ? n : n + 1), 0);

/**
 * The retry policy of a run: its task's own `retry`, else (as Kestra's executor) the `retry` of the nearest enclosing
 * flowable that has one, so a retry on a Sequential, Parallel, If... retries its failed children as new attempts.
 */
export function retryPolicyOf(ctx: Pick<StepContext, 'flow' | 'index' | 'runs'>, run: TaskRun): RetryPolicy | undefined {
  const own = taskOf(ctx, run).retry;
  if (own) return own;
  for (let p = run.parentTaskRunId ? ctx.runs.byId.get(run.parentTaskRunId) : undefined; p; p = p.parentTaskRunId ? ctx.runs.byId.get(p.parentTaskRunId) : undefined) {
    const policy = taskOf(ctx, p).retry;
    if (policy) return policy;
  }
  return undefined;
}

/** Delay before the next attempt of a run whose attempt failed, or undefined when its retry policy allows no more. */
export function retryDelayOf(ctx: StepContext, run: TaskRun): number | undefined {
  const policy = retryPolicyOf(ctx, run);
  // CREATE_NEW_EXECUTION retries the whole execution once it has ended (finish.ts), never the run in place.
  if (policy?.behavior === 'CREATE_NEW_EXECUTION') return undefined;
  const firstStart = Date.parse(run.attempts[0]?.state.startDate ?? run.state.startDate);
  return nextRetryDelay(policy, taskAttempts(run), ctx.deps.now.getTime() - firstStart, ctx.deps.random());
}

/** A failed attempt: retry if the task's policy allows it, else fail the run. */
export function failAttempt(ctx: StepContext, run: TaskRun, error: string): void {
  const delay = retryDelayOf(ctx, run);
  if (delay === undefined) { completeRun(ctx, run, 'FAILED', { error }); return; }
  retryAfter(ctx, run, delay, `${error}; retrying (attempt ${run.attempts.length + 1}) in ${delay} ms`, error);
}

/** The state a run that succeeded ends in: WARNING after retries under `warningOnRetry`. */
export function successState(ctx: StepContext, run: TaskRun, state: 'SUCCESS' | 'WARNING'): 'SUCCESS' | 'WARNING' {
  return state === 'SUCCESS' && taskAttempts(run) > 1 && retryPolicyOf(ctx, run)?.warningOnRetry === true ? 'WARNING' : state;
}

/** Backoff of infrastructure retries: 1 s, 2 s, 4 s... up to 30 s (jittered), so a restarting API server gets time. */
const INFRA_RETRY = { baseMs: 1_000, maxMs: 30_000 } as const;

/**
 * An attempt whose infrastructure failed (the runner, not the task): a new attempt after a short backoff, whatever the
 * task's retry policy says, at most TASK_INFRA_RETRIES times per run; then the run fails with the last reason.
 */
export function infraFailAttempt(ctx: StepContext, run: TaskRun, error: string): void {
  const setting = LIMIT_SETTINGS.taskInfraRetries.env;
  const allowed = (ctx.deps.limits ?? DEFAULT_LIMITS).taskInfraRetries;
  const failures = run.attempts.filter((a) => a.infrastructure).length;
  if (failures > allowed) {
    completeRun(ctx, run, 'FAILED', { error: `${error} (the infrastructure of this task failed ${failures} times: no retry left, setting ${setting}=${allowed})` });
    return;
  }
  const delay = backoffDelay(failures - 1, INFRA_RETRY.baseMs, INFRA_RETRY.maxMs, ctx.deps.random());
  retryAfter(ctx, run, delay, `${error}; an infrastructure failure, not the task's: new attempt ${run.attempts.length + 1} in ${delay} ms (infrastructure retry ${failures} of ${allowed}, setting ${setting})`, error);
}

/**
 * RETRYING until `nextAttemptDate`. A runnable with no delay starts its next attempt at once; a task the engine
 * evaluates itself (Fail, Subflow) always waits for its retry timer, so each attempt is its own step.
 */
export function retryAfter(ctx: StepContext, run: TaskRun, delay: number, message: string, error: string): void {
  run.error = error;
  log(ctx, 'WARN', message, run);
  transition(run.state, 'RETRYING', ctx.deps.now);
  run.nextAttemptDate = new Date(ctx.deps.now.getTime() + delay).toISOString();
  if (delay === 0 && isRunnable(taskOf(ctx, run))) startAttempt(ctx, run);
}

/**
 * Starts a new attempt of a run that failed or waits RETRYING: a runnable is launched again; a flowable loses its
 * bookkeeping and runs again (Fail re-evaluates, Subflow creates a new child execution, others resolve again).
 */
export function nextAttempt(ctx: StepContext, run: TaskRun): void {
  delete run.error;
  if (isRunnable(taskOf(ctx, run))) { startAttempt(ctx, run); return; }
  const fs = run.flowableState;
  if (fs) for (const k of ['status', 'onExpiry', 'requested', 'created', 'ended', 'childState', 'childOutputs', 'error', 'refused']) delete fs[k];
  delete run.resumeDate;
  delete run.nextAttemptDate;
  transition(run.state, 'RUNNING', ctx.deps.now);
}

/** Marks the current attempt ended; returns false when the attempt is not the live one (stale report). */
export function endAttempt(ctx: StepContext, run: TaskRun, attempt: number, state: TaskRunState): boolean {
  const att = run.attempts[attempt - 1];
  if (!att || attempt !== run.attempts.length || isTerminal(att.state.current)) return false;
  transition(att.state, state, ctx.deps.now);
  return true;
}

/** The task definition behind a run, outside of a step (launchers): the record is indexed once, not per call. */
export function taskForRun(flow: Flow, exec: Execution, run: TaskRun): Task {
  return taskOf({ flow, index: indexFlow(flow), runs: snapshotIndex(exec) }, run);
}
