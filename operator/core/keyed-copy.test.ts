// copyData (keyed.ts), the copy an engine step makes of its record: a deep copy that keeps prototype-free objects
// prototype-free, copies an own `__proto__` key as a key, and shares nothing with the original.
import { describe, expect, it } from 'vitest';
import { isDeepStrictEqual } from 'node:util';
import { copyData, dict, parseJsonSafe, sameData } from './keyed.js';

describe('copyData', () => {
  it('copies deeply: changing the copy leaves the original as it was', () => {
    const original = { a: [1, { b: 'x' }], c: { d: null, e: true }, s: 'text' };
    const copy = copyData(original);
    expect(copy).toEqual(original);
    (copy.a[1] as { b: string }).b = 'changed';
    copy.c.e = false;
    expect(original).toEqual({ a: [1, { b: 'x' }], c: { d: null, e: true }, s: 'text' });
  });

  it('keeps prototype-free objects prototype-free and plain objects plain', () => {
    const free = dict();
    free.k = { inner: 1 };
    const copy = copyData({ free });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(copy.free)).toBeNull();
    expect(Object.getPrototypeOf(copy.free.k)).toBe(Object.prototype);
  });

  it('copies an own __proto__ key as a key, without changing any prototype', () => {
    const data = parseJsonSafe('{"__proto__": {"polluted": 1}, "plain": {"__proto__": {"x": 2}}}') as Record<string, any>;
    const plain = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
    for (const source of [data, plain]) {
      const copy = copyData(source) as Record<string, any>;
      expect(Object.hasOwn(copy, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: 1 });
      expect(copy.polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
    expect(Object.getOwnPropertyDescriptor(copyData(data).plain, '__proto__')?.value).toEqual({ x: 2 });
  });

  it('copies other values (a Date) through structuredClone', () => {
    const date = new Date('2026-01-01T00:00:00Z');
    const copy = copyData({ date });
    expect(copy.date).not.toBe(date);
    expect(copy.date.getTime()).toBe(date.getTime());
  });
});

describe('sameData (what settleRuns compares a copied run with its original by)', () => {
  const free = (entries: Record<string, unknown>) => Object.assign(dict(), entries);
  const cases: [string, unknown, unknown][] = [
    ['equal nested data', { a: [1, { b: 'x' }], c: null }, { a: [1, { b: 'x' }], c: null }],
    ['a changed leaf', { a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] }],
    ['a key more', { a: 1 }, { a: 1, b: 2 }],
    ['a key set to undefined against a missing key', { a: 1, b: undefined }, { a: 1, c: undefined }],
    ['undefined against absent', { a: undefined }, {}],
    ['arrays of other lengths', [1, 2], [1, 2, 3]],
    ['an array against an object', [1], { 0: 1 }],
    ['plain against prototype-free', { a: 1 }, free({ a: 1 })],
    ['prototype-free alike', free({ a: [1] }), free({ a: [1] })],
    ['NaN', { n: NaN }, { n: NaN }],
    ['0 and -0', [0], [-0]],
    ['1 and "1"', [1], ['1']],
    ['dates', { d: new Date(5) }, { d: new Date(5) }],
    ['other dates', { d: new Date(5) }, { d: new Date(6) }],
  ];
  it.each(cases)('%s: as isDeepStrictEqual', (_name, a, b) => {
    expect(sameData(a, b)).toBe(isDeepStrictEqual(a, b));
    expect(sameData(b, a)).toBe(isDeepStrictEqual(b, a));
  });
});
