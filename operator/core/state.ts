// State records: transitions with history, terminal checks and the merge of children states into a parent's.
import type { State, StateRecord } from './types.js';
import { isTerminal } from './types.js';

export function newState<S extends State>(state: S, now: Date): StateRecord<S> {
  const date = now.toISOString();
  return { current: state, histories: [{ state, date }], startDate: date };
}

/** Moves a record to `to` (no-op when already there), stamping end date and duration on terminal states. */
export function transition<S extends State>(record: StateRecord<S>, to: S, now: Date): void {
  if (record.current === to) return;
  const date = now.toISOString();
  record.current = to;
  record.histories.push({ state: to, date });
  if (isTerminal(to)) {
    record.endDate = date;
    record.duration = isoDuration(now.getTime() - Date.parse(record.startDate));
  } else {
    delete record.endDate;
    delete record.duration;
  }
}

export function isoDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return `PT${Number(s.toFixed(3))}S`;
}

/** A failed state that stops its siblings (FAILED or KILLED). */
export const isFailure = (s: State): boolean => s === 'FAILED' || s === 'KILLED';

/** Final state of a parent from the final states of its children. */
export function mergeStates(states: State[]): 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED' {
  if (states.includes('KILLED')) return 'KILLED';
  if (states.includes('FAILED')) return 'FAILED';
  if (states.includes('WARNING')) return 'WARNING';
  return 'SUCCESS';
}
