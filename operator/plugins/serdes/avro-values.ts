// Avro values and ION values, both ways, by walking an Avro schema (JSON form): Kestra's AvroConverter (text to
// booleans, numbers, dates with trueValues/falseValues/nullValues and date formats; strictSchema) for writing, and
// Kestra's AvroDeserializer (logical types to dates, timestamps, decimals) for reading. Unions are avsc's wrapped
// form (`{ branch: value }`). Also infers a schema from rows when IonToAvro/IonToParquet get none.
import type { DateTime as LuxonDateTime } from 'luxon';
import { IonDecimal, IonTimestamp } from '../../storage/ion.js';

export type AvroSchema = string | AvroSchema[] | { type: AvroSchema; name?: string; namespace?: string; logicalType?: string; fields?: { name: string; type: AvroSchema; default?: unknown }[]; items?: AvroSchema; values?: AvroSchema; symbols?: string[]; size?: number; precision?: number; scale?: number };

type Node = Exclude<AvroSchema, string | AvroSchema[]>;

/** Named types of a schema by full name (and short name), for resolving references. */
export class AvroNames {
  readonly byName = new Map<string, Node>();
  private readonly fullNames = new WeakMap<Node, string>();

  constructor(root: AvroSchema) {
    this.collect(root, '');
  }

  private collect(s: AvroSchema, ns: string): void {
    if (Array.isArray(s)) { s.forEach((x) => this.collect(x, ns)); return; }
    if (typeof s === 'string') return;
    if (typeof s.type === 'object') { this.collect(s.type, ns); return; }
    if ((s.type === 'record' || s.type === 'error' || s.type === 'enum' || s.type === 'fixed') && s.name) {
      const space = s.name.includes('.') ? '' : (s.namespace ?? ns);
      const full = space ? `${space}.${s.name}` : s.name;
      this.byName.set(full, s);
      if (!this.byName.has(s.name.split('.').pop()!)) this.byName.set(s.name.split('.').pop()!, s);
      this.fullNames.set(s, full);
      const name = s.name;
      if (s.fields) s.fields.forEach((f) => this.collect(f.type, name.includes('.') ? name.split('.').slice(0, -1).join('.') : space));
    }
    if (s.type === 'array' && s.items) this.collect(s.items, ns);
    if (s.type === 'map' && s.values) this.collect(s.values, ns);
  }

  /** A schema node with references and `{type: {...}}` wrappers resolved. */
  node(s: AvroSchema): Node | AvroSchema[] {
    if (Array.isArray(s)) return s;
    if (typeof s === 'string') {
      const named = this.byName.get(s);
      return named ?? { type: s };
    }
    if (typeof s.type === 'object' && !s.logicalType) return this.node(s.type);
    if (typeof s.type === 'string' && this.byName.has(s.type) && !s.logicalType) return this.byName.get(s.type)!;
    return s;
  }

  /** avsc's key of a union branch. */
  branchKey(s: AvroSchema): string {
    const n = this.node(s);
    if (Array.isArray(n)) throw new Error('A union cannot hold a union');
    const full = this.fullNames.get(n);
    if (full) return full;
    return typeof n.type === 'string' ? n.type : this.branchKey(n.type);
  }
}

export interface WriteOptions {
  trueValues: Set<string>;
  falseValues: Set<string>;
  nullValues: Set<string>;
  /** Parses a date, time or date-time text with the task's format (undefined when it does not match). */
  parseDate(text: string, kind: 'date' | 'time' | 'datetime'): LuxonDateTime | undefined;
  decimalSeparator: string;
  strictSchema: boolean;
  inferAllFields: boolean;
  zone: string;
  DateTime: typeof LuxonDateTime;
}

export class AvroValueError extends Error {}

const MS_PER_DAY = 86_400_000;

