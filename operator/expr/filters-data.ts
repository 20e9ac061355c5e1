// Collection, number, JSON/YAML, date and jq filters of the expression engine.
import YAML from 'yaml';
import { arg, int, str } from './args.js';
import { addToDate, formatDate, toEpoch } from './dates.js';
import { ExpressionError } from './errors.js';
import type { CallContext, FilterImpl } from './evaluate.js';
import { runJq } from './jq.js';
import { asList, equalityKey, isPlainObject, makeMap, stringify, toNumber, typeName } from './values.js';

function firstOrLast(pick: 'first' | 'last'): FilterImpl {
  return (input) => {
    if (typeof input === 'string') return input === '' ? null : pick === 'first' ? input[0] : input[input.length - 1];
    const list = isPlainObject(input) ? Object.values(input) : asList(input, pick);
    if (list.length === 0) return null;
    return pick === 'first' ? list[0] : list[list.length - 1];
  };
}

function length(input: unknown): number {
  if (input === null || input === undefined) return 0;
  if (typeof input === 'string' || Array.isArray(input)) return input.length;
  if (isPlainObject(input)) return Object.keys(input).length;
  throw new ExpressionError(`length: unsupported ${typeName(input)}`);
}

function mapOf(input: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(input)) throw new ExpressionError(`${what}: expected a map, got ${typeName(input)}`);
  return input;
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const [x, y] = [stringify(a), stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Sort order: numbers by value, anything else by its printed text (maps and lists printed once each, not per comparison). */
function sorted(input: unknown, what: string, direction: 1 | -1): unknown[] {
  const list = asList(input, what);
  if (list.every((x) => typeof x !== 'object' || x === null)) return [...list].sort((a, b) => direction * compareValues(a, b));
  const items = list.map((value) => ({ value, text: stringify(value) }));
  items.sort((a, b) => {
    if (typeof a.value === 'number' && typeof b.value === 'number') return direction * (a.value - b.value);
    return direction * (a.text < b.text ? -1 : a.text > b.text ? 1 : 0);
  });
  return items.map((item) => item.value);
}

function slice(input: unknown, args: unknown[], kwargs: Record<string, unknown>): unknown {
  const from = int(arg(args, kwargs, 0, 'fromIndex'), 'slice', 0);
  if (typeof input === 'string') return input.slice(from, int(arg(args, kwargs, 1, 'toIndex'), 'slice', input.length));
  const list = asList(input, 'slice');
  return list.slice(from, int(arg(args, kwargs, 1, 'toIndex'), 'slice', list.length));
}

function chunk(input: unknown, args: unknown[], kwargs: Record<string, unknown>): unknown[][] {
  const list = asList(input, 'chunk');
  const size = int(arg(args, kwargs, 0, 'size'), 'chunk');
  if (size <= 0) throw new ExpressionError('chunk: size must be positive');
  const out: unknown[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function distinct(input: unknown): unknown[] {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const item of asList(input, 'distinct')) {
    const key = equalityKey(item);
    if (key !== undefined && seen.has(key)) continue;
    if (key !== undefined) seen.add(key);
    out.push(item);
  }
  return out;
}

function merge(input: unknown, args: unknown[], _kwargs: Record<string, unknown>, ctx: CallContext): unknown {
  const other = args[0];
  if (ctx.budget.sizeOf(input) + ctx.budget.sizeOf(other) > ctx.budget.maxBytes) {
    throw ctx.budget.tooBig(`would merge values of more than ${ctx.budget.maxBytes} bytes`);
  }
  if (Array.isArray(input)) return [...input, ...(Array.isArray(other) ? other : [other])];
  return makeMap([...Object.entries(mapOf(input, 'merge')), ...Object.entries(mapOf(other, 'merge'))]);
}

function numberFilter(input: unknown, args: unknown[], kwargs: Record<string, unknown>): number {
  const n = toNumber(typeof input === 'string' ? input.trim() : input, 'number');
  const type = String(arg(args, kwargs, 0, 'type') ?? '').toUpperCase();
  return type === 'INT' || type === 'LONG' || type === 'INTEGER' ? Math.trunc(n) : n;
}

/** A subset of Java DecimalFormat: grouping, minimum integer digits, min/max fraction digits, % suffix. */
function numberFormat(input: unknown, args: unknown[], kwargs: Record<string, unknown>): string {
  const n = toNumber(input, 'numberFormat');
  const pattern = str(arg(args, kwargs, 0, 'format'), 'numberFormat');
  const percent = pattern.includes('%');
  const core = pattern.replace(/[^#0,.]/g, '');
  const [intPart, fracPart = ''] = core.split('.');
  const formatted = new Intl.NumberFormat('en-US', {
    useGrouping: intPart.includes(','),
    minimumIntegerDigits: Math.max(1, (intPart.match(/0/g) ?? []).length),
    minimumFractionDigits: (fracPart.match(/0/g) ?? []).length,
    maximumFractionDigits: fracPart.length,
  }).format(percent ? n * 100 : n);
  const prefix = pattern.slice(0, pattern.search(/[#0,.]/)).replace(/'/g, '');
  return prefix + formatted + (percent ? '%' : '');
}

function round(input: unknown, args: unknown[], kwargs: Record<string, unknown>): number {
  const n = toNumber(input, 'round');
  const precision = int(arg(args, kwargs, 0, 'precision'), 'round', 0);
  const method = String(arg(args, kwargs, 1, 'method') ?? 'common');
  const factor = 10 ** precision;
  const fn = method === 'floor' ? Math.floor : method === 'ceil' ? Math.ceil : Math.round;
  return fn(n * factor) / factor;
}

function epoch(unit: 'seconds' | 'millis' | 'micros' | 'nanos'): FilterImpl {
  return (input, args, kwargs) => toEpoch(input, unit, arg(args, kwargs, 0, 'timeZone'));
}

export const DATA_FILTERS: Record<string, FilterImpl> = {
  first: firstOrLast('first'),
  last: firstOrLast('last'),
  length,
  size: length,
  keys: (input) => (Array.isArray(input) ? input.map((_x, i) => i) : Object.keys(mapOf(input, 'keys'))),
  values: (input) => Object.values(mapOf(input, 'values')),
  join: (input, args, kwargs) => asList(input, 'join').map(stringify).join(stringify(arg(args, kwargs, 0, 'separator'))),
  slice,
  sort: (input) => sorted(input, 'sort', 1),
  rsort: (input) => sorted(input, 'rsort', -1),
  reverse: (input) => (typeof input === 'string' ? [...input].reverse().join('') : [...asList(input, 'reverse')].reverse()),
  chunk,
  distinct,
  unique: distinct,
  flatten: (input) => asList(input, 'flatten').flatMap((x) => (Array.isArray(x) ? x : [x])),
  merge,
  abs: (input) => Math.abs(toNumber(input, 'abs')),
  number: numberFilter,
  numberFormat,
  numberformat: numberFormat,
  round,
  json: (input) => JSON.stringify(input ?? null),
  toJson: (input) => JSON.stringify(input ?? null),
  yaml: (input) => YAML.stringify(input ?? null),
  toYaml: (input) => YAML.stringify(input ?? null),
  date: (input, args, kwargs) => formatDate(input, arg(args, kwargs, 0, 'format'), kwargs.timeZone, kwargs.existingFormat),
  dateAdd: (input, args, kwargs) => addToDate(input, toNumber(arg(args, kwargs, 0, 'amount'), 'dateAdd'),
    arg(args, kwargs, 1, 'unit'), kwargs.format, kwargs.timeZone),
  timestamp: epoch('seconds'),
  timestampMilli: epoch('millis'),
  timestampMicro: epoch('micros'),
  timestampNano: epoch('nanos'),
  jq: (input, args, kwargs, ctx) => runJq(input, str(arg(args, kwargs, 0, 'expression'), 'jq'), ctx.budget, ctx.services.now),
};
