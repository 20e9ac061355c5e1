// The embedded controller's in-process fast path: attempts of pure, quick tasks (RunnablePlugin.inline: Return, Log,
// Labels, OutputValues, Assert, KV) run within the engine batch that launched them, and their outcomes go back to the
// engine before the record is written, so a chain of such tasks costs one store write instead of a launch, a report
// through the queue and a write each. The record ends with the same task runs, attempts, outputs and logs as through
// the launcher (the engine takes the same events); only the intermediate states (an attempt RUNNING) are not written
// on their own. Crash safety is unchanged: an outcome counts once the record holding it is written; until then a
// restart re-runs the attempt, as it re-runs one whose report was not recorded yet.
// Bounded per batch (INLINE_MAX_ATTEMPTS, INLINE_BUDGET_MS) so that a long chain or a wide fan-out still yields to
// other work: what is left over is launched as usual after the write. Each round steps the record the previous one
// made in place (engine.ts stepOwned: no copy of the growing record per task), unless the flow may make a step ask
// for values to fetch (kv(), read(), file functions, render()): such a step runs again, so it must run on a copy.
import type { StepResult } from '../core/engine.js';
import type { Action, EngineEvent, TaskOutcome } from '../core/engine-types.js';
import { copyData } from '../core/keyed.js';
import { runById } from '../core/run-index.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { STEP_READ_FUNCTIONS } from './step-reads.js';

/** Attempts run inline in one batch at most (the rest are launched). */
export const INLINE_MAX_ATTEMPTS = 200;
/** Time of inline work in one batch after which the rest are launched (ms). */
export const INLINE_BUDGET_MS = 10;

/** A call of a template function whose values a step fetches before running again (step-reads.ts). */
const STEP_READS = new RegExp(`\\b(?:${STEP_READ_FUNCTIONS.join('|')})\\s*\\(`);
const readsOf = new WeakMap<Flow, boolean>();

/** Whether a step of this flow may ask for values to fetch (then it may run twice: on a copy of its record). */
export function mayReadInStep(flow: Flow): boolean {
  let reads = readsOf.get(flow);
  if (reads === undefined) { reads = STEP_READS.test(JSON.stringify(flow)); readsOf.set(flow, reads); }
  return reads;
}

/** A step of this flow asked for values although its text does not show it (a name built at run time): copies from now on. */
export function readsInStep(flow: Flow): void { readsOf.set(flow, true); }

/** The outcome of an attempt run at once in this process, or undefined when it must be launched. */
export type RunInline = (flow: Flow, exec: Execution, run: TaskRun, attempt: number) => Promise<TaskOutcome> | undefined;

/**
 * Runs the inline-capable launches of `first` (and those their outcomes cause, round after round) and steps the engine
 * with their outcomes; returns the last record and every action not consumed, in order.
 */
export async function stepInline(
  flow: Flow, first: StepResult, runInline: RunInline, decide: (exec: Execution, events: EngineEvent[]) => Promise<StepResult>,
  budget: { attempts: number; ms: number } = { attempts: INLINE_MAX_ATTEMPTS, ms: INLINE_BUDGET_MS },
): Promise<StepResult> {
  let { execution, actions } = first;
  const t0 = performance.now();
  let ran = 0;
  for (;;) {
    const started: { taskRunId: string; attempt: number; outcome: Promise<TaskOutcome> }[] = [];
    const kept: Action[] = [];
    for (const a of actions) {
      if (a.type === 'launch' && ran < budget.attempts && performance.now() - t0 < budget.ms) {
        const run = runById(execution, a.taskRunId);
        const outcome = run && runInline(flow, execution, run, a.attempt);
        if (outcome) { started.push({ taskRunId: a.taskRunId, attempt: a.attempt, outcome }); ran++; continue; }
      }
      kept.push(a);
    }
    if (!started.length) return { execution, actions };
    const events: EngineEvent[] = [];
    // A copy: outputs rendered from the variables may share objects with the record's outputs tree, which a step in
    // place goes on changing.
    for (const s of started) events.push({ type: 'task-result', taskRunId: s.taskRunId, attempt: s.attempt, outcome: copyData(await s.outcome) });
    const next = await decide(execution, events);
    execution = next.execution;
    actions = [...kept, ...next.actions];
  }
}
