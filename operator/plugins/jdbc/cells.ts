// Result values of the jdbc tasks as Kestra's cell converters give them (PostgresCellConverter, MysqlCellConverter),
// in their JSON form: dates and times as ISO 8601 text (timestamps with a zone in the task's `timeZoneId`), exact
// numerics as numbers when a double holds them exactly (else their exact text), json as values, arrays as lists,
// binary as base64, intervals as Kestra's `P1Y2M3DT4H5M6S`. Pure (the zone offsets come from Intl).

export type Row = Record<string, unknown>;

/** An integer or decimal from its exact text: a number when a double round-trips it, else the text (no precision lost). */
export function exactNumber(text: string): number | string {
  const t = text.trim();
  const m = /^(-?)0*(\d+?)(?:\.(\d*?)0*)?$/.exec(t);
  if (!m) return t; // NaN, Infinity, exponent forms: as the server wrote them
  const canonical = `${m[1] && (m[2] !== '0' || m[3]) ? '-' : ''}${m[2]}${m[3] ? `.${m[3]}` : ''}`;
  const n = Number(t);
  return Number.isFinite(n) && String(n) === canonical ? n : t;
}

/** A float from text: a number, or the text for NaN and the infinities (JSON has none of them). */
export function floatValue(text: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) ? n : text;
}

/** Throws a clear error for a time zone Intl does not know. */
export function checkZone(zone: string): void {
  try { new Intl.DateTimeFormat('en-US', { timeZone: zone }); } catch { throw new Error(`Property 'timeZoneId' is not a known time zone: '${zone}'`); }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `zone` from UTC at the instant `epochMs`, in minutes. */
function zoneOffsetMinutes(zone: string, epochMs: number): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', era: 'short' });
    formatters.set(zone, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(epochMs))) parts[p.type] = p.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const asUtc = Date.UTC(year, Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return Math.round((asUtc - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

function offsetText(minutes: number): string {
  if (minutes === 0) return 'Z';
  return `${minutes < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** `.250000` → `.25`; `.000` → `` (ISO text with the fewest fraction digits, as Java prints it). */
function fraction(f: string | undefined): string {
  const t = (f ?? '').replace(/^\./, '').replace(/0+$/, '');
  return t ? `.${t}` : '';
}

function parseOffset(text: string | undefined): number {
  if (!text) return 0;
  const m = /^([+-])(\d\d):?(\d\d)?(?::?(\d\d))?$/.exec(text);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

const TIMESTAMP = /^(\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(\.\d+)?([+-]\d\d(?::?\d\d)?(?::?\d\d)?)?( BC)?$/;

/** A wall-clock timestamp (`2004-10-19 10:23:54.999999`) as ISO local date-time; `infinity` and BC as written. */
export function localDateTime(text: string): string {
  const m = TIMESTAMP.exec(text);
  if (!m || m[9]) return text;
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${fraction(m[7])}`;
}

/** A timestamp with an offset (`2004-10-19 06:23:54.25+00`) as ISO text at its instant in `zone`. */
export function zonedDateTime(text: string, zone: string): string {
  const m = TIMESTAMP.exec(text);
  if (!m || m[9]) return text;
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  const epoch = wall - parseOffset(m[8]) * 60_000;
  const offset = zoneOffsetMinutes(zone, epoch);
  const d = new Date(epoch + offset * 60_000);
  const y = d.getUTCFullYear();
  return `${y < 0 ? '-' : ''}${pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction(m[7])}${offsetText(offset)}`;
}

/** A time of day (`04:05:30.5`) as ISO local time. */
export function localTime(text: string): string {
  const m = /^(\d\d):(\d\d):(\d\d)(\.\d+)?$/.exec(text);
  return m ? `${m[1]}:${m[2]}:${m[3]}${fraction(m[4])}` : text;
}

/** A time with an offset (`13:05:06+02`) as the local time in `zone` on 1970-01-01 (Kestra's conversion). */
export function zonedTime(text: string, zone: string): string {
  const m = /^(\d\d):(\d\d):(\d\d)(\.\d+)?([+-]\d\d(?::?\d\d)?(?::?\d\d)?)?$/.exec(text);
  if (!m) return text;
  const epoch = Date.UTC(1970, 0, 1, Number(m[1]), Number(m[2]), Number(m[3])) - parseOffset(m[5]) * 60_000;
  const d = new Date(epoch + zoneOffsetMinutes(zone, epoch) * 60_000);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction(m[4])}`;
}

/** A PostgreSQL interval in `iso_8601` style (`P10Y4M5DT10S`) as Kestra writes it: `P10Y4M5DT0H0M10S` (whole seconds). */
export function kestraInterval(text: string): string {
  const m = /^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?$/.exec(text);
  if (!m) return text;
  const n = (x: string | undefined) => (x ? Number(x) : 0);
  return `P${n(m[1])}Y${n(m[2])}M${n(m[3]) * 7 + n(m[4])}DT${n(m[5])}H${n(m[6])}M${Math.trunc(n(m[7]))}S`;
}

/** PostgreSQL `bytea` in hex output (`\xdeadbeef`) as base64, the JSON form of Kestra's byte arrays. */
export function byteaBase64(text: string): string {
  return text.startsWith('\\x') ? Buffer.from(text.slice(2), 'hex').toString('base64') : Buffer.from(text, 'latin1').toString('base64');
}
