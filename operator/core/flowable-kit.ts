// What every flowable resolver shares: the Resolution it returns, its `errors`/`finally` wrapper and memoized
// decisions in the run's bookkeeping.
import type { StepContext } from './engine-types.js';
import { enabled } from './flow-index.js';
import { container, type GroupResult } from './groups.js';
import { mainChildrenIn } from './run-index.js';
import { childrenOf, type ChildSpec, variablesFor } from './runs.js';
import type { Task, TaskRun } from './types.js';

/** The states an Exit task (or a Pause with behavior CANCEL) ends the whole execution in. */
export type ExitState = 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED' | 'CANCELLED';

export interface Resolution extends GroupResult {
  outputs?: Record<string, unknown>;
  error?: string;
  /** End the whole execution at once in this state (Exit): the engine ends the other runs (kill.ts). */
  exit?: ExitState;
}
export type Resolver = (ctx: StepContext, run: TaskRun, task: Task) => Resolution;

export const tasksOf = (v: unknown): Task[] => enabled(v as Task[] | undefined);

/** A flowable's main list, then its `errors` (on failure) and `finally` handlers. */
export function withHandlers(ctx: StepContext, run: TaskRun, task: Task, mainResult: (runs: readonly TaskRun[]) => GroupResult, spec: Omit<ChildSpec, 'task' | 'branch'> = {}): Resolution {
  // Main-list children (not `errors`/`finally`), from the index's count of branch runs: no walk of a wide loop's children.
  return container(mainResult(mainChildrenIn(ctx.runs, run.id)), childrenOf(ctx, run.id), tasksOf(task.errors), tasksOf(task.finally), spec);
}

/** Renders once and memoizes in the run's bookkeeping so later passes see the same decision. */
export function memo<T>(run: TaskRun, key: string, compute: () => T): T {
  const state = (run.flowableState ??= {});
  if (!(key in state)) state[key] = compute() as unknown;
  return state[key] as T;
}

/**
 * A non-negative integer property (a number or a template rendering to one: `concurrent`, `concurrencyLimit`), rendered
 * once; anything else (`{{ 0 - 1 }}`, text) fails the flowable naming the property, as Kestra does.
 */
export function countProperty(ctx: StepContext, run: TaskRun, task: Task, name: string, fallback: number, min: number): number {
  return memo(run, name, () => {
    const raw = task[name];
    if (raw === undefined || raw === null) return fallback;
    const v = typeof raw === 'string' ? ctx.deps.renderer.render(raw, variablesFor(ctx, run, task)).trim() : raw;
    const n = Number(v);
    if (v === '' || !Number.isSafeInteger(n) || n < min) throw new Error(`${name}: expected an integer >= ${min}, got '${String(v).slice(0, 100)}'`);
    return n;
  });
}
