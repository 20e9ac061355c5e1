// Next-task resolution for lists of tasks: sequential, parallel, DAG, and a container with `errors` and `finally`.
// Static functions of (tasks, existing child runs) → children to create or the list's final state.
import type { ChildSpec } from './runs.js';
import { mergeStates } from './state.js';
import type { Task, TaskRun } from './types.js';
import { isTerminal } from './types.js';

export type Final = 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED';
/** Children to create now, or nothing to do yet (`state` undefined), or the list's final state. */
export interface GroupResult { create: ChildSpec[]; state?: Final }

type Spec = Omit<ChildSpec, 'task'>;

const failed = (r: TaskRun) => r.state.current === 'FAILED' || r.state.current === 'KILLED';
/** The (first) run of a task among `runs`; long lists go through a map, so a group is O(tasks + runs), not O(tasks × runs). */
function runLookup(runs: readonly TaskRun[]): (task: Task) => TaskRun | undefined {
  if (runs.length <= 8) return (task) => runs.find((r) => r.taskId === task.id);
  const byTask = new Map<string, TaskRun>();
  for (const r of runs) if (!byTask.has(r.taskId)) byTask.set(r.taskId, r);
  return (task) => byTask.get(task.id);
}

export function sequentialGroup(tasks: Task[], runs: readonly TaskRun[], spec: Spec): GroupResult {
  const states: TaskRun['state']['current'][] = [];
  const runOf = runLookup(runs);
  for (const task of tasks) {
    const run = runOf(task);
    if (!run) return { create: [{ task, ...spec }] };
    if (!isTerminal(run.state.current)) return { create: [] };
    states.push(run.state.current);
    if (failed(run)) break;
  }
  return { create: [], state: mergeStates(states) };
}

/** `concurrent` 0 or undefined = no limit. `active` counts other running children sharing the limit. */
export function parallelGroup(tasks: Task[], runs: readonly TaskRun[], spec: Spec, concurrent = 0, active = 0): GroupResult {
  const mine = tasks.map(runLookup(runs));
  let running = active + mine.filter((r) => r && !isTerminal(r.state.current)).length;
  const anyFailed = mine.some((r) => r && failed(r));
  const create: ChildSpec[] = [];
  if (!anyFailed) {
    tasks.forEach((task, i) => {
      if (mine[i] || (concurrent > 0 && running >= concurrent)) return;
      create.push({ task, ...spec });
      running++;
    });
  }
  if (create.length || mine.some((r) => r && !isTerminal(r.state.current))) return { create };
  if (!anyFailed && mine.some((r) => !r)) return { create: [] };
  return { create: [], state: mergeStates(mine.filter((r): r is TaskRun => !!r).map((r) => r.state.current)) };
}

export interface DagNode { task: Task; dependsOn?: string[] }

export function dagGroup(nodes: DagNode[], runs: readonly TaskRun[], concurrent = 0): GroupResult {
  const byTask = new Map(runs.map((r) => [r.taskId, r]));
  const ok = (id: string) => { const r = byTask.get(id); return !!r && isTerminal(r.state.current) && !failed(r); };
  const anyFailed = runs.some(failed);
  let running = runs.filter((r) => !isTerminal(r.state.current)).length;
  const create: ChildSpec[] = [];
  if (!anyFailed) {
    for (const n of nodes) {
      if (byTask.has(n.task.id) || (concurrent > 0 && running >= concurrent)) continue;
      if ((n.dependsOn ?? []).every(ok)) { create.push({ task: n.task, branch: 'tasks' }); running++; }
    }
  }
  if (create.length || running > 0) return { create };
  if (!anyFailed && nodes.some((n) => !byTask.has(n.task.id))) return { create: [], state: 'FAILED' }; // unreachable nodes
  return { create: [], state: mergeStates(runs.map((r) => r.state.current)) };
}

/**
 * A list of tasks with its `errors` and `finally` handlers: when the main list fails, `errors` run (sequentially), then
 * `finally` always runs. The container stays FAILED after errors ran; a failing `finally` fails it.
 */
export function container(main: GroupResult, runs: readonly TaskRun[], errors: Task[], fin: Task[], spec: Omit<Spec, 'branch'> = {}): GroupResult {
  if (main.create.length || main.state === undefined) return main;
  let state: Final = main.state;
  if (state === 'FAILED' && errors.length) {
    const r = sequentialGroup(errors, runs.filter((x) => x.branch === 'errors'), { ...spec, branch: 'errors' });
    if (r.create.length || r.state === undefined) return r;
  }
  if (state !== 'KILLED' && fin.length) {
    const r = sequentialGroup(fin, runs.filter((x) => x.branch === 'finally'), { ...spec, branch: 'finally' });
    if (r.create.length || r.state === undefined) return r;
    if (r.state === 'FAILED' || r.state === 'KILLED') state = 'FAILED';
  }
  return { create: [], state };
}
