// Date handling for the `date`, `dateAdd`, `timestamp*` filters and `now()`: parses ISO strings,
// epochs and Dates with luxon, and formats with Java DateTimeFormatter patterns and named formats.
import { DateTime } from 'luxon';
import { ExpressionError } from './errors.js';

const NAMED: Record<string, (dt: DateTime) => string> = {
  iso: (dt) => isoDateTime(dt, true),
  iso_offset_date_time: (dt) => isoDateTime(dt, true),
  iso_zoned_date_time: (dt) => zoned(dt),
  iso_date_time: (dt) => zoned(dt),
  iso_local_date_time: (dt) => isoDateTime(dt, false),
  iso_instant: (dt) => isoDateTime(dt.toUTC(), true),
  iso_date: (dt) => formatJava(dt, 'yyyy-MM-ddXXX'),
  iso_offset_date: (dt) => formatJava(dt, 'yyyy-MM-ddXXX'),
  iso_local_date: (dt) => formatJava(dt, 'yyyy-MM-dd'),
  iso_time: (dt) => isoTime(dt) + offset(dt, 'XXX'),
  iso_offset_time: (dt) => isoTime(dt) + offset(dt, 'XXX'),
  iso_local_time: (dt) => isoTime(dt),
  iso_ordinal_date: (dt) => formatJava(dt, 'yyyy-DDDXXX'),
  iso_week_date: (dt) => `${dt.weekYear}-W${pad(dt.weekNumber, 2)}-${dt.weekday}${offset(dt, 'XXX')}`,
  basic_iso_date: (dt) => formatJava(dt, 'yyyyMMddX'),
  rfc_1123_date_time: (dt) => formatJava(dt, "EEE, d MMM yyyy HH:mm:ss 'GMT'").replace(/GMT$/, rfcOffset(dt)),
  iso_sec: (dt) => formatJava(dt, "yyyy-MM-dd'T'HH:mm:ssXXX"),
  iso_milli: (dt) => formatJava(dt, "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"),
  sql: (dt) => formatJava(dt, 'yyyy-MM-dd HH:mm:ss.SSSSSS'),
  sql_seconds: (dt) => formatJava(dt, 'yyyy-MM-dd HH:mm:ss'),
  sql_milli: (dt) => formatJava(dt, 'yyyy-MM-dd HH:mm:ss.SSS'),
};

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0');
  return n < 0 ? `-${s}` : s;
}

function fraction(dt: DateTime): string {
  return dt.millisecond === 0 ? '' : `.${pad(dt.millisecond, 3).replace(/0+$/, '')}`;
}

function isoTime(dt: DateTime): string {
  return `${pad(dt.hour, 2)}:${pad(dt.minute, 2)}:${pad(dt.second, 2)}${fraction(dt)}`;
}

function isoDateTime(dt: DateTime, withOffset: boolean): string {
  const date = `${pad(dt.year, 4)}-${pad(dt.month, 2)}-${pad(dt.day, 2)}`;
  return `${date}T${isoTime(dt)}${withOffset ? offset(dt, 'XXX') : ''}`;
}

function zoned(dt: DateTime): string {
  const zone = dt.zoneName && dt.zone.type === 'iana' ? `[${dt.zoneName}]` : '';
  return isoDateTime(dt, true) + zone;
}

function rfcOffset(dt: DateTime): string {
  return dt.offset === 0 ? 'GMT' : offset(dt, 'xx');
}

/** Offset letters X/x/Z/O of DateTimeFormatter. */
function offset(dt: DateTime, letters: string): string {
  const total = dt.offset;
  const kind = letters[0];
  const count = letters.length;
  if (total === 0 && (kind === 'X' || (kind === 'Z' && count === 5))) return 'Z';
  const sign = total < 0 ? '-' : '+';
  const h = pad(Math.floor(Math.abs(total) / 60), 2);
  const m = pad(Math.abs(total) % 60, 2);
  if (kind === 'O') return total === 0 ? 'GMT' : count === 1 ? `GMT${sign}${Number(h)}${m !== '00' ? `:${m}` : ''}` : `GMT${sign}${h}:${m}`;
  if (kind === 'Z') return count <= 3 ? `${sign}${h}${m}` : count === 4 ? (total === 0 ? 'GMT' : `GMT${sign}${h}:${m}`) : `${sign}${h}:${m}`;
  if (count === 1) return m === '00' ? `${sign}${h}` : `${sign}${h}${m}`;
  if (count === 2 || count === 4) return `${sign}${h}${m}`;
  return `${sign}${h}:${m}`;
}

type Field = (dt: DateTime, count: number) => string;

