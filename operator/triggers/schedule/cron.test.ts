// Cron arithmetic of the Schedule trigger: aliases, seconds, time zones and both DST transitions in two zones each.
import { describe, expect, it } from 'vitest';
import { cronSpecProblem, dueBetween, formatDate, nextAfter, normalizeCron, previousBefore, scheduleVariables, type CronSpec } from './cron.js';

const d = (s: string) => new Date(s);
const isos = (ds: Date[]) => ds.map((x) => x.toISOString());

describe('aliases and fields', () => {
  it.each([
    ['@hourly', '2026-05-10T10:20:00Z', '2026-05-10T11:00:00.000Z'],
    ['@daily', '2026-05-10T10:20:00Z', '2026-05-11T00:00:00.000Z'],
    ['@midnight', '2026-05-10T10:20:00Z', '2026-05-11T00:00:00.000Z'],
    ['@weekly', '2026-05-13T10:20:00Z', '2026-05-17T00:00:00.000Z'], // Sunday
    ['@monthly', '2026-05-10T10:20:00Z', '2026-06-01T00:00:00.000Z'],
    ['@yearly', '2026-05-10T10:20:00Z', '2027-01-01T00:00:00.000Z'],
    ['@annually', '2026-05-10T10:20:00Z', '2027-01-01T00:00:00.000Z'],
    ['@DAILY', '2026-05-10T10:20:00Z', '2026-05-11T00:00:00.000Z'],
  ])('%s after %s is %s', (cron, after, next) => {
    expect(nextAfter({ cron }, d(after))?.toISOString()).toBe(next);
  });

  it('an alias in a time zone is local midnight', () => {
    expect(nextAfter({ cron: '@daily', timezone: 'Europe/Paris' }, d('2026-05-10T10:00:00Z'))?.toISOString()).toBe('2026-05-10T22:00:00.000Z');
  });

  it('withSeconds uses a sixth field; an alias with seconds fires at second 0', () => {
    expect(isos(dueBetween({ cron: '*/20 * * * * *', withSeconds: true }, d('2026-05-10T10:00:00Z'), d('2026-05-10T10:01:00Z'))))
      .toEqual(['2026-05-10T10:00:20.000Z', '2026-05-10T10:00:40.000Z', '2026-05-10T10:01:00.000Z']);
    expect(normalizeCron({ cron: '@hourly', withSeconds: true })).toBe('0 0 * * * *');
  });

  it('a cron named like an Object.prototype member is not an alias', () => {
    expect(() => normalizeCron({ cron: 'constructor' })).toThrow(/expected 5 fields, got 1/);
  });

  it.each([
    [{ cron: '* * * *' }, /expected 5 fields, got 4/],
    [{ cron: '*/5 * * * *', withSeconds: true }, /expected 6 fields, got 5/],
    [{ cron: '61 * * * *' }, /./],
    [{ cron: '* * * * *', timezone: 'Mars/Olympus' }, /time zone/],
  ] as [CronSpec, RegExp][])('%j is rejected', (spec, message) => {
    expect(cronSpecProblem(spec)).toMatch(message);
  });

  it('the step between due dates is exact; the window is (after, until]', () => {
    expect(isos(dueBetween({ cron: '*/15 * * * *' }, d('2026-05-10T10:00:00Z'), d('2026-05-10T11:00:00Z'))))
      .toEqual(['2026-05-10T10:15:00.000Z', '2026-05-10T10:30:00.000Z', '2026-05-10T10:45:00.000Z', '2026-05-10T11:00:00.000Z']);
  });
});

describe('DST: spring forward (the wall time does not exist that day) runs once, shifted by the gap', () => {
  it.each([
    // zone, cron, from, expected UTC dates (the middle one is the transition day at the shifted local time)
    ['Europe/Paris', '30 2 * * *', '2026-03-28T00:00:00Z', ['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']],
    ['America/New_York', '30 2 * * *', '2026-03-07T00:00:00Z', ['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']],
  ])('%s %s', (timezone, cron, from, expected) => {
    const spec = { cron, timezone };
    const got = dueBetween(spec, d(from), d(expected[2]!));
    expect(isos(got)).toEqual(expected);
    expect(formatDate(got[1]!, timezone)).toMatch(/T03:30:00[+-]\d\d:00$/);
  });

  it('previous of the day after the gap is the shifted date (not the day before)', () => {
    const spec = { cron: '30 2 * * *', timezone: 'Europe/Paris' };
    expect(previousBefore(spec, d('2026-03-30T00:30:00Z'))?.toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });

  it('hourly keeps one run per elapsed hour across the gap', () => {
    const got = dueBetween({ cron: '0 * * * *', timezone: 'Europe/Paris' }, d('2026-03-28T23:30:00Z'), d('2026-03-29T02:30:00Z'));
    expect(got.map((x) => formatDate(x, 'Europe/Paris').slice(11, 19))).toEqual(['01:00:00', '03:00:00', '04:00:00']);
  });
});

describe('DST: fall back (the wall time happens twice) runs once', () => {
  it.each([
    ['America/New_York', '30 1 * * *', '2026-10-31T00:00:00Z', ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
    ['Europe/Paris', '30 2 * * *', '2026-10-24T00:00:00Z', ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
  ])('%s %s', (timezone, cron, from, expected) => {
    expect(isos(dueBetween({ cron, timezone }, d(from), d(expected[2]!)))).toEqual(expected);
  });

  it('previous of the day after is the first occurrence (the one that ran)', () => {
    const spec = { cron: '30 1 * * *', timezone: 'America/New_York' };
    expect(previousBefore(spec, d('2026-11-02T06:30:00Z'))?.toISOString()).toBe('2026-11-01T05:30:00.000Z');
  });

  it('hourly runs at both 01:00 (EDT then EST)', () => {
    const got = dueBetween({ cron: '0 * * * *', timezone: 'America/New_York' }, d('2026-11-01T04:30:00Z'), d('2026-11-01T07:30:00Z'));
    expect(got.map((x) => formatDate(x, 'America/New_York'))).toEqual(['2026-11-01T01:00:00-04:00', '2026-11-01T01:00:00-05:00', '2026-11-01T02:00:00-05:00']);
  });
});

describe('trigger variables', () => {
  it('date, next and previous are ISO 8601 with the zone offset (Z for UTC), seconds precision', () => {
    expect(scheduleVariables({ cron: '0 * * * *' }, d('2026-05-10T10:00:00Z'))).toEqual({
      date: '2026-05-10T10:00:00Z', next: '2026-05-10T11:00:00Z', previous: '2026-05-10T09:00:00Z',
    });
    expect(scheduleVariables({ cron: '0 9 * * *', timezone: 'Europe/Paris' }, d('2026-05-10T07:00:00Z'))).toEqual({
      date: '2026-05-10T09:00:00+02:00', next: '2026-05-11T09:00:00+02:00', previous: '2026-05-09T09:00:00+02:00',
    });
  });
});
