// Value helpers of the expression sandbox: safe member lookup (own data properties of plain
// objects and arrays only), Pebble truthiness, equality, emptiness and output stringification.
import { dict, hasLazyProperties } from '../core/keyed.js';
import { ExpressionError } from './errors.js';

/** Marker for "no such variable/attribute", only produced in tolerant contexts (`??`, `is defined`...). */
export const UNDEF: unique symbol = Symbol('undefined');
export type Value = unknown;

const FORBIDDEN_KEYS = new Set(['constructor', '__proto__', 'prototype', '__defineGetter__', '__defineSetter__',
  '__lookupGetter__', '__lookupSetter__']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function assertSafeKey(key: string): void {
  if (FORBIDDEN_KEYS.has(key)) throw new ExpressionError(`Access to \`${key}\` is not allowed`);
}

/** Formats a path segment the way a flow author would write it: `.name` or `['odd key']` / `[0]`. */
export function pathSegment(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `['${key.replace(/'/g, "\\'")}']`;
}

function ownData(obj: object, key: string): { found: boolean; value?: unknown } {
  let desc = Object.getOwnPropertyDescriptor(obj, key);
  // A property made on first read (the engine's `outputs` tree, keyed.ts lazyProperty): reading it makes it data.
  if (desc?.get && hasLazyProperties(obj)) {
    void (obj as Record<string, unknown>)[key];
    desc = Object.getOwnPropertyDescriptor(obj, key);
  }
  if (!desc || !desc.enumerable || !('value' in desc)) return { found: false };
  // undefined counts as absent, as after a JSON round trip; functions and symbols are never data.
  if (desc.value === undefined || typeof desc.value === 'function' || typeof desc.value === 'symbol') return { found: false };
  return { found: true, value: desc.value };
}

/**
 * Looks `key` up in `target`. Returns UNDEF when absent; throws ExpressionError when the target is
 * not traversable (class instances, functions...) or the key is a forbidden name.
 */
export function memberLookup(target: unknown, key: unknown, path: string): unknown {
  if (typeof key === 'string') assertSafeKey(key);
  if (Array.isArray(target)) {
    if (key === 'length') return target.length;
    const index = typeof key === 'number' ? key : typeof key === 'string' && /^\d+$/.test(key) ? Number(key) : NaN;
    if (!Number.isInteger(index) || index < 0) return UNDEF;
    return index < target.length ? toValue(target[index]) : UNDEF;
  }
  if (typeof target === 'string') {
    if (key === 'length') return target.length;
    throw new ExpressionError(`Cannot read \`${String(key)}\` of a string at \`${path}\``);
  }
  if (isPlainObject(target)) {
    if (typeof key !== 'string' && typeof key !== 'number') return UNDEF;
    const hit = ownData(target, String(key));
    return hit.found ? toValue(hit.value) : UNDEF;
  }
  if (target === null || target === undefined) return UNDEF;
  throw new ExpressionError(`Cannot read \`${String(key)}\` of a value of type ${typeName(target)} at \`${path}\``);
}

/** Host values other than data never enter the template's value space. */
function toValue(value: unknown): unknown {
  if (value === undefined) return null;
  return value;
}

export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'list';
  if (isPlainObject(value)) return 'map';
  if (value instanceof Date) return 'date';
  return typeof value;
}

const FALSE_STRINGS = new Set(['', 'false', '0', '-0']);

/** Kestra-like truthiness: booleans as is; strings unless blank/"false"/"0"; non-zero numbers; non-empty collections. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === UNDEF) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return !FALSE_STRINGS.has(value.trim().toLowerCase());
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === UNDEF) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) return Object.keys(value).length === 0;
  return false;
}

/** Structural equality used by `==`, `contains`, `distinct`. Numbers compare by value. */
export function equals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return a == b;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A text equal for two values exactly when equals() holds, for Set lookups (undefined for NaN, which equals nothing);
 * it serializes maps and lists, which are bounded: the budget has checked every value a template built.
 */
export function equalityKey(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return `o${JSON.stringify(value)}`;
  if (typeof value === 'number' && Number.isNaN(value)) return undefined;
  return `${typeof value}:${String(value)}`;
}

/** Prints a value as `{{ }}` output does: null → '', maps/lists → JSON, dates → ISO. */
export function stringify(value: unknown): string {
  if (value === null || value === undefined || value === UNDEF) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

/** Creates a prototype-free map from entries, refusing the reserved keys (`__proto__`, `constructor`...). */
export function makeMap(entries: Iterable<[string, unknown]>): Record<string, unknown> {
  const out = dict();
  for (const [key, value] of entries) {
    assertSafeKey(key);
    out[key] = value;
  }
  return out;
}

export function toNumber(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (Number.isNaN(n)) throw new ExpressionError(`${what}: expected a number, got ${JSON.stringify(value)}`);
  return n;
}

/** Lists iterated by `for`, `join`, `sort`...: arrays as is, maps as values is NOT implied. */
export function asList(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === null || value === undefined) return [];
  throw new ExpressionError(`${what}: expected a list, got ${typeName(value)}`);
}
