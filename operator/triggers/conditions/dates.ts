// Date-based trigger conditions as pure functions (DateTimeBetween, DayWeek, DayWeekInMonth, Weekend, TimeBetween):
// they take the tested date as a luxon DateTime in the zone it is judged in (the trigger's timezone for schedules),
// so "which day is it" and "what time is it" follow the wall clock of that zone, DST included.
import { DateTime } from 'luxon';

export const DAYS_OF_WEEK = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type DayOfWeek = (typeof DAYS_OF_WEEK)[number];
export const DAYS_IN_MONTH = ['FIRST', 'SECOND', 'THIRD', 'FOURTH', 'LAST'] as const;
export type DayInMonth = (typeof DAYS_IN_MONTH)[number];

import { ConditionError } from '../../core/execution-conditions.js';

export { ConditionError };

/**
 * Parses an ISO 8601 date-time (or date). An explicit offset or `Z` is kept as the zone the date is judged in;
 * a date without one is read in `zone` (default UTC). A trailing `[Region/City]` (Java's ZonedDateTime) selects
 * that zone. Epoch milliseconds are accepted too.
 */
export function parseDate(value: unknown, zone = 'UTC'): DateTime {
  if (value instanceof Date) return DateTime.fromJSDate(value, { zone });
  if (DateTime.isDateTime(value)) return value;
  if (typeof value === 'number') return DateTime.fromMillis(value, { zone });
  if (typeof value !== 'string') throw new ConditionError(`\`${JSON.stringify(value)}\` is not a date`);
  const text = value.trim();
  const bracket = /^(.*)\[([^\]]+)\]$/.exec(text);
  if (bracket) {
    const d = DateTime.fromISO(bracket[1]!, { zone: bracket[2]! });
    if (d.isValid) return d;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) throw new ConditionError(`\`${text}\` is not an ISO 8601 date-time`);
  const withOffset = /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(text) && text.includes('T');
  const d = DateTime.fromISO(text, withOffset ? { setZone: true } : { zone });
  if (!d.isValid) throw new ConditionError(`\`${text}\` is not an ISO 8601 date-time`);
  return d;
}

function dayIndex(day: unknown): number {
  const i = typeof day === 'string' ? DAYS_OF_WEEK.indexOf(day.trim().toUpperCase() as DayOfWeek) : -1;
  if (i < 0) throw new ConditionError(`\`${String(day)}\` is not a day of the week (${DAYS_OF_WEEK.join(', ')})`);
  return i + 1; // luxon: Monday = 1
}

/** Inclusive bounds, as Kestra: after ≤ date ≤ before; at least one bound is required. */
export function dateTimeBetween(date: DateTime, after?: DateTime, before?: DateTime): boolean {
  if (!after && !before) throw new ConditionError('DateTimeBetweenCondition needs `after` or `before`');
  const t = date.toMillis();
  return (!after || t >= after.toMillis()) && (!before || t <= before.toMillis());
}

export function dayWeek(date: DateTime, dayOfWeek: unknown): boolean {
  return date.weekday === dayIndex(dayOfWeek);
}

/** The date is the FIRST/SECOND/THIRD/FOURTH/LAST `dayOfWeek` of its month. */
export function dayWeekInMonth(date: DateTime, dayOfWeek: unknown, dayInMonth: unknown): boolean {
  const wanted = dayIndex(dayOfWeek);
  const which = typeof dayInMonth === 'string' ? dayInMonth.trim().toUpperCase() : '';
  if (!DAYS_IN_MONTH.includes(which as DayInMonth)) {
    throw new ConditionError(`\`${String(dayInMonth)}\` is not one of ${DAYS_IN_MONTH.join(', ')}`);
  }
  if (date.weekday !== wanted) return false;
  const nth = Math.floor((date.day - 1) / 7); // 0 for days 1-7 ...
  if (which === 'LAST') return date.day + 7 > date.daysInMonth!;
  return nth === DAYS_IN_MONTH.indexOf(which as DayInMonth);
}

export function weekend(date: DateTime): boolean {
  return date.weekday >= 6;
}

/** A time of day: `HH:mm[:ss[.SSS]]` with an optional offset (`Z`, `+02:00`). */
export interface TimeOfDay { seconds: number; offsetMinutes?: number }

export function parseTime(value: unknown): TimeOfDay {
  const m = typeof value === 'string'
    ? /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim())
    : null;
  if (!m) throw new ConditionError(`\`${String(value)}\` is not a time of day (HH:mm:ss, optionally with an offset such as +02:00)`);
  const [h, min, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || min > 59 || s > 59) throw new ConditionError(`\`${String(value)}\` is not a time of day`);
  const seconds = h * 3600 + min * 60 + s + Number(`0.${m[4] ?? '0'}`);
  if (!m[5]) return { seconds };
  const off = m[5].toUpperCase() === 'Z' ? 0 : (() => {
    const digits = m[5].replace(':', '');
    const sign = digits.startsWith('-') ? -1 : 1;
    return sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
  })();
  return { seconds, offsetMinutes: off };
}

/**
 * Strict bounds, as Kestra: after < time < before. A bound without offset is compared with the wall-clock time of
 * the date in its zone; a bound with an offset is compared as Java's OffsetTime does (both shifted to UTC time of day).
 */
export function timeBetween(date: DateTime, after?: TimeOfDay, before?: TimeOfDay): boolean {
  if (!after && !before) throw new ConditionError('TimeBetweenCondition needs `after` or `before`');
  const local = date.hour * 3600 + date.minute * 60 + date.second + date.millisecond / 1000;
  const key = (bound: TimeOfDay): [number, number] => bound.offsetMinutes === undefined
    ? [local, bound.seconds]
    : [local - date.offset * 60, bound.seconds - bound.offsetMinutes * 60];
  const ok = (bound: TimeOfDay | undefined, cmp: (a: number, b: number) => boolean): boolean => {
    if (!bound) return true;
    const [a, b] = key(bound);
    return cmp(a, b);
  };
  return ok(after, (a, b) => a > b) && ok(before, (a, b) => a < b);
}
