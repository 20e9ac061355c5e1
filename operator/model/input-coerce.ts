// Coercion of one execution input value to its declared type (strings from multipart forms, typed JSON
// values, rendered expressions), with ENUM, validator and min/max checks. Shared by resolveInputs and flow validation.
import { DateTime } from 'luxon';
import { parseJsonSafe } from '../core/keyed.js';
import type { Input, InputType } from '../core/types.js';
import { regexIssue, regexTest } from '../expr/index.js';
import { isDuration, parseDuration } from './duration.js';

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

const ok = (value: unknown): Coerced => ({ ok: true, value });
const fail = (message: string): Coerced => ({ ok: false, message });
const show = (v: unknown): string => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;

type Coercer = (value: unknown, def: Input) => Coerced;

function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function coerceString(value: unknown, def: Input): Coerced {
  const s = asText(value);
  if (s === undefined) return fail(`must be a string, got ${show(value)}`);
  if (def.validator) {
    const re = compileValidator(def.validator);
    if (!re) return fail(`the validator \`${def.validator}\` is not a valid regular expression: ${validatorIssue(def.validator)}`);
    if (!re.test(s)) return fail(`${show(s)} does not match the validator \`${def.validator}\``);
  }
  return ok(s);
}

/** The validator (RE2, linear time) matching the whole string (Java `matches()` semantics); undefined if it does not compile. */
export function compileValidator(pattern: string): { test(text: string): boolean } | undefined {
  return regexIssue(pattern) === undefined ? regexTest(pattern) : undefined;
}

/** Why a validator cannot be used (named in the 422 at save), or undefined. */
export function validatorIssue(pattern: string): string | undefined {
  return regexIssue(pattern);
}

function toNumber(value: unknown, integer: boolean): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && (!integer || Number.isInteger(value)) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  const re = integer ? /^[-+]?\d+$/ : /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
  return re.test(s) ? Number(s) : undefined;
}

const numberCoercer = (integer: boolean): Coercer => (value) => {
  const n = toNumber(value, integer);
  return n === undefined ? fail(`${show(value)} is not ${integer ? 'an integer' : 'a number'}`) : ok(n);
};

function coerceBoolean(value: unknown): Coerced {
  if (typeof value === 'boolean') return ok(value);
  const s = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (s === 'true' || s === 'false') return ok(s === 'true');
  return fail(`${show(value)} is not a boolean (true or false)`);
}

function coerceEnum(value: unknown, def: Input): Coerced {
  const s = asText(value);
  const values = (def.values ?? []).map(String);
  if (s === undefined || !values.includes(s)) return fail(`${show(value)} is not one of ${values.join(', ')}`);
  return ok(s);
}

/** Instant formatting like java.time.Instant.toString(): millis only when not zero. */
function instantString(dt: DateTime): string {
  return dt.toUTC().toISO({ suppressMilliseconds: true }) ?? '';
}

export function parseDateTime(value: unknown): DateTime | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : DateTime.fromJSDate(value);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value.trim())) return undefined;
  const dt = DateTime.fromISO(value.trim(), { zone: 'utc', setZone: true });
  return dt.isValid ? dt : undefined;
}

function coerceDateTime(value: unknown): Coerced {
  const dt = parseDateTime(value);
  return dt ? ok(instantString(dt)) : fail(`${show(value)} is not an ISO 8601 date-time (e.g. 2024-01-31T10:00:00Z)`);
}

function coerceDate(value: unknown): Coerced {
  const s = value instanceof Date ? value.toISOString().slice(0, 10) : value;
  if (typeof s === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(s) && DateTime.fromISO(s).isValid) return ok(s);
  return fail(`${show(value)} is not a date (yyyy-MM-dd)`);
}

/** Seconds since midnight of "HH:mm[:ss[.fff]]", or undefined. */
export function timeSeconds(value: unknown): number | undefined {
  const m = typeof value === 'string' ? /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/.exec(value) : null;
  if (!m) return undefined;
  const [h, min, sec] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || min > 59 || sec > 59) return undefined;
  return h * 3600 + min * 60 + sec + Number(m[4] ?? 0);
}

function coerceTime(value: unknown): Coerced {
  return timeSeconds(value) === undefined ? fail(`${show(value)} is not a time (HH:mm or HH:mm:ss)`) : ok(value);
}

function coerceDuration(value: unknown): Coerced {
  return isDuration(value) ? ok((value as string).trim()) : fail(`${show(value)} is not an ISO 8601 duration (e.g. PT5S)`);
}

