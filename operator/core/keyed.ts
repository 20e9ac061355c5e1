// Objects keyed by names that a flow author or an API caller chose (input ids, loop values, label keys, JSON keys):
// built without a prototype, so that no key (`__proto__`, `constructor`, `prototype`) can reach Object.prototype or
// swap an object's prototype, and ids holding such segments are refused where they are declared.
import { isDeepStrictEqual } from 'node:util';

/** Key segments refused in ids at save, and never used as a path into an object. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** An empty object without a prototype: assigning any key only ever creates an own data property. */
export function dict<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A prototype-free object from entries (later entries win). */
export function dictFrom<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const out = dict<T>();
  for (const [k, v] of entries) out[k] = v;
  return out;
}

/** Objects some of whose properties are made on first read (lazyProperty): the template sandbox reads those too. */
const lazyHolders = new WeakSet<object>();

/**
 * Defines `key` of `target` as the value `make` returns, made on first read (or replaced when assigned), then an
 * ordinary data property in the same place of the key order. For a derived tree of which a template reads a few keys
 * (the `outputs` of 100,000 task runs): enumeration, JSON.stringify, Object.entries and copies read it as data.
 */
export function lazyProperty<T>(target: Record<string, T>, key: string, make: () => T): void {
  const settle = (value: T) => { Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true }); return value; };
  Object.defineProperty(target, key, { get: () => settle(make()), set: settle, enumerable: true, configurable: true });
  lazyHolders.add(target);
}

/** Whether `target` was given properties made on first read (lazyProperty). */
export function hasLazyProperties(target: object): boolean {
  return lazyHolders.has(target);
}

/** The first reserved segment of a dotted id (`a.__proto__.b` → `__proto__`), or undefined. */
export function reservedSegment(id: string, separator = '.'): string | undefined {
  return id.split(separator).find((s) => RESERVED_KEYS.has(s));
}

/** A deep copy of JSON-like data whose objects have no prototype (arrays stay arrays, other values as they are). */
export function safeData<T = unknown>(value: T): T {
  if (Array.isArray(value)) return value.map(safeData) as T;
  if (value !== null && typeof value === 'object' && isPlainData(value)) {
    const out = dict();
    for (const k of Object.keys(value)) out[k] = safeData((value as Record<string, unknown>)[k]);
    return out as T;
  }
  return value;
}

/** JSON.parse whose objects have no prototype: for text from flows, callers, task output and external systems. */
export function parseJsonSafe(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out = dict();
    for (const k of Object.keys(value)) out[k] = (value as Record<string, unknown>)[k];
    return out;
  });
}

function isPlainData(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Frozen lists and whether they hold plain values only: a frozen list never changes, so it is looked at once. */
const plainValued = new WeakMap<readonly unknown[], boolean>();

/**
 * Whether a frozen list holds no object: looked at once per list (a loop's 100,000 values are shared by every copy
 * of its run, a step's copy of the loop's run would otherwise look at each of them).
 */
function holdsPlainValues(list: readonly unknown[]): boolean {
  const long = list.length > PLAIN_LOOKED_AT;
  let plain = long ? plainValued.get(list) : undefined;
  if (plain === undefined) {
    plain = true;
    for (let i = 0; i < list.length && plain; i++) { const v = list[i]; plain = v === null || typeof v !== 'object'; }
    if (long) plainValued.set(list, plain);
  }
  return plain;
}

/** Lists up to this long are looked at each time (cheaper than remembering them: a run holds several short ones). */
const PLAIN_LOOKED_AT = 64;

/**
 * A deep copy of JSON-like data that keeps each object's kind (plain or prototype-free) and copies an own `__proto__`
 * key as a key. Several times faster than structuredClone on records of many small objects (an engine step copies its
 * execution record: 100,000 task runs). Values that are not plain data (a Date...) go through structuredClone.
 * `shareFrozen`: a frozen list of plain values (a loop's values) is shared, not copied: nothing can change it.
 */
export function copyData<T>(value: T, shareFrozen = false): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (shareFrozen && Object.isFrozen(value) && holdsPlainValues(value)) return value;
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyData(value[i], shareFrozen);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = proto === null ? dict() : {};
  for (const k of Object.keys(value)) {
    const v = copyData((value as Record<string, unknown>)[k], shareFrozen);
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out as T;
}

/**
 * Whether two values of JSON-like data are equal in depth, as `isDeepStrictEqual` says: primitives by `Object.is`,
 * arrays item by item, objects of the same kind (plain or prototype-free) with the same own keys and equal values.
 * Several times faster than `isDeepStrictEqual` on task runs (an engine step compares every run it copied with its
 * original: 100,000 of them in a fan-out). Objects that are not plain data (a Date...) are left to `isDeepStrictEqual`.
 */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b);
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const proto = Object.getPrototypeOf(a);
  if (proto !== Object.getPrototypeOf(b)) return false;
  if (proto !== Object.prototype && proto !== null) return isDeepStrictEqual(a, b);
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) {
    if (!Object.hasOwn(b, k) || !sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * Freezes JSON-like data in depth (objects already frozen are taken as frozen all the way down). A record written to
 * the store is frozen so that its parts can be shared with the next version instead of copied (see `copyRecord`).
 */
export function freezeData<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) for (const v of value) freezeData(v);
  // for-in, not Object.keys: no array per object (records hold plain data, whose prototypes add no enumerable keys).
  else for (const k in value) if (Object.hasOwn(value, k)) freezeData((value as Record<string, unknown>)[k]);
  return value;
}
