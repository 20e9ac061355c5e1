// Tables for the date conditions and public holidays, including dates whose weekday or time of day depends on the
// zone and on daylight saving time changes (Europe/Paris: 2024-03-31 and 2024-10-27; America/New_York).
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dateTimeBetween, dayWeek, dayWeekInMonth, parseDate, parseTime, timeBetween, weekend } from './dates.js';
import { holidayRegionProblem, publicHoliday } from './holidays.js';

const at = (iso: string, zone: string) => DateTime.fromISO(iso, { zone: 'UTC' }).setZone(zone);

describe('parseDate', () => {
  it.each([
    ['2024-03-31T00:30:00+01:00', 'UTC', '2024-03-31T00:30:00.000+01:00'],
    ['2024-03-31T00:30:00Z', 'Europe/Paris', '2024-03-31T00:30:00.000Z'],
    ['2024-03-31T00:30:00', 'Europe/Paris', '2024-03-31T00:30:00.000+01:00'],
    ['2024-07-01', 'America/New_York', '2024-07-01T00:00:00.000-04:00'],
    ['2024-03-31T03:30:00+02:00[Europe/Paris]', 'UTC', '2024-03-31T03:30:00.000+02:00'],
  ])('%s read in %s → %s', (text, zone, iso) => { expect(parseDate(text, zone).toISO()).toBe(iso); });

  it.each(['yesterday', '2024-13-01', '', '10:00'])('%j is rejected', (text) => { expect(() => parseDate(text)).toThrow(/ISO 8601/); });
});

describe('dayWeek, weekend (the weekday is the one of the zone)', () => {
  it.each([
    // Saturday 23:30 UTC is already Sunday in Paris (DST starts that night).
    ['2024-03-30T23:30:00Z', 'UTC', 'SATURDAY', true],
    ['2024-03-30T23:30:00Z', 'Europe/Paris', 'SUNDAY', true],
    ['2024-03-30T23:30:00Z', 'Europe/Paris', 'saturday', false],
    // Monday 02:00 UTC is still Sunday evening in New York.
    ['2024-11-04T02:00:00Z', 'America/New_York', 'SUNDAY', true],
    ['2024-11-04T02:00:00Z', 'UTC', 'MONDAY', true],
  ])('%s in %s is %s: %s', (iso, zone, day, expected) => { expect(dayWeek(at(iso, zone), day)).toBe(expected); });

  it.each([
    ['2024-03-30T23:30:00Z', 'Europe/Paris', true], ['2024-03-31T22:30:00Z', 'Europe/Paris', false],
    ['2024-03-31T22:30:00Z', 'UTC', true], ['2024-11-04T02:00:00Z', 'America/New_York', true], ['2024-11-04T02:00:00Z', 'UTC', false],
  ])('%s in %s weekend: %s', (iso, zone, expected) => { expect(weekend(at(iso, zone))).toBe(expected); });

  it('rejects a bad day name', () => { expect(() => dayWeek(at('2024-01-01T00:00:00Z', 'UTC'), 'FUNDAY')).toThrow(/day of the week/); });
});

describe('dayWeekInMonth', () => {
  it.each([
    ['2024-01-01', 'MONDAY', 'FIRST', true], ['2024-01-08', 'MONDAY', 'SECOND', true], ['2024-01-08', 'MONDAY', 'FIRST', false],
    ['2024-01-15', 'MONDAY', 'THIRD', true], ['2024-01-22', 'MONDAY', 'FOURTH', true], ['2024-01-29', 'MONDAY', 'LAST', true],
    ['2024-01-22', 'MONDAY', 'LAST', false], ['2024-02-26', 'MONDAY', 'LAST', true], ['2024-02-29', 'THURSDAY', 'LAST', true],
    ['2024-01-02', 'MONDAY', 'FIRST', false], ['2024-03-31', 'SUNDAY', 'LAST', true], ['2024-03-31', 'SUNDAY', 'FOURTH', false],
  ])('%s %s %s → %s', (day, dow, which, expected) => {
    expect(dayWeekInMonth(DateTime.fromISO(day, { zone: 'UTC' }), dow, which)).toBe(expected);
  });

  it('is judged in the zone: Sunday 31 March 2024 00:30 in Paris is the last Sunday, in UTC it is Saturday', () => {
    expect(dayWeekInMonth(at('2024-03-30T23:30:00Z', 'Europe/Paris'), 'SUNDAY', 'LAST')).toBe(true);
    expect(dayWeekInMonth(at('2024-03-30T23:30:00Z', 'UTC'), 'SUNDAY', 'LAST')).toBe(false);
  });

  it('rejects a bad position', () => { expect(() => dayWeekInMonth(at('2024-01-01T00:00:00Z', 'UTC'), 'MONDAY', 'FIFTH')).toThrow(/FIRST/); });
});