const TEXT_OR_NUMBER = (num: (dt: DateTime) => number, short: string, long: string, narrow: string): Field =>
  (dt, count) => {
    if (count >= 5) return dt.toFormat(narrow);
    if (count === 4) return dt.toFormat(long);
    if (count === 3) return dt.toFormat(short);
    return pad(num(dt), count);
  };

const FIELDS: Record<string, Field> = {
  G: (dt, c) => (c === 4 ? 'Anno Domini' : dt.year > 0 ? 'AD' : 'BC'),
  y: (dt, c) => (c === 2 ? pad(dt.year % 100, 2) : pad(dt.year, c)),
  u: (dt, c) => (c === 2 ? pad(dt.year % 100, 2) : pad(dt.year, c)),
  Y: (dt, c) => (c === 2 ? pad(dt.weekYear % 100, 2) : pad(dt.weekYear, c)),
  M: TEXT_OR_NUMBER((dt) => dt.month, 'LLL', 'LLLL', 'LLLLL'),
  L: TEXT_OR_NUMBER((dt) => dt.month, 'LLL', 'LLLL', 'LLLLL'),
  Q: (dt, c) => (c === 3 ? `Q${dt.quarter}` : c >= 4 ? `${['1st', '2nd', '3rd', '4th'][dt.quarter - 1]} quarter` : pad(dt.quarter, c)),
  d: (dt, c) => pad(dt.day, c),
  D: (dt, c) => pad(dt.ordinal, c),
  w: (dt, c) => pad(dt.weekNumber, c),
  E: (dt, c) => (c === 4 ? dt.toFormat('cccc') : c >= 5 ? dt.toFormat('ccccc') : dt.toFormat('ccc')),
  e: TEXT_OR_NUMBER((dt) => dt.weekday, 'ccc', 'cccc', 'ccccc'),
  a: (dt) => (dt.hour < 12 ? 'AM' : 'PM'),
  H: (dt, c) => pad(dt.hour, c),
  k: (dt, c) => pad(dt.hour === 0 ? 24 : dt.hour, c),
  K: (dt, c) => pad(dt.hour % 12, c),
  h: (dt, c) => pad(dt.hour % 12 === 0 ? 12 : dt.hour % 12, c),
  m: (dt, c) => pad(dt.minute, c),
  s: (dt, c) => pad(dt.second, c),
  S: (dt, c) => pad(dt.millisecond, 3).padEnd(9, '0').slice(0, c),
  A: (dt, c) => pad(((dt.hour * 60 + dt.minute) * 60 + dt.second) * 1000 + dt.millisecond, c),
  n: (dt, c) => pad(dt.millisecond * 1_000_000, c),
  V: (dt) => dt.zoneName ?? 'UTC',
  z: (dt, c) => (c === 4 ? dt.toFormat('ZZZZZ') : dt.offsetNameShort ?? dt.toFormat('ZZZZ')),
  O: (dt, c) => offset(dt, 'O'.repeat(c)),
  X: (dt, c) => offset(dt, 'X'.repeat(c)),
  x: (dt, c) => offset(dt, 'x'.repeat(c)),
  Z: (dt, c) => offset(dt, 'Z'.repeat(c)),
};

/** Reads a quoted literal starting at `start` (`''` is a quote); returns the text and the next index. */
function quoted(pattern: string, start: number): [string, number] {
  if (pattern[start + 1] === "'") return ["'", start + 2];
  let out = '';
  let i = start + 1;
  while (i < pattern.length) {
    if (pattern[i] === "'" && pattern[i + 1] === "'") {
      out += "'";
      i += 2;
    } else if (pattern[i] === "'") {
      return [out, i + 1];
    } else {
      out += pattern[i++];
    }
  }
  return [out, i];
}

/** Formats with a Java DateTimeFormatter pattern (letters, quoted literals, optional sections). */
export function formatJava(dt: DateTime, pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length;) {
    const ch = pattern[i];
    if (ch === "'") {
      const [literal, next] = quoted(pattern, i);
      out += literal;
      i = next;
      continue;
    }
    if (/[A-Za-z]/.test(ch)) {
      let j = i;
      while (pattern[j] === ch) j++;
      const field = FIELDS[ch];
      if (!field) throw new ExpressionError(`date: unknown pattern letter \`${ch}\` in \`${pattern}\``);
      out += field(dt, j - i);
      i = j;
      continue;
    }
    if (ch !== '[' && ch !== ']') out += ch;
    i++;
  }
  return out;
}