function coerceJson(value: unknown): Coerced {
  if (typeof value !== 'string') return ok(value);
  try {
    return ok(parseJsonSafe(value));
  } catch (err) {
    return fail(`is not valid JSON: ${(err as Error).message}`);
  }
}

function coerceUri(value: unknown): Coerced {
  if (typeof value === 'string' && /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(value.trim())) {
    try {
      new URL(value.trim());
      return ok(value.trim());
    } catch { /* reported below */ }
  }
  return fail(`${show(value)} is not a valid absolute URI`);
}

function coerceFile(value: unknown): Coerced {
  if (typeof value === 'string' && value.startsWith('kestra://')) return ok(value);
  return fail(`${show(value)} is not an internal storage URI (kestra:///...); upload the file as a multipart file part`);
}

function splitArray(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  if (s.startsWith('[')) {
    try {
      const parsed: unknown = parseJsonSafe(s);
      return Array.isArray(parsed) ? parsed : undefined;
    } catch { return undefined; }
  }
  return s === '' ? [] : s.split(',').map((x) => x.trim());
}

function coerceArray(value: unknown, def: Input): Coerced {
  const items = splitArray(value);
  if (!items) return fail(`${show(value)} is not a list (JSON array or comma-separated values)`);
  const itemType = def.itemType ?? 'STRING';
  const itemDef: Input = { id: def.id, type: itemType, values: def.values, validator: def.validator };
  const out: unknown[] = [];
  for (const [i, item] of items.entries()) {
    const r = coerceInputValue(itemDef, item);
    if (!r.ok) return fail(`item ${i}: ${r.message}`);
    out.push(r.value);
  }
  return ok(out);
}

const COERCERS: Record<InputType, Coercer> = {
  STRING: coerceString,
  INT: numberCoercer(true),
  FLOAT: numberCoercer(false),
  BOOLEAN: coerceBoolean,
  ENUM: coerceEnum,
  DATETIME: coerceDateTime,
  DATE: coerceDate,
  TIME: coerceTime,
  DURATION: coerceDuration,
  JSON: coerceJson,
  URI: coerceUri,
  // Never quotes the value (an error answer is no place for a secret); encrypted when the execution is stored (operator/secrets).
  SECRET: (v) => (asText(v) === undefined ? fail(`must be a string, got ${Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`}`) : ok(asText(v))),
  FILE: coerceFile,
  ARRAY: coerceArray,
  BOOL: coerceBoolean,
  SELECT: coerceEnum,
  // A list (JSON array or comma-separated), each item one of `values`.
  MULTISELECT: (v, def) => coerceArray(v, { ...def, itemType: 'ENUM' }),
};

/** Comparable number of a value of a ranged type (min/max), or undefined if it cannot be compared. */
export function rangeKey(type: InputType, value: unknown): number | undefined {
  switch (type) {
    case 'INT':
    case 'FLOAT': return toNumber(value, false);
    case 'DURATION': return isDuration(value) ? parseDuration(value as string) : undefined;
    case 'DATETIME': return parseDateTime(value)?.toMillis();
    case 'DATE': return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)
      ? DateTime.fromISO(value, { zone: 'utc' }).toMillis() : undefined;
    case 'TIME': return timeSeconds(value);
    default: return undefined;
  }
}

export const RANGED_TYPES: readonly InputType[] = ['INT', 'FLOAT', 'DURATION', 'DATE', 'TIME', 'DATETIME'];

function checkRange(def: Input, value: unknown): Coerced {
  if (!RANGED_TYPES.includes(def.type)) return ok(value);
  const v = rangeKey(def.type, value);
  const min = def.min === undefined ? undefined : rangeKey(def.type, def.min);
  const max = def.max === undefined ? undefined : rangeKey(def.type, def.max);
  if (v !== undefined && min !== undefined && v < min) return fail(`${show(value)} is less than the minimum ${show(def.min)}`);
  if (v !== undefined && max !== undefined && v > max) return fail(`${show(value)} is greater than the maximum ${show(def.max)}`);
  return ok(value);
}

/** Coerce a provided (non-missing) value to the input's type and check its constraints. */
export function coerceInputValue(def: Input, value: unknown): Coerced {
  const coercer = Object.hasOwn(COERCERS, def.type) ? COERCERS[def.type] : undefined;
  if (!coercer) return fail(`unknown input type ${show(def.type)}`);
  const r = coercer(value, def);
  return r.ok ? checkRange(def, r.value) : r;
}
