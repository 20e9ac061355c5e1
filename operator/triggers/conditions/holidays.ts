// PublicHolidayCondition on top of the `date-holidays` calendars: only holidays of type "public" count (bank,
// school and observance days do not), for a country (ISO 3166-1 alpha-2) and optionally a subdivision (ISO 3166-2,
// `DE-BY` or `BY`). Calendars are built once per (country, subdivision).
import Holidays from 'date-holidays';
import { DateTime } from 'luxon';
import { holidayRegionProblem, knownCountries, subdivisionCode } from '../../model/semantic-conditions.js';
import { ConditionError } from './dates.js';

export { holidayRegionProblem };

const calendars = new Map<string, Holidays>();

/** The default country when none is given: the region of the process locale (as Kestra uses the default locale). */
export function defaultCountry(): string | undefined {
  const locale = Intl.DateTimeFormat().resolvedOptions().locale;
  const region = /[-_]([A-Z]{2})\b/.exec(locale)?.[1];
  return region && knownCountries().has(region) ? region : undefined;
}

function calendar(country: string, sub?: string): Holidays {
  const c = country.trim().toUpperCase();
  const s = sub ? subdivisionCode(c, sub) : '';
  const key = `${c}/${s}`;
  let cal = calendars.get(key);
  if (!cal) {
    const problem = holidayRegionProblem(c, s || undefined);
    if (problem) throw new ConditionError(problem);
    cal = s ? new Holidays(c, s) : new Holidays(c);
    calendars.set(key, cal);
  }
  return cal;
}

const publicDays = new Map<string, Set<string>>();

/** Local dates (YYYY-MM-DD) of the public holidays of a year; a holiday lasting several days covers each of them. */
function publicDaysOf(cal: Holidays, key: string, year: number): Set<string> {
  const k = `${key}@${year}`;
  let days = publicDays.get(k);
  if (!days) {
    days = new Set();
    for (const h of cal.getHolidays(year)) {
      if (h.type !== 'public') continue;
      const first = DateTime.fromISO(h.date.slice(0, 10), { zone: 'UTC' });
      const n = Math.max(1, Math.round((h.end.getTime() - h.start.getTime()) / 86_400_000));
      for (let i = 0; i < n; i++) days.add(first.plus({ days: i }).toISODate()!);
    }
    publicDays.set(k, days);
  }
  return days;
}

/** Whether the local calendar date of `date` (in its own zone) is a public holiday of the country/subdivision. */
export function publicHoliday(date: DateTime, country?: string, subDivision?: string): boolean {
  const c = (country ?? defaultCountry())?.trim().toUpperCase();
  if (!c) throw new ConditionError('PublicHolidayCondition needs `country` (no default country in the process locale)');
  const key = `${c}/${subDivision ? subdivisionCode(c, subDivision) : ''}`;
  const cal = calendar(c, subDivision);
  // A holiday late in December may spill into the next year: look at both.
  const day = date.toISODate()!;
  return publicDaysOf(cal, key, date.year).has(day) || publicDaysOf(cal, key, date.year - 1).has(day);
}
