// The Schedule trigger's decisions, pure: from the durable state, the trigger, the time and whether its previous
// execution still runs, which scheduled date (if any) to start now and the new state. The scheduler (./scheduler.ts)
// applies it: create the execution (deterministic id from the date), then save the state with compare-and-set.
//
// Semantics (Kestra's): a new or changed schedule starts from the current time (or from the source's deprecated
// `backfill.start`); dates are handled oldest first, one
// execution at a time (no overlap: a due date waits until the previous execution of the trigger is terminal, then runs
// with its own date); after a restart, the dates missed while nothing ran follow `recoverMissedSchedules` (ALL: every
// one, in order; LAST: only the latest; NONE: none); dates falling while the trigger or its flow is disabled are
// dropped. A backfill replays the dates in [start, end] (end: the request time when absent) one by one, after the
// normal schedule's due dates; it can be paused, and disappears when done. `lateMaximumDelay` skips the dates that
// could not start within that delay.
import type { Label, Trigger } from '../../core/types.js';
import { isDuration, parseDuration } from '../../model/duration.js';
import { formatDate, nextAfter, previousBefore, scheduleVariables, type CronSpec } from './cron.js';

export const RECOVER_POLICIES = ['ALL', 'NONE', 'LAST'] as const;
export type RecoverPolicy = (typeof RECOVER_POLICIES)[number];

export interface BackfillState {
  /** Distinguishes two backfills over the same dates (their executions get different ids). */
  id: string;
  start: string;
  end?: string;
  /** The next date this backfill will run (Kestra's `currentDate`). */
  currentDate: string;
  paused: boolean;
  inputs?: Record<string, unknown>;
  labels?: Label[];
  /** When it was requested: its end when `end` is absent. */
  created: string;
}

/** Durable JSON state of one Schedule trigger (TriggerStateRecord.state). Dates are UTC ISO strings. */
export interface ScheduleState {
  /** cron + withSeconds + timezone the cursor was computed with: a changed schedule restarts from now. */
  signature?: string;
  /** Every due date up to this one is handled (run or skipped). */
  cursor?: string;
  /** Last scheduled date that started an execution (Kestra's `date`). */
  date?: string;
  /** The execution started last; while it is not terminal the trigger is locked (no overlap). */
  executionId?: string;
  backfill?: BackfillState;
}

export interface Candidate {
  date: Date;
  backfill: boolean;
  /** Execution id seed: the date (backfills: with the backfill id, a backfill replays dates that already ran). */
  dedupeKey: string;
  /** `trigger.*` variables: date, next, previous (ISO 8601 in the trigger's zone). */
  variables: Record<string, unknown>;
  inputs?: Record<string, unknown>;
  labels?: Label[];
}

export interface DecideInput {
  state: ScheduleState;
  trigger: Trigger;
  now: Date;
  /** The trigger's last execution is not terminal yet. */
  running?: boolean;
  /** Neither the flow nor the trigger is disabled (source or API). Default true. */
  active?: boolean;
  /** First evaluation since the scheduler started: missed dates follow recoverMissedSchedules. */
  recovery?: boolean;
  /** Global default policy (TRIGGER_RECOVER_MISSED_SCHEDULES), ALL when absent. */
  defaultPolicy?: RecoverPolicy;
}

export interface Decision {
  /** The date to start now, if any. */
  candidate?: Candidate;
  /** The new state when the candidate is started (see `started`) or skipped by conditions (as is). */
  state: ScheduleState;
  /** When to evaluate again (undefined: only when something changes, e.g. the running execution ends). */
  wakeAt?: Date;
}

export function cronSpecOf(trigger: Trigger): CronSpec {
  return {
    cron: String(trigger.cron ?? ''),
    withSeconds: trigger.withSeconds === true,
    ...(typeof trigger.timezone === 'string' && trigger.timezone ? { timezone: trigger.timezone } : {}),
  };
}

export const signatureOf = (spec: CronSpec): string => JSON.stringify([spec.cron.trim(), !!spec.withSeconds, spec.timezone ?? 'UTC']);

export function parsePolicy(value: unknown): RecoverPolicy | undefined {
  const v = typeof value === 'string' ? value.trim().toUpperCase() : undefined;
  return (RECOVER_POLICIES as readonly string[]).includes(v ?? '') ? (v as RecoverPolicy) : undefined;
}