function setZone(dt: DateTime, timeZone: unknown): DateTime {
  if (timeZone === undefined || timeZone === null || timeZone === '') return dt;
  const zoned = dt.setZone(String(timeZone));
  if (!zoned.isValid) throw new ExpressionError(`Unknown time zone \`${String(timeZone)}\``);
  return zoned;
}

function fromEpoch(n: number): DateTime {
  const abs = Math.abs(n);
  const ms = abs >= 1e17 ? n / 1e6 : abs >= 1e14 ? n / 1e3 : abs >= 1e11 ? n : n * 1000;
  return DateTime.fromMillis(ms, { zone: 'UTC' });
}

/** Reads a date from an ISO string (Java ZonedDateTime text too), an epoch number or a Date. */
export function toDateTime(value: unknown, existingFormat?: unknown, timeZone?: unknown): DateTime {
  let dt: DateTime | null = null;
  if (value instanceof Date) dt = DateTime.fromJSDate(value, { zone: 'UTC' });
  else if (typeof value === 'number') dt = fromEpoch(value);
  else if (typeof value === 'string') dt = parseString(value.trim(), existingFormat, timeZone);
  if (!dt || !dt.isValid) throw new ExpressionError(`Cannot parse date ${JSON.stringify(value)}`);
  return dt;
}

function parseString(text: string, existingFormat: unknown, timeZone: unknown): DateTime | null {
  const zone = typeof timeZone === 'string' && timeZone ? timeZone : 'UTC';
  if (typeof existingFormat === 'string' && existingFormat) {
    return DateTime.fromFormat(text, existingFormat, { zone, setZone: true });
  }
  if (/^-?\d+(\.\d+)?$/.test(text)) return fromEpoch(Number(text));
  const bracket = /^(.*)\[([^\]]+)\]$/.exec(text);
  if (bracket) {
    const base = DateTime.fromISO(bracket[1], { setZone: true });
    return base.isValid ? base.setZone(bracket[2]) : null;
  }
  const iso = DateTime.fromISO(text, { zone, setZone: true });
  if (iso.isValid) return iso;
  const sql = DateTime.fromSQL(text, { zone, setZone: true });
  return sql.isValid ? sql : DateTime.fromRFC2822(text, { zone, setZone: true });
}

/** `date(format, timeZone=..., existingFormat=...)`. */
export function formatDate(value: unknown, format: unknown, timeZone?: unknown, existingFormat?: unknown): string {
  const dt = setZone(toDateTime(value, existingFormat), timeZone);
  const fmt = format === undefined || format === null ? 'iso' : String(format);
  const named = Object.prototype.hasOwnProperty.call(NAMED, fmt.toLowerCase()) ? NAMED[fmt.toLowerCase()] : undefined;
  return named ? named(dt) : formatJava(dt, fmt);
}

const UNITS: Record<string, [string, number]> = {
  NANOS: ['milliseconds', 1e-6], MICROS: ['milliseconds', 1e-3], MILLIS: ['milliseconds', 1],
  SECONDS: ['seconds', 1], MINUTES: ['minutes', 1], HOURS: ['hours', 1], HALF_DAYS: ['hours', 12],
  DAYS: ['days', 1], WEEKS: ['weeks', 1], MONTHS: ['months', 1], YEARS: ['years', 1],
  DECADES: ['years', 10], CENTURIES: ['years', 100], MILLENNIA: ['years', 1000],
};

/** `dateAdd(amount, unit, format=..., timeZone=...)`: ChronoUnit names, result formatted (iso by default). */
export function addToDate(value: unknown, amount: number, unit: unknown, format?: unknown, timeZone?: unknown): string {
  const spec = UNITS[String(unit).toUpperCase()];
  if (!spec || !Object.prototype.hasOwnProperty.call(UNITS, String(unit).toUpperCase())) {
    throw new ExpressionError(`dateAdd: unknown unit \`${String(unit)}\``);
  }
  const dt = setZone(toDateTime(value), timeZone).plus({ [spec[0]]: amount * spec[1] });
  return formatDate(dt.toISO(), format, timeZone);
}

export type EpochUnit = 'seconds' | 'millis' | 'micros' | 'nanos';

export function toEpoch(value: unknown, unit: EpochUnit, timeZone?: unknown): number {
  const ms = setZone(toDateTime(value), timeZone).toMillis();
  if (unit === 'seconds') return Math.floor(ms / 1000);
  if (unit === 'millis') return ms;
  return unit === 'micros' ? ms * 1000 : ms * 1_000_000;
}

/** `now()`: the current instant as ISO offset date-time in the given zone (UTC by default). */
export function nowIso(now: Date, timeZone?: unknown): string {
  return NAMED.iso(setZone(DateTime.fromJSDate(now, { zone: 'UTC' }), timeZone));
}
