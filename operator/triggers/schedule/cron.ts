// Cron arithmetic of the Schedule trigger: next and previous due dates of a cron expression (5 fields, 6 with
// `withSeconds`, or an @alias) in a time zone, DST-correct, and the `trigger.date/next/previous` formatting. Pure.
//
// DST (behaviour of cron-parser 5, checked by the tests and kept on purpose):
// - spring forward: a wall time that does not exist that day (`30 2 * * *` in Europe/Paris on the last Sunday of
//   March) runs once, shifted by the gap (03:30 local); nothing is skipped.
// - fall back: a wall time that happens twice (`30 1 * * *` in America/New_York on the first Sunday of November) runs
//   once, at its first occurrence (01:30 EDT). Hourly and finer schedules still run at every elapsed hour.
// Dates are always walked forward from the last handled date (`nextAfter`), which is what makes both hold; `previous`
// is derived from the same forward walk (cron-parser's own `prev()` skips the shifted date and doubles the repeated
// one, so it is only used as a starting point).
import { CronExpressionParser } from 'cron-parser';
import { DateTime } from 'luxon';

export interface CronSpec {
  cron: string;
  withSeconds?: boolean;
  /** IANA zone; UTC when absent. */
  timezone?: string;
}

const ALIASES: Record<string, string> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

/** The 5- or 6-field expression behind an alias; throws on a wrong number of fields. */
export function normalizeCron(spec: CronSpec): string {
  const raw = spec.cron.trim();
  const alias = Object.hasOwn(ALIASES, raw.toLowerCase()) ? ALIASES[raw.toLowerCase()] : undefined;
  if (alias) return spec.withSeconds ? `0 ${alias}` : alias;
  const fields = raw.split(/\s+/).length;
  const expected = spec.withSeconds ? 6 : 5;
  if (fields !== expected) throw new Error(`\`${spec.cron}\` is not a cron expression: expected ${expected} fields, got ${fields}`);
  return raw;
}

const zoneOf = (spec: CronSpec): string => spec.timezone || 'UTC';

function iterator(spec: CronSpec, from: Date) {
  return CronExpressionParser.parse(normalizeCron(spec), { tz: zoneOf(spec), currentDate: from });
}

/** First due date strictly after `after`, or undefined when the expression never fires again. */
export function nextAfter(spec: CronSpec, after: Date): Date | undefined {
  try {
    return iterator(spec, after).next().toDate();
  } catch {
    return undefined; // cron-parser throws when no date is left (for example a 30th of February)
  }
}

/** Due dates in (`after`, `until`], at most `limit` of them, oldest first. */
export function dueBetween(spec: CronSpec, after: Date, until: Date, limit = 1000): Date[] {
  const out: Date[] = [];
  let cursor = after;
  while (out.length < limit) {
    const next = nextAfter(spec, cursor);
    if (!next || next.getTime() > until.getTime()) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/** The last due date strictly before `date` in the forward walk (the `d` with `nextAfter(d) = date` when `date` is due). */
export function previousBefore(spec: CronSpec, date: Date): Date | undefined {
  let p: Date;
  try {
    p = iterator(spec, date).prev().toDate();
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i++) {
    const n = nextAfter(spec, p);
    if (!n || n.getTime() >= date.getTime()) break;
    p = n; // prev() skipped a shifted date: walk forward
  }
  // A repeated wall time is off the forward walk: when the date before p also leads straight to `date`, it is the one.
  for (let i = 0; i < 4; i++) {
    let earlier: Date;
    try { earlier = iterator(spec, p).prev().toDate(); } catch { break; }
    if (nextAfter(spec, earlier)?.getTime() !== date.getTime()) break;
    p = earlier;
  }
  return p;
}

/** Kestra's rendering of schedule dates: ISO 8601 with the offset of the trigger's zone, seconds precision. */
export function formatDate(date: Date, timezone?: string): string {
  return DateTime.fromJSDate(date, { zone: timezone || 'UTC' }).toISO({ suppressMilliseconds: true })!;
}

/** `trigger.*` variables of a scheduled execution: `date`, `next`, `previous`. */
export function scheduleVariables(spec: CronSpec, date: Date): Record<string, string> {
  const vars: Record<string, string> = { date: formatDate(date, spec.timezone) };
  const next = nextAfter(spec, date);
  if (next) vars.next = formatDate(next, spec.timezone);
  const previous = previousBefore(spec, date);
  if (previous) vars.previous = formatDate(previous, spec.timezone);
  return vars;
}

/** Whether the spec can be evaluated (valid cron and zone); the message says why not. */
export function cronSpecProblem(spec: CronSpec): string | undefined {
  if (spec.timezone && !DateTime.now().setZone(spec.timezone).isValid) return `\`${spec.timezone}\` is not a known time zone`;
  try {
    iterator(spec, new Date());
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}
