// Task-run primitives used by the engine: find a run's task, create/start runs, record attempts and outcomes.
import { buildVariables, setRunOutputs } from './context.js';
import type { StepContext } from './engine-types.js';
import { FLOWABLE, forEachItemParts, indexFlow, isFlowableType } from './flow-index.js';
import { backoffDelay } from './backoff.js';
import { DEFAULT_LIMITS, LIMIT_SETTINGS } from './limits.js';
import { nextRetryDelay } from './retry.js';
import { newState, transition } from './state.js';
import { addRun, childrenIn, snapshotIndex } from './run-index.js';
import type { Execution, Flow, Task, TaskRun, TaskRunState } from './types.js';
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

export interface ChildSpec {
  task: Task;
  branch: 'tasks' | 'errors' | 'finally';
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
  ctx.exec.taskRunList.push(run);
  addRun(ctx.runs, run);
  transition(run.state, 'RUNNING', now);
  if (isRunnable(spec.task)) startAttempt(ctx, run);
  return run;
}

export function startAttempt(ctx: StepContext, run: TaskRun): void {
  run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
  transition(run.state, 'RUNNING', ctx.deps.now);
  delete run.nextAttemptDate;
  ctx.actions.push({ type: 'launch', taskRunId: run.id, attempt: run.attempts.length });
}

/** Ends a run. A failure of a task with `allowFailure` ends it in WARNING so that its siblings continue. */
export function completeRun(
  ctx: StepContext, run: TaskRun, state: 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED',
  extra: { outputs?: Record<string, unknown>; error?: string } = {},
): void {
  if (isTerminal(run.state.current)) return;
  if (extra.outputs !== undefined) setRunOutputs(ctx.runs, run, extra.outputs);
  let final: TaskRunState = state;
  if (extra.error) { run.error = extra.error; log(ctx, 'ERROR', extra.error, run); }
  if (state === 'FAILED' && taskOf(ctx, run).allowFailure === true) {
    final = 'WARNING';
    log(ctx, 'WARN', `Task '${run.taskId}' failed and is allowed to fail: continuing`, run);
  }
  transition(run.state, final, ctx.deps.now);
  delete run.nextAttemptDate;
}

/** Attempts that were the task's own tries (infrastructure failures excluded): what the `retry` policy counts. */
export const taskAttempts = (run: TaskRun): number => run.attempts.reduce((n, a) => (a.infrastructure ? n : n + 1), 0);

/** A failed attempt: retry if the task's policy allows it, else fail the run. */
export function failAttempt(ctx: StepContext, run: TaskRun, error: string): void {
  const task = taskOf(ctx, run);
  const firstStart = Date.parse(run.attempts[0]?.state.startDate ?? run.state.startDate);
  const delay = nextRetryDelay(task.retry, taskAttempts(run), ctx.deps.now.getTime() - firstStart, ctx.deps.random());
  if (delay === undefined) { completeRun(ctx, run, 'FAILED', { error }); return; }
  retryAfter(ctx, run, delay, `${error}; retrying (attempt ${run.attempts.length + 1}) in ${delay} ms`, error);
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

function retryAfter(ctx: StepContext, run: TaskRun, delay: number, message: string, error: string): void {
  run.error = error;
  log(ctx, 'WARN', message, run);
  transition(run.state, 'RETRYING', ctx.deps.now);
  run.nextAttemptDate = new Date(ctx.deps.now.getTime() + delay).toISOString();
  if (delay === 0) startAttempt(ctx, run);
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
