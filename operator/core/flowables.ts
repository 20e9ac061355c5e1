// Flowable task types: each resolves, from its rendered properties and its children runs, which children to create
// next or its final state. A compiler-checked table maps every flowable type to its resolver.
import { parseDuration } from '../model/index.js';
import type { StepContext } from './engine-types.js';
import { loopOverflow } from './budget.js';
import { parseJsonSafe } from './keyed.js';
import { enabled, FLOWABLE, FOR_EACH_ITEM_BATCH } from './flow-index.js';
import { container, dagGroup, type DagNode, type Final, type GroupResult, parallelGroup, sequentialGroup } from './groups.js';
import { childrenOf, type ChildSpec, log, variablesFor } from './runs.js';
import { forEachBatchResolver, forEachItemResolver } from './foreach-item.js';
import { subflowResolver } from './subflow.js';
import { worseState } from './state.js';
import { truthy } from './truth.js';
import type { Task, TaskRun } from './types.js';
import { isTerminal } from './types.js';

export interface Resolution extends GroupResult { outputs?: Record<string, unknown>; error?: string }
export type Resolver = (ctx: StepContext, run: TaskRun, task: Task) => Resolution;

const main = (runs: readonly TaskRun[]) => runs.filter((r) => !r.branch);
const tasksOf = (v: unknown): Task[] => enabled(v as Task[] | undefined);

function withHandlers(ctx: StepContext, run: TaskRun, task: Task, mainResult: (runs: readonly TaskRun[]) => GroupResult, spec: Omit<ChildSpec, 'task' | 'branch'> = {}): Resolution {
  const runs = childrenOf(ctx, run.id);
  return container(mainResult(main(runs)), runs, tasksOf(task.errors), tasksOf(task.finally), spec);
}

/** Renders once and memoizes in the run's bookkeeping so later passes see the same decision. */
function memo<T>(run: TaskRun, key: string, compute: () => T): T {
  const state = (run.flowableState ??= {});
  if (!(key in state)) state[key] = compute() as unknown;
  return state[key] as T;
}

function loopValues(ctx: StepContext, run: TaskRun, task: Task): string[] {
  return memo(run, 'values', () => {
    let v = ctx.deps.renderer.renderTyped(task.value, variablesFor(ctx, run, task));
    if (typeof v === 'string') {
      try { v = parseJsonSafe(v); } catch { throw new Error(`value: expected a list or a JSON array, got '${String(v).slice(0, 100)}'`); }
    }
    if (!Array.isArray(v)) throw new Error(`value: expected a list, got ${typeof v}`);
    return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  });
}

/** The loop's values and body; a loop that has not started yet is refused when its values cannot fit (budget.ts). */
function loopOf(ctx: StepContext, run: TaskRun, task: Task): { values: string[]; tasks: Task[]; refused?: Resolution } {
  const values = loopValues(ctx, run, task);
  const tasks = tasksOf(task.tasks);
  const over = childrenOf(ctx, run.id).length === 0 ? loopOverflow(ctx, run, task, values.length, tasks) : undefined;
  return { values, tasks, ...(over ? { refused: { create: [], state: 'FAILED', error: over.message } } : {}) };
}

function eachSequential(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const { values, tasks, refused } = loopOf(ctx, run, task);
  if (refused) return refused;
  return withHandlers(ctx, run, task, (runs) => {
    const byIteration = groupByIteration(runs);
    let state: Final = 'SUCCESS';
    for (let i = 0; i < values.length; i++) {
      const mine = byIteration[i];
      let s = settled(mine, tasks);
      if (s === 'running') return { create: [] };
      if (s === undefined) {
        const r = sequentialGroup(tasks, mine ?? [], { branch: 'tasks', value: values[i], iteration: i });
        if (r.state === undefined) return r;
        s = r.state;
      }
      state = worseState(state, s);
      if (s === 'FAILED' || s === 'KILLED') break;
    }
    return { create: [], state };
  });
}