export function policyOf(trigger: Trigger, defaultPolicy: RecoverPolicy = 'ALL'): RecoverPolicy {
  return parsePolicy(trigger.recoverMissedSchedules) ?? defaultPolicy;
}

const iso = (d: Date): string => d.toISOString();
const minDate = (...ds: (Date | undefined)[]): Date | undefined =>
  ds.filter((d): d is Date => !!d).sort((a, b) => a.getTime() - b.getTime())[0];

/** The last due date at or before `now` (undefined when none after `after`). */
function lastDueAtOrBefore(spec: CronSpec, after: Date, now: Date): Date | undefined {
  const first = nextAfter(spec, after);
  if (!first || first > now) return undefined;
  const following = nextAfter(spec, now);
  const last = following ? previousBefore(spec, following) : undefined;
  return last && last > after && last <= now ? last : first;
}

/** Applies the missed-schedule policy to the cursor (first evaluation after a restart). */
function recover(spec: CronSpec, cursor: Date, now: Date, policy: RecoverPolicy): Date {
  if (policy === 'ALL') return cursor;
  const last = lastDueAtOrBefore(spec, cursor, now);
  if (!last) return cursor;
  if (policy === 'NONE') return last;
  const before = previousBefore(spec, last);
  return before && before > cursor ? before : cursor;
}

/** The flow source's (deprecated, Kestra) `backfill.start`: a new schedule runs every date since then. */
function sourceBackfillStart(trigger: Trigger, now: Date): Date | undefined {
  const raw = (trigger.backfill as { start?: unknown } | undefined)?.start;
  const start = typeof raw === 'string' ? new Date(raw) : undefined;
  return start && !Number.isNaN(start.getTime()) && start < now ? new Date(start.getTime() - 1) : undefined;
}

/** The backfill's end: its `end`, or when it was requested. */
const backfillEnd = (b: BackfillState): Date => new Date(b.end ?? b.created);

function backfillCandidate(spec: CronSpec, b: BackfillState, now: Date): { date?: Date; done: boolean } {
  const current = new Date(b.currentDate);
  const end = backfillEnd(b);
  if (current > end) return { done: true };
  if (current > now) return { done: false };
  return { date: current, done: false };
}

/** One decision; pure. */
export function decide(input: DecideInput): Decision {
  const { trigger, now } = input;
  const spec = cronSpecOf(trigger);
  const signature = signatureOf(spec);
  let state: ScheduleState = { ...input.state };
  const fresh = !state.cursor || state.signature !== signature;
  if (fresh) state = { ...state, signature, cursor: iso(sourceBackfillStart(trigger, now) ?? now) };
  if (!input.running && state.executionId) {
    const { executionId: _done, ...rest } = state;
    state = rest;
  }
  let cursor = new Date(state.cursor!);

  if (input.active === false) {
    // Dates falling while disabled are dropped: the cursor follows the clock.
    const last = lastDueAtOrBefore(spec, cursor, now);
    if (last) state = { ...state, cursor: iso(last) };
    return { state, wakeAt: nextAfter(spec, last ?? cursor) };
  }
  if (input.recovery && !fresh) {
    cursor = recover(spec, cursor, now, policyOf(trigger, input.defaultPolicy));
    state = { ...state, cursor: iso(cursor) };
  }
  if (input.running) return { state };

  let due = nextAfter(spec, cursor);
  // lateMaximumDelay: a date not started within the delay is skipped (backfills are never late).
  const maxDelay = typeof trigger.lateMaximumDelay === 'string' && isDuration(trigger.lateMaximumDelay) ? parseDuration(trigger.lateMaximumDelay) : undefined;
  if (maxDelay !== undefined && due && due.getTime() + maxDelay < now.getTime()) {
    const firstInTime = nextAfter(spec, new Date(now.getTime() - maxDelay - 1));
    const lastLate = firstInTime ? previousBefore(spec, firstInTime) : lastDueAtOrBefore(spec, cursor, now);
    if (lastLate && lastLate > cursor) state = { ...state, cursor: iso(lastLate) };
    due = firstInTime;
  }
  if (due && due <= now) {
    return {
      candidate: { date: due, backfill: false, dedupeKey: iso(due), variables: scheduleVariables(spec, due) },
      state: { ...state, cursor: iso(due) },
    };
  }

  let backfillWake: Date | undefined;
  if (state.backfill && !state.backfill.paused) {
    const b = state.backfill;
    const { date, done } = backfillCandidate(spec, b, now);
    if (done) {
      const { backfill: _finished, ...rest } = state;
      state = rest;
    } else if (date) {
      const following = nextAfter(spec, date);
      return {
        candidate: {
          date, backfill: true, dedupeKey: `backfill:${b.id}:${iso(date)}`, variables: scheduleVariables(spec, date),
          ...(b.inputs ? { inputs: b.inputs } : {}), ...(b.labels ? { labels: b.labels } : {}),
        },
        state: { ...state, backfill: { ...b, currentDate: iso(following ?? new Date(backfillEnd(b).getTime() + 1)) } },
      };
    } else backfillWake = new Date(b.currentDate);
  }
  return { state, wakeAt: minDate(due, backfillWake) };
}

