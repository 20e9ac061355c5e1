// Flowable task types: each resolves, from its rendered properties and its children runs, which children to create
// next or its final state. A compiler-checked table maps every flowable type to its resolver.
import { parseDuration } from '../model/index.js';
import type { StepContext } from './engine-types.js';
import type { FlowableName } from '../model/flowable-types.js';
import { FLOWABLE, FOR_EACH_ITEM_BATCH, indexFlow } from './flow-index.js';
import { countProperty, memo, type Resolution, type Resolver, tasksOf, withHandlers } from './flowable-kit.js';
import { dagGroup, type DagNode, parallelGroup, sequentialGroup } from './groups.js';
import { eachParallel, eachSequential, exit, forEach, loopUntil } from './loops.js';
import { log, variablesFor } from './runs.js';
import { forEachBatchResolver, forEachItemResolver } from './foreach-item.js';
import { subflowResolver } from './subflow.js';
import { truthy } from './truth.js';
import type { Execution, Flow, Input, Task, TaskRun } from './types.js';
import { isTerminal } from './types.js';

export type { Resolution, Resolver } from './flowable-kit.js';
export { truthy };

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

function ifTask(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const result = memo(run, 'condition', () => truthy(ctx.deps.renderer.renderTyped(task.condition, variablesFor(ctx, run, task))));
  const tasks = tasksOf(result ? task.then : task.else);
  return withHandlers(ctx, run, task, (runs) => sequentialGroup(tasks, runs, { branch: 'tasks' }));
}

const sequential: Resolver = (ctx, run, task) => withHandlers(ctx, run, task, (runs) => sequentialGroup(tasksOf(task.tasks), runs, { branch: 'tasks' }));

const parallel: Resolver = (ctx, run, task) =>
  withHandlers(ctx, run, task, (runs) => parallelGroup(tasksOf(task.tasks), runs, { branch: 'tasks' }, countProperty(ctx, run, task, 'concurrent', 0, 0)));

function allowFailure(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const r = sequential(ctx, run, task);
  if (r.state === 'FAILED') return { ...r, state: 'WARNING' };
  return r;
}

/**
 * The enabled nodes of a Dag: a disabled node is left out and its dependents wait for what it waited for instead
 * (transitively), so a chain through a disabled task still runs in order and a task after a disabled root is a root.
 */
export function enabledDagNodes(all: DagNode[]): DagNode[] {
  const byId = new Map(all.map((n) => [n.task.id, n]));
  const through = (id: string, seen: Set<string>): string[] => {
    const n = byId.get(id);
    if (!n || n.task.disabled !== true) return [id];
    if (seen.has(id)) return [];
    seen.add(id);
    return (n.dependsOn ?? []).flatMap((d) => through(d, seen));
  };
  return all.filter((n) => n.task.disabled !== true).map((n) => (n.dependsOn?.length
    ? { ...n, dependsOn: [...new Set(n.dependsOn.flatMap((d) => through(d, new Set())))] } : n));
}

function dag(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const nodes = enabledDagNodes((task.tasks ?? []) as DagNode[]);
  return withHandlers(ctx, run, task, (runs) => dagGroup(nodes, runs, countProperty(ctx, run, task, 'concurrent', 0, 0)));
}

function fail(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const vars = variablesFor(ctx, run, task);
  const hit = task.condition === undefined ? true : truthy(ctx.deps.renderer.renderTyped(task.condition, vars));
  if (!hit) return { create: [], state: 'SUCCESS' };
  const message = task.errorMessage !== undefined ? ctx.deps.renderer.render(String(task.errorMessage), vars) : 'Task failure';
  return { create: [], state: 'FAILED', error: message };
}

/**
 * Pause: waits for a resume (API) or its `pauseDuration` (`delay`) / `timeout`; the execution is PAUSED meanwhile.
 * When the duration elapses, `behavior` decides: RESUME, WARN (the Pause ends WARNING), FAIL, CANCEL (the execution
 * ends CANCELLED). Its deprecated child `tasks` run after the resume, inside the Pause.
 */
function pause(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const fs = (run.flowableState ??= {});
  const children = () => withHandlers(ctx, run, task, (runs) => sequentialGroup(tasksOf(task.tasks), runs, { branch: 'tasks' }));
  if (fs.status === 'RESUMED') {
    const onResume = fs.onResume as Record<string, unknown> | undefined;
    return { ...children(), ...(onResume ? { outputs: { onResume } } : {}) };
  }
  if (fs.status === 'EXPIRED') {
    const behavior = String(task.behavior ?? 'RESUME');
    if (behavior === 'FAIL') return { create: [], state: 'FAILED', error: 'Pause duration elapsed (behavior FAIL)' };
    if (behavior === 'CANCEL') {
      log(ctx, 'WARN', 'Pause duration elapsed (behavior CANCEL): the execution is cancelled', run);
      return { create: [], exit: 'CANCELLED' };
    }
    const r = children();
    return behavior === 'WARN' && r.state === 'SUCCESS' ? { ...r, state: 'WARNING' } : r;
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

/**
 * The `onResume` inputs of the Pause tasks an execution waits on (several in parallel branches: merged, first id
 * wins): what a resume's values are checked, typed and defaulted against.
 */
export function onResumeInputs(flow: Flow, exec: Execution): Input[] {
  const byId = indexFlow(flow).byId;
  const out = new Map<string, Input>();
  for (const run of exec.taskRunList) {
    if (run.flowableState?.status !== 'PAUSED' || isTerminal(run.state.current)) continue;
    const defs = byId.get(run.taskId)?.onResume;
    if (Array.isArray(defs)) for (const d of defs as Input[]) if (!out.has(d.id)) out.set(d.id, d);
  }
  return [...out.values()];
}

function workingDirectory(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  return sequential(ctx, run, task);
}

/** The resolver of each declared flowable (model/flowable-types.ts), by its short name: the compiler checks all are here. */
const BY_NAME = {
  Sequential: sequential,
  Parallel: parallel,
  Switch: switchTask,
  If: ifTask,
  EachSequential: eachSequential,
  EachParallel: eachParallel,
  AllowFailure: allowFailure,
  Fail: fail,
  WorkingDirectory: workingDirectory,
  Pause: pause,
  DAG: dag,
  Subflow: subflowResolver,
  ForEachItem: forEachItemResolver,
  ForEach: forEach,
  LoopUntil: loopUntil,
  Exit: exit,
} satisfies Record<FlowableName, Resolver>;

/** Resolver by canonical type: the declared flowables, and ForEachItem's internal batch run. */
export const RESOLVERS: Record<string, Resolver> = {
  ...Object.fromEntries(Object.entries(BY_NAME).map(([name, r]) => [FLOWABLE[name as FlowableName], r])),
  [FOR_EACH_ITEM_BATCH]: forEachBatchResolver,
};