function eachParallel(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const { values, tasks, refused } = loopOf(ctx, run, task);
  if (refused) return refused;
  const limit = Number(task.concurrent ?? 0);
  return withHandlers(ctx, run, task, (runs) => {
    const create: ChildSpec[] = [];
    let state: Final = 'SUCCESS';
    let pending = false;
    let active = 0;
    for (const x of runs) if (!isTerminal(x.state.current)) active++;
    const byIteration = groupByIteration(runs);
    for (let i = 0; i < values.length; i++) {
      const mine = byIteration[i];
      const s = settled(mine, tasks);
      if (s === 'running') { pending = true; continue; }
      if (s !== undefined) { state = worseState(state, s); continue; }
      const mineActive = mine ? mine.filter((x) => !isTerminal(x.state.current)).length : 0;
      const r = parallelGroup(tasks, mine ?? [], { branch: 'tasks', value: values[i], iteration: i }, limit, active - mineActive);
      create.push(...r.create);
      active += r.create.length;
      if (r.state === undefined) pending = true; else state = worseState(state, r.state);
    }
    return create.length || pending ? { create } : { create: [], state };
  });
}

/** Main-branch children by loop iteration (a sparse array: iterations not started yet are holes). */
function groupByIteration(runs: readonly TaskRun[]): TaskRun[][] {
  const byIteration: TaskRun[][] = [];
  for (const r of runs) {
    const i = r.iteration ?? -1;
    if (i < 0) continue;
    const list = byIteration[i];
    if (list) list.push(r); else byIteration[i] = [r];
  }
  return byIteration;
}

/**
 * An iteration that has a run for every task (the common case once a loop is under way) without the group functions:
 * 'running' while one of them runs, else the worst of their states; undefined when some task has no run yet.
 */
function settled(mine: readonly TaskRun[] | undefined, tasks: Task[]): Final | 'running' | undefined {
  if (!mine || mine.length < tasks.length) return undefined;
  let state: Final = 'SUCCESS';
  for (const r of mine) {
    if (!isTerminal(r.state.current)) return 'running';
    state = worseState(state, r.state.current);
  }
  return state;
}

function switchTask(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const choice = memo(run, 'switch', () => {
    const value = ctx.deps.renderer.render(String(task.value ?? ''), variablesFor(ctx, run, task));
    const cases = (task.cases ?? {}) as Record<string, Task[]>;
    return Object.prototype.hasOwnProperty.call(cases, value) ? { value, defaults: false } : { value, defaults: true };
  });
  if (choice.defaults && !Array.isArray(task.defaults)) {
    // As Kestra: no case matches and there are no defaults, so the Switch has no task to run and fails.
    const error = `No task found on flow '${ctx.exec.namespace}.${ctx.exec.flowId}', task '${run.taskId}', execution '${ctx.exec.id}': value '${choice.value}' matches no case and the Switch has no defaults`;
    return { create: [], state: 'FAILED', error, outputs: { value: choice.value, defaults: true } };
  }
  const tasks = choice.defaults ? tasksOf(task.defaults) : tasksOf((task.cases as Record<string, Task[]>)[choice.value]);
  const r = withHandlers(ctx, run, task, (runs) => sequentialGroup(tasks, runs, { branch: 'tasks' }));
  return { ...r, outputs: { value: choice.value, defaults: choice.defaults } };
}

export { truthy };

function ifTask(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const result = memo(run, 'condition', () => truthy(ctx.deps.renderer.renderTyped(task.condition, variablesFor(ctx, run, task))));
  const tasks = tasksOf(result ? task.then : task.else);
  return withHandlers(ctx, run, task, (runs) => sequentialGroup(tasks, runs, { branch: 'tasks' }));
}

const sequential: Resolver = (ctx, run, task) => withHandlers(ctx, run, task, (runs) => sequentialGroup(tasksOf(task.tasks), runs, { branch: 'tasks' }));

