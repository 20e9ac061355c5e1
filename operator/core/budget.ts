// Where the engine enforces the execution-wide limits of limits.ts: task runs per execution (checked before a flowable
// creates children; a loop is refused at its value count) and the depth of Subflow/ForEachItem executions (checked
// before a child execution is requested). Refusals are LimitErrors naming the task and the setting.
import type { StepContext } from './engine-types.js';
import { childDepth } from './execution.js';
import { enabled, FLOWABLE } from './flow-index.js';
import { DEFAULT_LIMITS, limitError, type LimitError, type Limits } from './limits.js';
import type { Task, TaskRun } from './types.js';

export const limitsOf = (ctx: StepContext): Limits => ctx.deps.limits ?? DEFAULT_LIMITS;

/** `ai.service.plugin.core.flow.EachParallel` → `EachParallel` (internal `ForEachItem$ForEachItemExecutable` → `ForEachItem`). */
export const kindOf = (type: string): string => type.slice(type.lastIndexOf('.') + 1).replace(/\$.*$/, '');

const sum = (tasks: unknown): number => enabled(tasks as Task[] | undefined).reduce((n, t) => n + minRuns(t), 0);
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The fewest runs of a flowable's children when it succeeds (loop bodies and ForEachItem batches count 0: sized at run time). */
const CHILDREN: Partial<Record<string, (task: Task) => number>> = {
  [FLOWABLE.Sequential]: (t) => sum(t.tasks),
  [FLOWABLE.Parallel]: (t) => sum(t.tasks),
  [FLOWABLE.AllowFailure]: (t) => sum(t.tasks),
  [FLOWABLE.WorkingDirectory]: (t) => sum(t.tasks),
  [FLOWABLE.DAG]: (t) => sum(listOf(t.tasks).map((n) => (n as { task?: Task }).task).filter(Boolean)),
  [FLOWABLE.If]: (t) => Math.min(sum(t.then), sum(t.else)),
  [FLOWABLE.Switch]: (t) => Math.min(sum(t.defaults), ...Object.values((t.cases ?? {}) as Record<string, unknown>).map(sum)),
  [FLOWABLE.ForEachItem]: () => 3, // its split, items and merge runs
  [FLOWABLE.LoopUntil]: (t) => sum(t.tasks), // one iteration at least
  [FLOWABLE.Pause]: (t) => sum(t.tasks), // its deprecated child tasks, run after the resume
};

const fewest = new WeakMap<Task, number>();

/**
 * The fewest task runs `task` creates when it succeeds, itself included: every child list that always runs, the
 * cheapest branch of If/Switch, `finally` handlers (`errors` handlers run only on failure, so they count 0).
 */
export function minRuns(task: Task): number {
  if (task.disabled === true) return 0;
  let n = fewest.get(task);
  if (n === undefined) {
    n = 1 + (CHILDREN[task.type]?.(task) ?? 0) + sum(task.finally);
    fewest.set(task, n);
  }
  return n;
}

/** The refusal when `count` more runs would take the execution over MAX_TASK_RUNS_PER_EXECUTION, else undefined. */
export function taskRunOverflow(ctx: StepContext, count: number, what: () => string): LimitError | undefined {
  const limits = limitsOf(ctx);
  const have = ctx.exec.taskRunList.length;
  if (have + count <= limits.maxTaskRuns) return undefined;
  return limitError('maxTaskRuns', `${what()}, beside the ${have} of this execution`, limits);
}

/**
 * The refusal of a loop that cannot fit, before it creates anything: values × the fewest runs one iteration needs
 * (a 300,000-value loop fails at once instead of after creating 200,000 runs).
 */
export function loopOverflow(ctx: StepContext, run: TaskRun, task: Task, values: number, body: Task[]): LimitError | undefined {
  const perIteration = body.reduce((n, t) => n + minRuns(t), 0);
  const need = values * perIteration;
  return taskRunOverflow(ctx, need, () => `${kindOf(task.type)} '${run.taskId}' needs at least ${need} task runs for its ${values} values`);
}

/** The refusal of a Subflow or ForEachItem whose child execution would be nested deeper than MAX_SUBFLOW_DEPTH. */
export function depthOverflow(ctx: StepContext, run: TaskRun, task: Task, target: string): LimitError | undefined {
  const limits = limitsOf(ctx);
  const depth = childDepth(ctx.exec);
  if (depth <= limits.maxSubflowDepth) return undefined;
  return limitError('maxSubflowDepth', `${kindOf(task.type)} '${run.taskId}' would start an execution of ${target} at depth ${depth}`, limits);
}