/** The Avro value of `value` for schema `s` (strings from CSV are parsed as the schema says). */
export function toAvro(names: AvroNames, s: AvroSchema, value: unknown, o: WriteOptions, path: string): unknown {
  const n = names.node(s);
  if (Array.isArray(n)) return toUnion(names, n, value, o, path);
  if (typeof value === 'string' && o.nullValues.has(value) && n.type !== 'string') value = null;
  const fail = (why: string): never => { throw new AvroValueError(`${path}: ${why}, got ${describe(value)}`); };
  if (n.logicalType) {
    const v = toLogical(n, value, o, path);
    if (v !== undefined) return v;
  }
  switch (n.type) {
    case 'null':
      if (value === null || value === undefined) return null;
      return fail('expected null');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && o.trueValues.has(value)) return true;
      if (typeof value === 'string' && o.falseValues.has(value)) return false;
      return fail('expected a boolean');
    case 'int': case 'long': {
      const x = number(value, o);
      if (x === undefined || !Number.isInteger(x)) return fail(`expected an ${n.type}`);
      if (n.type === 'int' && (x < -2147483648 || x > 2147483647)) return fail('out of the int range');
      return x;
    }
    case 'float': case 'double': {
      const x = number(value, o);
      if (x === undefined) return fail(`expected a ${n.type}`);
      return x;
    }
    case 'string':
      if (value === null || value === undefined) return fail('expected a string');
      if (typeof value === 'string') return value;
      if (typeof value === 'object' && !(value instanceof IonTimestamp) && !(value instanceof IonDecimal)) return JSON.stringify(value);
      return String(value);
    case 'bytes': case 'fixed':
      if (value instanceof Uint8Array) return Buffer.from(value);
      if (typeof value === 'string') return Buffer.from(value, 'utf8');
      return fail(`expected ${n.type}`);
    case 'enum':
      if (typeof value === 'string' && n.symbols?.includes(value)) return value;
      return fail(`expected one of ${(n.symbols ?? []).join(', ')}`);
    case 'array': {
      if (!Array.isArray(value)) return fail('expected a list');
      return value.map((v, k) => toAvro(names, n.items!, v, o, `${path}[${k}]`));
    }
    case 'map': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('expected a map');
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = toAvro(names, n.values!, v, o, `${path}.${k}`);
      return out;
    }
    case 'record': case 'error': {
      if (value === null || typeof value !== 'object') return fail('expected a map');
      const fields = n.fields ?? [];
      const src = Array.isArray(value) ? Object.fromEntries(fields.map((f, k) => [f.name, value[k]])) : value as Record<string, unknown>;
      if (o.strictSchema) {
        const extra = Array.isArray(value) ? value.length > fields.length : Object.keys(src).some((k) => !fields.some((f) => f.name === k));
        if (extra) fail(`fields not declared in the schema (strictSchema), declared: ${fields.map((f) => f.name).join(', ')}`);
      }
      const out: Record<string, unknown> = {};
      for (const f of fields) {
        // a field inferred from a key that is no Avro name ('unit price') is that key made one ('unit_price')
        const key = Object.hasOwn(src, f.name) ? f.name : Object.keys(src).find((k) => avroName(k) === f.name) ?? f.name;
        const has = Object.hasOwn(src, key) && src[key] !== undefined;
        out[f.name] = !has && f.default !== undefined ? defaultValue(names, f.type, f.default) : toAvro(names, f.type, has ? src[key] : null, o, path ? `${path}.${f.name}` : f.name);
      }
      return out;
    }
    default:
      return fail(`unsupported Avro type '${String(n.type)}'`);
  }
}

function defaultValue(names: AvroNames, s: AvroSchema, value: unknown): unknown {
  const n = names.node(s);
  if (Array.isArray(n)) return value === null ? null : { [names.branchKey(n[0])]: value };
  return value;
}