const parallel: Resolver = (ctx, run, task) =>
  withHandlers(ctx, run, task, (runs) => parallelGroup(tasksOf(task.tasks), runs, { branch: 'tasks' }, Number(task.concurrent ?? 0)));

function allowFailure(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const r = sequential(ctx, run, task);
  if (r.state === 'FAILED') return { ...r, state: 'WARNING' };
  return r;
}

function dag(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const nodes = ((task.tasks ?? []) as DagNode[]).filter((n) => n.task.disabled !== true);
  return withHandlers(ctx, run, task, (runs) => dagGroup(nodes, runs, Number(task.concurrent ?? 0)));
}

function fail(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const vars = variablesFor(ctx, run, task);
  const hit = task.condition === undefined ? true : truthy(ctx.deps.renderer.renderTyped(task.condition, vars));
  if (!hit) return { create: [], state: 'SUCCESS' };
  const message = task.errorMessage !== undefined ? ctx.deps.renderer.render(String(task.errorMessage), vars) : 'Task failure';
  return { create: [], state: 'FAILED', error: message };
}

/** Pause: waits for a resume (API) or its delay; the execution is PAUSED meanwhile. */
function pause(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const fs = (run.flowableState ??= {});
  if (fs.status === 'RESUMED') return { create: [], state: 'SUCCESS', outputs: (fs.onResume as Record<string, unknown> | undefined) ? { onResume: fs.onResume } : undefined };
  if (fs.status === 'EXPIRED') {
    const behavior = String(task.behavior ?? 'RESUME');
    if (behavior === 'FAIL') return { create: [], state: 'FAILED', error: 'Pause duration elapsed (behavior FAIL)' };
    if (behavior === 'WARN') return { create: [], state: 'WARNING' };
    if (behavior === 'CANCEL') return { create: [], state: 'KILLED' };
    return { create: [], state: 'SUCCESS' };
  }
  if (fs.status === 'TIMEOUT') return { create: [], state: 'FAILED', error: `Pause timed out after ${task.timeout}` };
  if (!fs.status) {
    fs.status = 'PAUSED';
    const delay = task.pauseDuration ?? task.delay;
    const limit = delay ?? task.timeout;
    if (limit !== undefined) {
      const spec = ctx.deps.renderer.render(String(limit), variablesFor(ctx, run, task));
      run.resumeDate = new Date(ctx.deps.now.getTime() + parseDuration(spec)).toISOString();
      fs.onExpiry = delay !== undefined ? 'EXPIRED' : 'TIMEOUT';
    }
    log(ctx, 'INFO', run.resumeDate ? `Paused until ${run.resumeDate}` : 'Paused: waiting for a manual resume', run);
  }
  return { create: [] };
}

function workingDirectory(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  return sequential(ctx, run, task);
}

export const RESOLVERS: Record<string, Resolver> = {
  [FLOWABLE.Sequential]: sequential,
  [FLOWABLE.Parallel]: parallel,
  [FLOWABLE.Switch]: switchTask,
  [FLOWABLE.If]: ifTask,
  [FLOWABLE.EachSequential]: eachSequential,
  [FLOWABLE.EachParallel]: eachParallel,
  [FLOWABLE.AllowFailure]: allowFailure,
  [FLOWABLE.Fail]: fail,
  [FLOWABLE.WorkingDirectory]: workingDirectory,
  [FLOWABLE.Pause]: pause,
  [FLOWABLE.DAG]: dag,
  [FLOWABLE.Subflow]: subflowResolver,
  [FLOWABLE.ForEachItem]: forEachItemResolver,
  [FOR_EACH_ITEM_BATCH]: forEachBatchResolver,
} satisfies Record<(typeof FLOWABLE)[keyof typeof FLOWABLE] | typeof FOR_EACH_ITEM_BATCH, Resolver>;
