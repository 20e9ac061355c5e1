// KV value typing: infers a KVType from a raw value, or coerces and validates a value against an explicit type.
// Values are kept in their JSON form: DATETIME, DATE and DURATION as ISO strings, JSON as any JSON value.
import { DateTime, Duration } from 'luxon';
import { parseJsonSafe } from '../../core/keyed.js';
import type { KVType } from '../types.js';

const DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const DURATION_RE = /^-?P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;

const isDateTime = (s: string): boolean => DATETIME_RE.test(s) && DateTime.fromISO(s, { setZone: true }).isValid;
const isDate = (s: string): boolean => DATE_RE.test(s) && DateTime.fromISO(s).isValid;
const isDuration = (s: string): boolean => DURATION_RE.test(s) && Duration.fromISO(s.replace(/^-/, '')).isValid;

/** The type a value gets when `set` is called without one. */
export function inferKVType(value: unknown): KVType {
  if (typeof value === 'boolean') return 'BOOLEAN';
  if (typeof value === 'number') return 'NUMBER';
  if (typeof value === 'string') {
    if (isDateTime(value)) return 'DATETIME';
    if (isDate(value)) return 'DATE';
    if (isDuration(value)) return 'DURATION';
    return 'STRING';
  }
  if (value instanceof Date) return 'DATETIME';
  return 'JSON';
}

/** A caller error; `status` lets an HTTP layer answer 400 instead of 500. */
export function kvInputError(message: string): Error & { status: number } {
  return Object.assign(new Error(message), { status: 400 });
}

function invalid(type: KVType, value: unknown): Error {
  const shown = typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value);
  return kvInputError(`Invalid KV value for type ${type}: ${shown}`);
}

const COERCE: Record<KVType, (value: unknown) => unknown> = {
  STRING: (v) => (typeof v === 'string' ? v : typeof v === 'object' && v !== null && !(v instanceof Date) ? JSON.stringify(v) : String(v)),
  NUMBER: (v) => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v.trim()) : NaN;
    if (!Number.isFinite(n)) throw invalid('NUMBER', v);
    return n;
  },
  BOOLEAN: (v) => {
    if (typeof v === 'boolean') return v;
    const s = typeof v === 'string' ? v.trim().toLowerCase() : undefined;
    if (s === 'true' || s === 'false') return s === 'true';
    throw invalid('BOOLEAN', v);
  },
  DATETIME: (v) => {
    if (v instanceof Date && !Number.isNaN(v.getTime())) return v.toISOString();
    if (typeof v === 'string' && isDateTime(v.trim())) return v.trim();
    throw invalid('DATETIME', v);
  },
  DATE: (v) => {
    if (v instanceof Date && !Number.isNaN(v.getTime())) return v.toISOString().slice(0, 10);
    if (typeof v === 'string' && isDate(v.trim())) return v.trim();
    throw invalid('DATE', v);
  },
  DURATION: (v) => {
    if (typeof v === 'string' && isDuration(v.trim())) return v.trim();
    throw invalid('DURATION', v);
  },
  JSON: (v) => {
    if (typeof v !== 'string') return v;
    try {
      return parseJsonSafe(v);
    } catch {
      throw invalid('JSON', v);
    }
  },
};

/** Returns the value in the stored form of `type`, or throws an Error naming the type and the value. */
export function coerceKVValue(type: KVType, value: unknown): unknown {
  const coerce = Object.hasOwn(COERCE, type) ? COERCE[type] : undefined;
  if (!coerce) throw kvInputError(`Unknown KV type '${String(type)}'`);
  return coerce(value);
}

/** Typed value for a `set` call: explicit type coerces, absent type infers. Undefined values are rejected. */
export function typedKVValue(value: unknown, type?: KVType): { type: KVType; value: unknown } {
  if (value === undefined) throw kvInputError('KV value is required');
  if (type) return { type, value: coerceKVValue(type, value) };
  const inferred = inferKVType(value);
  if (inferred === 'NUMBER' && !Number.isFinite(value)) throw invalid('NUMBER', value);
  return { type: inferred, value: value instanceof Date ? value.toISOString() : value };
}

/** Latest expiration date: ISO strings of later years (`+010000-...`) would no longer compare as dates in the stores. */
const LAST_EXPIRATION = DateTime.fromISO('9999-12-31T23:59:59.999Z', { zone: 'utc' });

/** The ttl as shown in an error: hostile input, so cut short. */
const shownTtl = (ttl: string): string => (ttl.length > 64 ? `${ttl.slice(0, 64)}...` : ttl);

/**
 * Expiration date (ISO) of an ISO 8601 `ttl` from `now`. Throws a caller error naming `ttl` when it is malformed, not
 * positive (`-PT1H`, `PT0S`) or so long that the date passes the year 9999 (`P999999999999Y`).
 */
export function expirationFromTtl(ttl: string, now: Date): string {
  const duration = Duration.fromISO(ttl);
  if (!duration.isValid) throw kvInputError(`Invalid KV ttl '${shownTtl(ttl)}': expected an ISO 8601 duration such as PT1H`);
  const start = DateTime.fromJSDate(now, { zone: 'utc' });
  const end = start.plus(duration);
  if (!end.isValid || end > LAST_EXPIRATION) {
    throw kvInputError(`Invalid KV ttl '${shownTtl(ttl)}': too long, the expiration date would be after the year 9999`);
  }
  if (end <= start) throw kvInputError(`Invalid KV ttl '${shownTtl(ttl)}': must be a positive duration such as PT1H`);
  return end.toJSDate().toISOString();
}