function toUnion(names: AvroNames, branches: AvroSchema[], value: unknown, o: WriteOptions, path: string): unknown {
  const isNull = value === null || value === undefined || (typeof value === 'string' && o.nullValues.has(value) && (o.inferAllFields || !branches.some((b) => names.branchKey(b) === 'string')));
  if (isNull && branches.some((b) => names.branchKey(b) === 'null')) return null;
  let last: Error | undefined;
  for (const b of branches) {
    const key = names.branchKey(b);
    if (key === 'null') continue;
    try {
      return { [key]: toAvro(names, b, value, o, path) };
    } catch (err) {
      last = err as Error;
    }
  }
  throw new AvroValueError(`${path}: no branch of the union [${branches.map((b) => names.branchKey(b)).join(', ')}] takes ${describe(value)}${last ? ` (${last.message})` : ''}`);
}

function number(value: unknown, o: WriteOptions): number | undefined {
  if (typeof value === 'number') return value;
  if (value instanceof IonDecimal) return Number(value.text);
  if (typeof value === 'string') {
    const t = (o.decimalSeparator !== '.' ? value.replace(o.decimalSeparator, '.') : value).trim();
    if (t === '' || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(Infinity|NaN)$/.test(t)) return undefined;
    return Number(t);
  }
  return undefined;
}

const describe = (v: unknown): string => (v === null || v === undefined ? 'null' : typeof v === 'string' ? `'${v.length > 60 ? v.slice(0, 60) + '...' : v}'` : typeof v === 'object' ? (v instanceof IonTimestamp || v instanceof IonDecimal ? v.text : Array.isArray(v) ? 'a list' : 'a map') : String(v));

function dateTimeOf(value: unknown, kind: 'date' | 'time' | 'datetime', o: WriteOptions): LuxonDateTime | undefined {
  if (value instanceof IonTimestamp) {
    if (value.dateOnly) return o.DateTime.fromISO(value.toDate().toISOString(), { zone: 'UTC' });
    return value.hasOffset ? o.DateTime.fromISO(value.text, { setZone: true }) : o.DateTime.fromISO(value.text.replace(/-00:00$/, ''), { zone: o.zone });
  }
  if (value instanceof Date) return o.DateTime.fromJSDate(value, { zone: 'UTC' });
  if (typeof value === 'string') return o.parseDate(value, kind);
  return undefined;
}

/** A logical type's underlying value, or undefined to fall back to the underlying type. */
function toLogical(n: Node, value: unknown, o: WriteOptions, path: string): unknown {
  const fail = (why: string): never => { throw new AvroValueError(`${path}: ${why}, got ${describe(value)}`); };
  if (value === null || value === undefined) return undefined;
  switch (n.logicalType) {
    case 'date': {
      if (typeof value === 'number') return value;
      const dt = dateTimeOf(value, 'date', o);
      if (!dt?.isValid) return fail('expected a date');
      return Math.floor(Date.UTC(dt.year, dt.month - 1, dt.day) / MS_PER_DAY);
    }
    case 'time-millis': case 'time-micros': {
      if (typeof value === 'number') return value;
      const dt = dateTimeOf(value, 'time', o);
      if (!dt?.isValid) return fail('expected a time');
      const ms = ((dt.hour * 60 + dt.minute) * 60 + dt.second) * 1000 + dt.millisecond;
      return n.logicalType === 'time-millis' ? ms : ms * 1000;
    }
    case 'timestamp-millis': case 'timestamp-micros': case 'local-timestamp-millis': case 'local-timestamp-micros': {
      if (typeof value === 'number') return value;
      const dt = dateTimeOf(value, 'datetime', o);
      if (!dt?.isValid) return fail('expected a date-time');
      const local = n.logicalType.startsWith('local-');
      const ms = local ? Date.UTC(dt.year, dt.month - 1, dt.day, dt.hour, dt.minute, dt.second, dt.millisecond) : dt.toMillis();
      return n.logicalType.endsWith('micros') ? ms * 1000 : ms;
    }
    case 'decimal': {
      const scale = n.scale ?? 0;
      const text = value instanceof IonDecimal ? value.text : typeof value === 'number' ? String(value) : typeof value === 'string' ? value.replace(o.decimalSeparator, '.') : fail('expected a decimal');
      const unscaled = scaledBigInt(text, scale);
      if (unscaled === undefined) return fail('expected a decimal');
      const bytes = twosComplement(unscaled, n.type === 'fixed' ? n.size : undefined);
      if (!bytes) return fail(`does not fit fixed(${n.size})`);
      return bytes;
    }
    default:
      return undefined;
  }
}

