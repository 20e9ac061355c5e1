// Decisions of the Schedule trigger with an injected clock: normal ticks, downtime under each recovery policy,
// no overlap, disabled, conditions, changed schedules, and backfills (end, pause, resume, progress, delete).
import { describe, expect, it } from 'vitest';
import type { Trigger } from '../../core/types.js';
import {
  decide, decideWithConditions, deleteBackfill, nextExecutionDate, pauseBackfill, startBackfill, started, unlock,
  BackfillError, type Candidate, type DecideInput, type RecoverPolicy, type ScheduleState,
} from './decide.js';

const T = 'ai.service.plugin.core.trigger.Schedule';
const hourly = (extra: Partial<Trigger> = {}): Trigger => ({ id: 'sched', type: T, cron: '0 * * * *', ...extra });
const at = (s: string) => new Date(s);

/** Runs decisions the way the scheduler does: each candidate is started (and ends at once unless `keepRunning`). */
function run(trigger: Trigger, state: ScheduleState, now: Date, opts: Partial<DecideInput> = {}): { dates: string[]; state: ScheduleState } {
  const dates: string[] = [];
  let s = state;
  let recovery = opts.recovery ?? false;
  for (let i = 0; i < 100; i++) {
    const d = decide({ ...opts, state: s, trigger, now, recovery });
    recovery = false;
    if (!d.candidate) return { dates, state: d.state };
    dates.push((d.candidate.backfill ? 'B ' : '') + d.candidate.date.toISOString());
    s = started(d.state, d.candidate, `exec-${i}`);
  }
  throw new Error('too many');
}

describe('normal schedule', () => {
  it('a new trigger starts from now: nothing before, the next date when it is due', () => {
    const first = decide({ state: {}, trigger: hourly(), now: at('2026-05-10T10:20:00Z') });
    expect(first.candidate).toBeUndefined();
    expect(first.state.cursor).toBe('2026-05-10T10:20:00.000Z');
    expect(first.wakeAt?.toISOString()).toBe('2026-05-10T11:00:00.000Z');
    const tick = decide({ state: first.state, trigger: hourly(), now: at('2026-05-10T11:00:00.003Z') });
    expect(tick.candidate).toMatchObject({ backfill: false, dedupeKey: '2026-05-10T11:00:00.000Z' });
    expect(tick.candidate!.variables).toEqual({ date: '2026-05-10T11:00:00Z', next: '2026-05-10T12:00:00Z', previous: '2026-05-10T10:00:00Z' });
    expect(tick.state.cursor).toBe('2026-05-10T11:00:00.000Z');
    const s = started(tick.state, tick.candidate!, 'e1');
    expect(s).toMatchObject({ date: '2026-05-10T11:00:00.000Z', executionId: 'e1' });
  });

  it('no overlap: a due date waits while the previous execution runs, then runs with its own date', () => {
    const state: ScheduleState = { cursor: '2026-05-10T11:00:00.000Z', executionId: 'e1' };
    const trigger = hourly();
    const signature = decide({ state, trigger, now: at('2026-05-10T11:30:00Z') }).state.signature;
    const s0 = { ...state, signature };
    const waiting = decide({ state: s0, trigger, now: at('2026-05-10T12:10:00Z'), running: true });
    expect(waiting.candidate).toBeUndefined();
    expect(waiting.state).toEqual(s0);
    const after = decide({ state: s0, trigger, now: at('2026-05-10T12:40:00Z'), running: false });
    expect(after.candidate?.date.toISOString()).toBe('2026-05-10T12:00:00.000Z');
    expect(after.state.executionId).toBeUndefined();
  });

  it('a disabled trigger creates nothing and drops the dates it misses', () => {
    const s = decide({ state: {}, trigger: hourly(), now: at('2026-05-10T10:20:00Z') }).state;
    const off = decide({ state: s, trigger: hourly(), now: at('2026-05-10T13:05:00Z'), active: false });
    expect(off.candidate).toBeUndefined();
    expect(off.state.cursor).toBe('2026-05-10T13:00:00.000Z');
    expect(run(hourly(), off.state, at('2026-05-10T13:30:00Z')).dates).toEqual([]);
  });

  it('a changed cron restarts from now (no catch-up of the new expression)', () => {
    const s = decide({ state: {}, trigger: hourly(), now: at('2026-05-10T10:20:00Z') }).state;
    const changed = decide({ state: s, trigger: hourly({ cron: '*/5 * * * *' }), now: at('2026-05-10T12:02:00Z') });
    expect(changed.candidate).toBeUndefined();
    expect(changed.state.cursor).toBe('2026-05-10T12:02:00.000Z');
  });

  it('nextExecutionDate follows the cursor', () => {
    const s = decide({ state: {}, trigger: hourly(), now: at('2026-05-10T10:20:00Z') }).state;
    expect(nextExecutionDate(s, hourly(), at('2026-05-10T10:30:00Z'))?.toISOString()).toBe('2026-05-10T11:00:00.000Z');
  });
});

