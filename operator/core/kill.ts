// Ending an execution before its tasks end: a kill (API, Exit with KILLED) moves it to KILLING and stops what runs;
// an Exit task (or a Pause expiring with behavior CANCEL) ends it at once in the state it names.
import type { StepContext } from './engine-types.js';
import type { ExitState } from './flowable-kit.js';
import { FLOWABLE, isFlowableType } from './flow-index.js';
import { childrenOf, completeRun, endAttempt, log, taskOf } from './runs.js';
import { childSlots, endSubflowAttempt } from './subflow.js';
import { transition } from './state.js';
import type { TaskRun } from './types.js';
import { isTerminal } from './types.js';

/** Kill: KILLING, running attempts and child executions asked to stop; the engine ends it KILLED once all runs ended. */
export function killExecution(ctx: StepContext): void {
  const { exec, deps } = ctx;
  if (exec.state.current === 'CREATED' || exec.state.current === 'QUEUED' || exec.state.current === 'RETRYING') {
    transition(exec.state, 'KILLED', deps.now);
    ctx.actions.push({ type: 'ended', state: 'KILLED' });
    return;
  }
  transition(exec.state, 'KILLING', deps.now);
  delete exec.ending; // a kill while afterExecution tasks run ends the execution KILLED
  for (const run of exec.taskRunList) {
    if (isTerminal(run.state.current)) continue;
    const task = taskOf(ctx, run);
    const att = run.attempts[run.attempts.length - 1];
    const children = childSlots(run);
    if (children.length) {
      for (const c of children) if (!c.slot.ended) ctx.actions.push({ type: 'kill-execution', executionId: c.executionId });
      completeRun(ctx, run, 'KILLED');
      endSubflowAttempt(ctx, run);
    } else if (!isFlowableType(task.type) && att && att.state.current === 'RUNNING' && run.state.current === 'RUNNING') {
      transition(run.state, 'KILLING', deps.now);
      transition(att.state, 'KILLING', deps.now);
      ctx.actions.push({ type: 'kill-task', taskRunId: run.id, attempt: run.attempts.length });
    } else if (isFlowableType(task.type) && (task.type !== FLOWABLE.Pause || childrenOf(ctx, run.id).length > 0)) {
      // A flowable ends KILLED once its children have (a waiting Pause has none: it ends at once).
      transition(run.state, 'KILLING', deps.now);
    } else {
      completeRun(ctx, run, 'KILLED');
    }
  }
}

/**
 * Ends the execution from `run` (an Exit task) in `state`. KILLED is a kill (Kestra's: the Exit run KILLED, the rest
 * killed, then KILLED). Any other state ends it at once: the Exit run and its parents take the state (CANCELLED, which
 * task runs never take, becomes KILLED for them), every other unfinished run is stopped and ends KILLED, and no further
 * task (nor `errors`/`finally`) runs.
 */
export function exitExecution(ctx: StepContext, run: TaskRun, state: ExitState): void {
  const { exec, deps } = ctx;
  log(ctx, state === 'SUCCESS' ? 'INFO' : 'WARN', `Task '${run.taskId}' ends the execution in ${state}`, run);
  if (state === 'KILLED') {
    completeRun(ctx, run, 'KILLED');
    killExecution(ctx);
    return;
  }
  const runState = state === 'CANCELLED' ? 'KILLED' : state;
  for (let r: TaskRun | undefined = run; r; r = r.parentTaskRunId ? ctx.runs.byId.get(r.parentTaskRunId) : undefined) {
    if (isTerminal(r.state.current)) continue;
    transition(r.state, runState, deps.now);
    endSubflowAttempt(ctx, r);
  }
  for (const other of exec.taskRunList) {
    if (isTerminal(other.state.current)) continue;
    const att = other.attempts[other.attempts.length - 1];
    const children = childSlots(other);
    if (children.length) {
      for (const c of children) if (!c.slot.ended) ctx.actions.push({ type: 'kill-execution', executionId: c.executionId });
    } else if (att && !isTerminal(att.state.current)) {
      endAttempt(ctx, other, other.attempts.length, 'KILLED');
      ctx.actions.push({ type: 'kill-task', taskRunId: other.id, attempt: other.attempts.length });
    }
    completeRun(ctx, other, 'KILLED');
    endSubflowAttempt(ctx, other);
  }
  // From an afterExecution task or a listener, it stops them, yet the execution keeps the state decided before.
  const final = exec.ending?.state ?? state;
  delete exec.ending;
  transition(exec.state, final, deps.now);
  ctx.actions.push({ type: 'ended', state: final });
}