/** `text` × 10^scale as an integer (rounded half up), or undefined when it is not a number. */
export function scaledBigInt(text: string, scale: number): bigint | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eEdD]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const exp = Number(m[4] ?? 0) + scale;
  let digits = (m[2] || '0') + (m[3] ?? '');
  let point = (m[2] || '0').length + exp;
  if (point < 0) { digits = '0'.repeat(-point) + digits; point = 0; }
  const whole = (digits + '0'.repeat(Math.max(0, point - digits.length))).slice(0, point) || '0';
  const next = digits[point] ?? '0';
  let n = BigInt(whole) + (next >= '5' ? 1n : 0n);
  if (m[1] === '-') n = -n;
  return n;
}

function twosComplement(n: bigint, size?: number): Buffer | undefined {
  let hex = (n < 0n ? (1n << BigInt((((-n).toString(16).length + 2) >> 1) * 8 + 8)) + n : n).toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let buf = Buffer.from(hex, 'hex');
  if (n >= 0n && buf.length && buf[0] & 0x80) buf = Buffer.concat([Buffer.from([0]), buf]);
  if (n < 0n) { // drop redundant sign bytes
    let k = 0;
    while (k < buf.length - 1 && buf[k] === 0xff && buf[k + 1] & 0x80) k++;
    buf = buf.subarray(k);
  }
  if (size === undefined) return buf;
  if (buf.length > size) return undefined;
  return Buffer.concat([Buffer.alloc(size - buf.length, n < 0n ? 0xff : 0), buf]);
}

/** The decimal text of a two's-complement big-endian unscaled value and a scale. */
export function decimalText(bytes: Uint8Array, scale: number): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  if (bytes.length && bytes[0] & 0x80) n -= 1n << BigInt(bytes.length * 8);
  return bigDecimalText(n, scale);
}

export function bigDecimalText(n: bigint, scale: number): string {
  const neg = n < 0n;
  let s = (neg ? -n : n).toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, '0');
    s = `${s.slice(0, -scale)}.${s.slice(-scale)}`;
  } else if (scale < 0) s += '0'.repeat(-scale);
  return (neg ? '-' : '') + s;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** A decimal as ION keeps it: a number when a double holds it exactly, else IonDecimal. */
export function decimalValue(text: string): number | IonDecimal {
  const x = Number(text);
  return String(x) === text.replace(/^(-?)0+(?=\d)/, '$1') ? x : new IonDecimal(text);
}

/** An Avro value decoded by avsc (wrapped unions) as an ION value, as Kestra's AvroDeserializer maps it. */
export function fromAvro(names: AvroNames, s: AvroSchema, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const n = names.node(s);
  if (Array.isArray(n)) {
    const [key, inner] = Object.entries(value as Record<string, unknown>)[0];
    const branch = n.find((b) => names.branchKey(b) === key);
    return branch ? fromAvro(names, branch, inner) : inner;
  }
  switch (n.logicalType) {
    case 'date': {
      const d = new Date((value as number) * MS_PER_DAY);
      return new IonTimestamp(`${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`);
    }
    case 'timestamp-millis': return new IonTimestamp(new Date(value as number).toISOString());
    case 'timestamp-micros': return new IonTimestamp(microsIso(value as number, 'Z'));
    case 'local-timestamp-millis': return new IonTimestamp(new Date(value as number).toISOString().replace('Z', '-00:00'));
    case 'local-timestamp-micros': return new IonTimestamp(microsIso(value as number, '-00:00'));
    case 'time-millis': case 'time-micros': {
      const ms = n.logicalType === 'time-millis' ? (value as number) : Math.floor((value as number) / 1000);
      return new Date(ms).toISOString().slice(11, 23).replace(/\.000$/, '');
    }
    case 'decimal': if (value instanceof Uint8Array) return decimalValue(decimalText(value, n.scale ?? 0)); break;
    default: break;
  }
  switch (n.type) {
    case 'array': return (value as unknown[]).map((v) => fromAvro(names, n.items!, v));
    case 'map': {
      const out: Record<string, unknown> = Object.create(null);
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = fromAvro(names, n.values!, v);
      return out;
    }
    case 'record': case 'error': {
      const out: Record<string, unknown> = Object.create(null);
      for (const f of n.fields ?? []) out[f.name] = fromAvro(names, f.type, (value as Record<string, unknown>)[f.name]);
      return out;
    }
    case 'bytes': case 'fixed': return Buffer.from(value as Uint8Array);
    default: return value;
  }
}

