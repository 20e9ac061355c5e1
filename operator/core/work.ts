// Work an execution record implies, derived from its state alone (level-based): timers to arm, attempts that must be
// running, child executions to ensure. The controller uses it after every step and when it recovers after a crash.
import { parseDuration } from '../model/index.js';
import type { EngineEvent } from './engine-types.js';
import { indexFlow, isFlowableType } from './flow-index.js';
import { LOOP_WAITING } from './loops.js';
import { changedSince } from './run-index.js';
import { taskForRun } from './runs.js';
import { pendingChildren } from './subflow.js';
import type { Execution, Flow, Task, TaskRun } from './types.js';
import { isTerminal } from './types.js';

export interface Timer { at: string; event: EngineEvent | { type: 'start-due' } }

export interface PendingWork {
  timers: Timer[];
  /** Runnable attempts that should be running (launch them unless already in flight). */
  running: { taskRunId: string; attempt: number; killing: boolean }[];
  /** Subflow and ForEachItem `_items` runs with a child execution requested and not reported ended (pendingChildren). */
  subflows: TaskRun[];
}

function timeoutMs(task: Task | undefined): number | undefined {
  if (!task?.timeout || typeof task.timeout !== 'string' || task.timeout.includes('{{')) return undefined;
  try { return parseDuration(task.timeout); } catch { return undefined; }
}

/**
 * `since`: the record this one was stepped from, whose work is already under way: runs that are the very objects of
 * it at the same place (unchanged) are skipped, so a step's work costs the runs it changed (a fan-out's results step).
 */
export function pendingWork(flow: Flow, exec: Execution, since?: Execution): PendingWork {
  const work: PendingWork = { timers: [], running: [], subflows: [] };
  if (exec.state.current === 'CREATED' && exec.scheduleDate) work.timers.push({ at: exec.scheduleDate, event: { type: 'start-due' } });
  if (exec.state.current === 'RETRYING' && exec.scheduleDate) work.timers.push({ at: exec.scheduleDate, event: { type: 'timer', kind: 'flow-retry' } });
  if (isTerminal(exec.state.current)) return work;
  const index = indexFlow(flow);
  const unchanged = since?.taskRunList;
  // Stepped from `since`: the positions its steps placed runs at (run-index.ts), not a walk of the whole list.
  const changed = since ? changedSince(exec, since) : undefined;
  const count = changed ? changed.length : exec.taskRunList.length;
  for (let k = 0; k < count; k++) {
    const i = changed ? changed[k]! : k;
    const run = exec.taskRunList[i]!;
    if (isTerminal(run.state.current) || (unchanged && unchanged[i] === run)) continue;
    const task = index.byId.get(run.taskId);
    if (run.state.current === 'RETRYING' && run.nextAttemptDate) {
      work.timers.push({ at: run.nextAttemptDate, event: { type: 'timer', kind: 'retry', taskRunId: run.id } });
      continue;
    }
    if (run.resumeDate && run.flowableState?.status === 'PAUSED') {
      work.timers.push({ at: run.resumeDate, event: { type: 'timer', kind: 'pause', taskRunId: run.id } });
    }
    if (run.resumeDate && run.flowableState?.status === LOOP_WAITING) {
      work.timers.push({ at: run.resumeDate, event: { type: 'timer', kind: 'loop', taskRunId: run.id } });
    }
    if (pendingChildren(run).length) { work.subflows.push(run); continue; }
    const isRunnable = !isFlowableType((task ?? taskForRun(flow, exec, run)).type);
    const att = run.attempts[run.attempts.length - 1];
    if (!isRunnable || !att || isTerminal(att.state.current)) continue;
    work.running.push({ taskRunId: run.id, attempt: run.attempts.length, killing: run.state.current === 'KILLING' });
    const limit = timeoutMs(task);
    if (limit !== undefined && run.state.current === 'RUNNING') {
      work.timers.push({
        at: new Date(Date.parse(att.state.startDate) + limit).toISOString(),
        event: { type: 'timer', kind: 'timeout', taskRunId: run.id, attempt: run.attempts.length },
      });
    }
  }
  return work;
}
