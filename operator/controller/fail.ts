// Ending an execution the engine cannot carry on (its flow revision is gone, its record makes the engine throw): the
// record becomes FAILED with the reason in `error`, its unfinished task runs and attempts FAILED too. Pure, and
// defensive: the record may be the very thing that is broken, so nothing in it is trusted to have the usual shape.
import { transition } from '../core/state.js';
import type { Execution, State, StateRecord } from '../core/types.js';
import { isTerminal } from '../core/types.js';

export interface Failed {
  execution: Execution;
  /** Attempts that were running: the launcher stops them. */
  stopped: { taskRunId: string; attempt: number }[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Moves a possibly malformed state record to FAILED (a fresh record when it has no usable shape). */
function fail<S extends State>(holder: { state?: unknown }, now: Date): boolean {
  const rec = holder.state;
  if (isRecord(rec) && typeof rec.current === 'string' && Array.isArray(rec.histories) && typeof rec.startDate === 'string') {
    if (isTerminal(rec.current as State)) return false;
    transition(rec as unknown as StateRecord<S>, 'FAILED' as S, now);
    return true;
  }
  const date = now.toISOString();
  holder.state = { current: 'FAILED', histories: [{ state: 'FAILED', date }], startDate: date, endDate: date, duration: 'PT0S' };
  return true;
}

export function failedRecord(exec: Execution, reason: string, now: Date): Failed {
  const execution = structuredClone(exec);
  const stopped: Failed['stopped'] = [];
  const runs: unknown[] = Array.isArray(execution.taskRunList) ? execution.taskRunList : [];
  for (const run of runs) {
    if (!isRecord(run)) continue;
    if (!fail(run, now)) continue;
    const attempts = Array.isArray(run.attempts) ? run.attempts : [];
    const last = attempts[attempts.length - 1] as { state?: unknown } | undefined;
    if (isRecord(last) && fail(last, now) && typeof run.id === 'string') stopped.push({ taskRunId: run.id, attempt: attempts.length });
  }
  fail(execution as { state?: unknown }, now);
  execution.error = reason;
  return { execution, stopped };
}