describe('downtime of 4 intervals (down from 10:20, back at 14:30)', () => {
  const base = decide({ state: {}, trigger: hourly(), now: at('2026-05-10T10:20:00Z') }).state;
  const all = ['2026-05-10T11:00:00.000Z', '2026-05-10T12:00:00.000Z', '2026-05-10T13:00:00.000Z', '2026-05-10T14:00:00.000Z'];
  it.each([
    ['ALL', undefined, all],
    ['LAST', undefined, ['2026-05-10T14:00:00.000Z']],
    ['NONE', undefined, []],
    ['per-trigger LAST over a global NONE', 'NONE', ['2026-05-10T14:00:00.000Z']],
  ] as [string, RecoverPolicy | undefined, string[]][])('%s', (name, globalDefault, expected) => {
    const policy = name.startsWith('per-trigger') ? 'LAST' : name;
    const trigger = hourly(globalDefault ? { recoverMissedSchedules: policy } : {});
    const defaultPolicy = (globalDefault ?? policy) as RecoverPolicy;
    const { dates, state } = run(trigger, base, at('2026-05-10T14:30:00Z'), { recovery: true, defaultPolicy });
    expect(dates).toEqual(expected);
    expect(state.cursor).toBe('2026-05-10T14:00:00.000Z');
    expect(run(trigger, state, at('2026-05-10T15:00:00Z'), { defaultPolicy }).dates).toEqual(['2026-05-10T15:00:00.000Z']);
  });

  it('the global default is ALL', () => {
    expect(run(hourly(), base, at('2026-05-10T14:30:00Z'), { recovery: true }).dates).toEqual(all);
  });

  it('without the recovery flag (scheduler up, execution long) every waiting date runs in order', () => {
    expect(run(hourly({ recoverMissedSchedules: 'NONE' }), base, at('2026-05-10T12:30:00Z')).dates)
      .toEqual(['2026-05-10T11:00:00.000Z', '2026-05-10T12:00:00.000Z']);
  });
});

describe('conditions', () => {
  it('a date refused by the conditions is skipped without an execution', async () => {
    const daily = hourly({ cron: '0 9 * * *', conditions: [{ type: 'x' }] });
    const s = decide({ state: {}, trigger: daily, now: at('2026-05-08T10:00:00Z') }).state; // a Friday
    const weekdays = (c: Candidate) => ![0, 6].includes(c.date.getUTCDay());
    const sat = await decideWithConditions({ state: s, trigger: daily, now: at('2026-05-09T09:00:00Z') }, weekdays);
    expect(sat.candidate).toBeUndefined();
    expect(sat.skipped.map((c) => c.variables.date)).toEqual(['2026-05-09T09:00:00Z']);
    expect(sat.state.cursor).toBe('2026-05-09T09:00:00.000Z');
    // Back after the weekend: Saturday and Sunday are skipped, Monday runs.
    const mon = await decideWithConditions({ state: s, trigger: daily, now: at('2026-05-11T09:00:00Z') }, weekdays);
    expect(mon.skipped).toHaveLength(2);
    expect(mon.candidate?.variables.date).toBe('2026-05-11T09:00:00Z');
  });
});