function microsIso(micros: number, zone: string): string {
  const ms = Math.floor(micros / 1000);
  const rest = micros - ms * 1000;
  return new Date(ms).toISOString().replace('Z', `${pad(rest, 3)}${zone}`);
}

type Inferred = 'null' | 'boolean' | 'long' | 'double' | 'string' | 'date' | 'timestamp' | 'bytes' | { record: Map<string, Inferred> } | { array: Inferred };

function inferValue(v: unknown): Inferred {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'long' : 'double';
  if (v instanceof IonDecimal) return 'double';
  if (v instanceof IonTimestamp) return v.dateOnly ? 'date' : 'timestamp';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return { array: v.reduce<Inferred>((acc, x) => merge(acc, inferValue(x)), 'null') };
  if (typeof v === 'object') {
    const m = new Map<string, Inferred>();
    for (const [k, x] of Object.entries(v)) m.set(k, inferValue(x));
    return { record: m };
  }
  return 'string';
}

function merge(a: Inferred, b: Inferred): Inferred {
  if (a === 'null') return b;
  if (b === 'null') return a;
  if (typeof a === 'string' && typeof b === 'string') {
    if (a === b) return a;
    if ((a === 'long' && b === 'double') || (a === 'double' && b === 'long')) return 'double';
    return 'string';
  }
  if (typeof a === 'object' && typeof b === 'object') {
    if ('array' in a && 'array' in b) return { array: merge(a.array, b.array) };
    if ('record' in a && 'record' in b) {
      const m = new Map(a.record);
      for (const [k, t] of b.record) m.set(k, merge(m.get(k) ?? 'null', t));
      return { record: m };
    }
  }
  return 'string';
}

/** Infers an Avro schema (every field nullable) from the first rows, as Kestra's InferAvroSchema does when no `schema` is given. */
export class SchemaInferrer {
  private shape: Inferred = 'null';
  private count = 0;

  add(row: unknown): void {
    this.shape = merge(this.shape, inferValue(row));
    this.count++;
  }

  schema(): AvroSchema {
    let records = 0;
    const avro = (t: Inferred): AvroSchema => {
      if (t === 'null') return 'string';
      if (t === 'date') return { type: 'int', logicalType: 'date' };
      if (t === 'timestamp') return { type: 'long', logicalType: 'timestamp-millis' };
      if (typeof t === 'string') return t;
      if ('array' in t) return { type: 'array', items: ['null', avro(t.array)] };
      records++;
      return {
        type: 'record', name: records === 1 ? 'Root' : `Record${records}`,
        fields: [...t.record].map(([k, x]) => ({ name: avroName(k), type: ['null', avro(x)], default: null })),
      };
    };
    if (typeof this.shape !== 'object' || !('record' in this.shape)) {
      throw new Error(this.count === 0 ? 'Cannot infer a schema from an empty file: set `schema`' : 'Cannot infer a schema: the rows are not maps (set `schema`)');
    }
    return avro(this.shape);
  }
}

/** Avro field names are `[A-Za-z_][A-Za-z0-9_]*`. */
export function avroName(k: string): string {
  const s = k.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
}
