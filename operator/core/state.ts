// State records: transitions with history, terminal checks and the merge of children states into a parent's.
import type { State, StateRecord } from './types.js';
import { isTerminal } from './types.js';

/** `now.toISOString()`, computed once per step clock rather than once per transition (a fan-out makes 300,000). */
let lastNow: Date | undefined;
let lastMs = NaN;
let lastIso = '';
function iso(now: Date): string {
  const ms = now.getTime();
  if (now !== lastNow || ms !== lastMs) { lastNow = now; lastMs = ms; lastIso = now.toISOString(); }
  return lastIso;
}

export function newState<S extends State>(state: S, now: Date): StateRecord<S> {
  const date = iso(now);
  return { current: state, histories: [{ state, date }], startDate: date };
}

/** Moves a record to `to` (no-op when already there), stamping end date and duration on terminal states. */
export function transition<S extends State>(record: StateRecord<S>, to: S, now: Date): void {
  if (record.current === to) return;
  const date = iso(now);
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

type Merged = 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED';
const RANK: Partial<Record<State, number>> = { WARNING: 1, FAILED: 2, KILLED: 3 };

/** The worse of a merged state and a child's state: KILLED, FAILED, WARNING, then anything else counts as SUCCESS. */
export const worseState = (merged: Merged, s: State): Merged => ((RANK[s] ?? 0) > (RANK[merged] ?? 0) ? (s as Merged) : merged);

/** Final state of a parent from the final states of its children. */
export function mergeStates(states: State[]): Merged {
  return states.reduce<Merged>(worseState, 'SUCCESS');
}