/** The state once the candidate's execution exists: the lock and, for the normal schedule, the last date. */
export function started(state: ScheduleState, candidate: Candidate, executionId: string): ScheduleState {
  return { ...state, executionId, ...(candidate.backfill ? {} : { date: iso(candidate.date) }) };
}

/**
 * Decides until a date is accepted by `accept` (the trigger's conditions) or none is due: dates refused are skipped
 * (the cursor moves past them, nothing is created). Pure apart from what `accept` does.
 */
export async function decideWithConditions(input: DecideInput, accept: (c: Candidate) => Promise<boolean> | boolean, maxSkips = 10_000): Promise<Decision & { skipped: Candidate[] }> {
  const skipped: Candidate[] = [];
  let current = input;
  for (;;) {
    const d = decide(current);
    if (!d.candidate || await accept(d.candidate)) return { ...d, skipped };
    skipped.push(d.candidate);
    if (skipped.length >= maxSkips) return { state: d.state, wakeAt: current.now, skipped };
    current = { ...current, state: d.state, recovery: false };
  }
}

/** Next date the trigger will run (for display): the first due date after the cursor, or after `now`. */
export function nextExecutionDate(state: ScheduleState, trigger: Trigger, now: Date): Date | undefined {
  const spec = cronSpecOf(trigger);
  const valid = state.cursor && state.signature === signatureOf(spec);
  return nextAfter(spec, valid ? new Date(state.cursor!) : now);
}

// ---- Backfill operations (used by the API; pure state transformers) ----

export class BackfillError extends Error {
  constructor(message: string, readonly field?: string) { super(message); this.name = 'BackfillError'; }
}

export interface BackfillRequest { start: Date; end?: Date; inputs?: Record<string, unknown>; labels?: Label[] }

export function startBackfill(state: ScheduleState, trigger: Trigger, req: BackfillRequest, now: Date): ScheduleState {
  if (req.end && req.end < req.start) throw new BackfillError('backfill.end must not be before backfill.start', 'backfill.end');
  if (req.start > now) throw new BackfillError('backfill.start must not be in the future', 'backfill.start');
  const spec = cronSpecOf(trigger);
  const first = nextAfter(spec, new Date(req.start.getTime() - 1));
  if (!first) throw new BackfillError('the cron expression has no date after backfill.start', 'backfill.start');
  return {
    ...state,
    backfill: {
      id: iso(now), start: iso(req.start), ...(req.end ? { end: iso(req.end) } : {}), currentDate: iso(first), paused: false,
      ...(req.inputs ? { inputs: req.inputs } : {}), ...(req.labels ? { labels: req.labels } : {}), created: iso(now),
    },
  };
}

export function pauseBackfill(state: ScheduleState, paused: boolean): ScheduleState {
  if (!state.backfill) throw new BackfillError('No backfill found');
  return { ...state, backfill: { ...state.backfill, paused } };
}

export function deleteBackfill(state: ScheduleState): ScheduleState {
  if (!state.backfill) throw new BackfillError('No backfill found');
  const { backfill: _removed, ...rest } = state;
  return rest;
}

/** Removes the lock on a running execution (the next due date no longer waits for it). */
export function unlock(state: ScheduleState): ScheduleState {
  if (!state.executionId) throw new BackfillError('Trigger is not locked');
  const { executionId: _released, ...rest } = state;
  return rest;
}

export { formatDate };