describe('dateTimeBetween (inclusive)', () => {
  const d = (s: string) => parseDate(s);
  it.each([
    ['2025-06-01T00:00:00Z', '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z', true],
    ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', undefined, true],
    ['2024-12-31T23:59:59Z', '2025-01-01T00:00:00Z', undefined, false],
    ['2025-12-31T23:59:59Z', undefined, '2025-12-31T23:59:59Z', true],
    // 00:30 in Paris on 1 Jan 2025 is still 2024 in UTC.
    ['2025-01-01T00:30:00+01:00', '2025-01-01T00:00:00Z', undefined, false],
  ])('%s after %s before %s → %s', (date, after, before, expected) => {
    expect(dateTimeBetween(d(date), after ? d(after) : undefined, before ? d(before) : undefined)).toBe(expected);
  });

  it('needs a bound', () => { expect(() => dateTimeBetween(d('2025-01-01T00:00:00Z'))).toThrow(/after.*before/); });
});

describe('timeBetween (strict; wall-clock time of the zone, DST aware)', () => {
  const t = parseTime;
  it.each([
    // 31 March 2024: at 01:30 UTC Paris clocks read 03:30 (CEST), one hour earlier they read 01:30 (CET).
    ['2024-03-31T01:30:00Z', 'Europe/Paris', '03:00:00', '04:00:00', true],
    ['2024-03-31T00:30:00Z', 'Europe/Paris', '03:00:00', '04:00:00', false],
    ['2024-03-31T00:30:00Z', 'Europe/Paris', '01:00:00', '02:00:00', true],
    // 27 October 2024: 00:30 UTC and 01:30 UTC both read 02:30 in Paris.
    ['2024-10-27T00:30:00Z', 'Europe/Paris', '02:00:00', '03:00:00', true],
    ['2024-10-27T01:30:00Z', 'Europe/Paris', '02:00:00', '03:00:00', true],
    ['2024-10-27T01:30:00Z', 'UTC', '02:00:00', '03:00:00', false],
    ['2024-06-01T10:00:00Z', 'UTC', '10:00:00', undefined, false],
    ['2024-06-01T10:00:01Z', 'UTC', '10:00:00', undefined, true],
    ['2024-06-01T09:59:59Z', 'UTC', undefined, '10:00', true],
    // With offsets the comparison is in UTC (Java OffsetTime): 12:00+02:00 is 10:00Z.
    ['2024-06-01T10:30:00Z', 'Europe/Paris', '12:00:00+02:00', '13:00:00+02:00', true],
    ['2024-06-01T10:30:00Z', 'UTC', '10:00:00Z', '11:00:00Z', true],
    ['2024-06-01T11:30:00Z', 'Europe/Paris', '10:00:00Z', '11:00:00Z', false],
  ])('%s in %s after %s before %s → %s', (iso, zone, after, before, expected) => {
    expect(timeBetween(at(iso, zone), after ? t(after) : undefined, before ? t(before) : undefined)).toBe(expected);
  });

  it.each(['25:00', '10', 'noon', '10:61:00'])('rejects the time %j', (s) => { expect(() => parseTime(s)).toThrow(/time of day/); });
});

describe('publicHoliday (two countries, a subdivision)', () => {
  it.each([
    ['2024-07-14T10:00:00Z', 'UTC', 'FR', undefined, true],
    ['2024-07-15T10:00:00Z', 'UTC', 'FR', undefined, false],
    ['2024-07-04T12:00:00Z', 'UTC', 'US', undefined, true],
    ['2024-07-14T12:00:00Z', 'UTC', 'US', undefined, false],
    ['2024-11-28T12:00:00Z', 'UTC', 'us', undefined, true], // Thanksgiving
    // 14 July 23:30 UTC is already 15 July in Paris; 4 July 02:00 UTC is still 3 July in New York.
    ['2024-07-14T23:30:00Z', 'Europe/Paris', 'FR', undefined, false],
    ['2024-07-05T02:00:00Z', 'America/New_York', 'US', undefined, true],
    ['2024-01-06T12:00:00Z', 'UTC', 'DE', 'BY', true], // Epiphany: Bavaria only
    ['2024-01-06T12:00:00Z', 'UTC', 'DE', 'DE-BY', true],
    ['2024-01-06T12:00:00Z', 'UTC', 'DE', 'BE', false],
    ['2024-01-06T12:00:00Z', 'UTC', 'DE', undefined, false],
  ])('%s in %s, %s %s → %s', (iso, zone, country, sub, expected) => {
    expect(publicHoliday(at(iso, zone), country, sub)).toBe(expected);
  });

  it('rejects unknown countries and subdivisions', () => {
    expect(holidayRegionProblem('FR')).toBeUndefined();
    expect(holidayRegionProblem('DE', 'DE-BY')).toBeUndefined();
    expect(holidayRegionProblem('XX')).toMatch(/not a known country/);
    expect(holidayRegionProblem('DE', 'ZZ')).toMatch(/not a known subdivision/);
    expect(() => publicHoliday(at('2024-01-01T00:00:00Z', 'UTC'), 'XX')).toThrow(/not a known country/);
  });
});