describe('backfill', () => {
  const now = at('2026-05-10T10:20:00Z');
  const base = decide({ state: {}, trigger: hourly(), now }).state;

  it('replays [start, end] one date at a time, with its inputs and labels, then disappears', () => {
    const s = startBackfill(base, hourly(), { start: at('2026-05-10T05:30:00Z'), end: at('2026-05-10T08:00:00Z'), inputs: { a: 1 }, labels: [{ key: 'k', value: 'v' }] }, now);
    expect(s.backfill).toMatchObject({ currentDate: '2026-05-10T06:00:00.000Z', paused: false });
    const d = decide({ state: s, trigger: hourly(), now });
    expect(d.candidate).toMatchObject({ backfill: true, inputs: { a: 1 }, labels: [{ key: 'k', value: 'v' }] });
    expect(d.candidate!.dedupeKey).toBe(`backfill:${s.backfill!.id}:2026-05-10T06:00:00.000Z`);
    expect(d.state.backfill?.currentDate).toBe('2026-05-10T07:00:00.000Z');
    const { dates, state } = run(hourly(), s, now);
    expect(dates).toEqual(['B 2026-05-10T06:00:00.000Z', 'B 2026-05-10T07:00:00.000Z', 'B 2026-05-10T08:00:00.000Z']);
    expect(state.backfill).toBeUndefined();
    expect(state.date).toBe(base.date); // the normal schedule's last date is untouched
  });

  it('without an end it stops at the request time; a start on a due date includes it', () => {
    const s = startBackfill(base, hourly(), { start: at('2026-05-10T08:00:00Z') }, now);
    expect(run(hourly(), s, at('2026-05-10T10:40:00Z')).dates).toEqual(['B 2026-05-10T08:00:00.000Z', 'B 2026-05-10T09:00:00.000Z', 'B 2026-05-10T10:00:00.000Z']);
  });

  it('pauses and resumes where it was; the normal schedule goes first', () => {
    let s = startBackfill(base, hourly(), { start: at('2026-05-10T06:00:00Z'), end: at('2026-05-10T08:00:00Z') }, now);
    const one = decide({ state: s, trigger: hourly(), now });
    s = started(one.state, one.candidate!, 'b1');
    s = pauseBackfill(s, true);
    expect(run(hourly(), s, at('2026-05-10T11:10:00Z')).dates).toEqual(['2026-05-10T11:00:00.000Z']);
    s = pauseBackfill(s, false);
    expect(run(hourly(), s, at('2026-05-10T11:10:00Z')).dates)
      .toEqual(['2026-05-10T11:00:00.000Z', 'B 2026-05-10T07:00:00.000Z', 'B 2026-05-10T08:00:00.000Z']);
  });

  it('backfill executions do not overlap the running one either', () => {
    const s = startBackfill({ ...base, executionId: 'e1' }, hourly(), { start: at('2026-05-10T06:00:00Z') }, now);
    expect(decide({ state: s, trigger: hourly(), now, running: true }).candidate).toBeUndefined();
  });

  it('validation and operations without a backfill', () => {
    expect(() => startBackfill(base, hourly(), { start: at('2026-05-10T08:00:00Z'), end: at('2026-05-10T07:00:00Z') }, now))
      .toThrow(expect.objectContaining({ field: 'backfill.end' }));
    expect(() => startBackfill(base, hourly(), { start: at('2026-05-11T08:00:00Z') }, now)).toThrow(BackfillError);
    expect(() => pauseBackfill(base, true)).toThrow('No backfill found');
    expect(() => deleteBackfill(base)).toThrow('No backfill found');
    const s = startBackfill(base, hourly(), { start: at('2026-05-10T06:00:00Z') }, now);
    expect(deleteBackfill(s).backfill).toBeUndefined();
  });

  it('unlock releases the lock of a running execution', () => {
    expect(() => unlock(base)).toThrow('Trigger is not locked');
    const locked = { ...base, executionId: 'e1' };
    expect(unlock(locked).executionId).toBeUndefined();
  });
});

describe('source backfill (deprecated `backfill.start` property)', () => {
  it('a new schedule runs every date since backfill.start, whatever the recovery policy', () => {
    const trigger = hourly({ backfill: { start: '2026-05-10T07:30:00Z' }, recoverMissedSchedules: 'NONE' });
    expect(run(trigger, {}, at('2026-05-10T10:20:00Z'), { recovery: true }).dates)
      .toEqual(['2026-05-10T08:00:00.000Z', '2026-05-10T09:00:00.000Z', '2026-05-10T10:00:00.000Z']);
  });
});

describe('lateMaximumDelay', () => {
  it('skips the dates that could not start within the delay; backfills are never late', () => {
    const trigger = hourly({ lateMaximumDelay: 'PT10M' });
    const s = decide({ state: {}, trigger, now: at('2026-05-10T10:20:00Z') }).state;
    expect(run(trigger, s, at('2026-05-10T13:05:00Z'), { recovery: true }).dates).toEqual(['2026-05-10T13:00:00.000Z']);
    expect(run(trigger, s, at('2026-05-10T13:15:00Z'), { recovery: true }).dates).toEqual([]);
    const b = startBackfill(s, trigger, { start: at('2026-05-10T06:00:00Z'), end: at('2026-05-10T07:00:00Z') }, at('2026-05-10T10:20:00Z'));
    expect(run(trigger, b, at('2026-05-10T10:30:00Z')).dates).toEqual(['B 2026-05-10T06:00:00.000Z', 'B 2026-05-10T07:00:00.000Z']);
  });
});
