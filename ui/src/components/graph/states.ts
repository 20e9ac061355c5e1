// Task-run states on a graph, pure: an index of an execution's task runs by task id (one pass over the list), and the
// state each node shows (one state per task, the most telling of its runs, with counts), so a layout is never redone.
import type { StateType, TaskRun } from '../../api.js';
import type { GraphModel } from './layout.js';

export interface TaskRunGroup { runs: TaskRun[]; counts: Partial<Record<StateType, number>> }
export type TaskRunIndex = Map<string, TaskRunGroup>;

/** Groups task runs by task id, counting their states. Linear in the runs. */
export function indexTaskRuns(runs: readonly TaskRun[] | undefined): TaskRunIndex {
  const index: TaskRunIndex = new Map();
  for (const run of runs ?? []) {
    let group = index.get(run.taskId);
    if (!group) index.set(run.taskId, (group = { runs: [], counts: {} }));
    group.runs.push(run);
    const s = run.state.current;
    group.counts[s] = (group.counts[s] ?? 0) + 1;
  }
  return index;
}

/**
 * Which state a node shows when its task ran several times (loop iterations): work still going on first, then the
 * worst outcome, then success; a state not listed comes last.
 */
export const STATE_PRIORITY: StateType[] = ['RUNNING', 'KILLING', 'RETRYING', 'RESTARTED', 'CREATED', 'QUEUED', 'SUBMITTED',
  'PAUSED', 'BREAKPOINT', 'FAILED', 'KILLED', 'WARNING', 'CANCELLED', 'RETRIED', 'RESUBMITTED', 'SUCCESS', 'SKIPPED'];

export interface NodeState { state: StateType; count: number; counts: Partial<Record<StateType, number>> }

/** The state of one task from its group (undefined when it has not run). */
export function groupState(group: TaskRunGroup | undefined): NodeState | undefined {
  if (!group || group.runs.length === 0) return undefined;
  const present = Object.keys(group.counts) as StateType[];
  const rank = (s: StateType) => { const i = STATE_PRIORITY.indexOf(s); return i < 0 ? STATE_PRIORITY.length : i; };
  const state = present.reduce((a, b) => (rank(b) < rank(a) ? b : a));
  return { state, count: group.runs.length, counts: group.counts };
}

/** Each task node's state, by node id: linear in the model's nodes (each looks its task up in the index). */
export function nodeStates(model: GraphModel, index: TaskRunIndex): Map<string, NodeState> {
  const out = new Map<string, NodeState>();
  for (const n of model.nodes) {
    if (!n.taskId || n.kind === 'trigger') continue;
    const s = groupState(index.get(n.taskId));
    if (s) out.set(n.id, s);
  }
  return out;
}
