// KV store on a real SQLite file: type inference and coercion, TTL expiry, overwrite protection, listing.
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KVType } from '../types.js';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { coerceKVValue, inferKVType } from './kv-types.js';
import { tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('KV values with caller-chosen keys', () => {
  it('read back as prototype-free objects: `__proto__` and `constructor` are ordinary keys', async () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as unknown;
    await stores.kv.set({ namespace: 'n', key: 'k', value });
    for (const entry of [await stores.kv.get('n', 'k'), stores.kv.getSync('n', 'k')]) {
      const v = entry!.value as Record<string, unknown>;
      expect(Object.getPrototypeOf(v)).toBeNull();
      expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
      expect(Object.getPrototypeOf(v.constructor)).toBeNull();
    }
    expect(Object.getPrototypeOf(coerceKVValue('JSON', '{"__proto__":1}'))).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('KV type inference', () => {
  it.each<[unknown, KVType]>([
    [true, 'BOOLEAN'], [42, 'NUMBER'], [1.5, 'NUMBER'], ['2026-11-22T05:12:29.123Z', 'DATETIME'],
    ['2026-11-22T05:12:29+02:00', 'DATETIME'], ['2026-11-22', 'DATE'], ['PT5M', 'DURATION'], ['P1DT2H', 'DURATION'],
    [{ a: 1 }, 'JSON'], [[1, 2], 'JSON'], ['hello', 'STRING'], ['2026-13-45', 'STRING'], ['P', 'STRING'], ['PT', 'STRING'],
    ['42', 'STRING'],
  ])('%j is %s', (value, type) => {
    expect(inferKVType(value)).toBe(type);
  });
});

describe('KV coercion with an explicit type', () => {
  it.each<[KVType, unknown, unknown]>([
    ['NUMBER', '12.5', 12.5], ['BOOLEAN', 'TRUE', true], ['BOOLEAN', 'false', false], ['STRING', 42, '42'],
    ['STRING', { a: 1 }, '{"a":1}'], ['JSON', '{"a":[1]}', { a: [1] }], ['JSON', [1], [1]], ['DATE', '2026-01-31', '2026-01-31'],
    ['DATETIME', '2026-01-31T10:00:00Z', '2026-01-31T10:00:00Z'], ['DURATION', 'PT1H', 'PT1H'],
  ])('%s %j -> %j', (type, value, expected) => {
    expect(coerceKVValue(type, value)).toEqual(expected);
  });

  it.each<[KVType, unknown]>([
    ['NUMBER', 'abc'], ['NUMBER', ''], ['BOOLEAN', 'yes'], ['DATE', '2026-02-30'], ['DATETIME', 'tomorrow'],
    ['DURATION', '5 minutes'], ['JSON', '{not json'],
  ])('%s rejects %j', (type, value) => {
    expect(() => coerceKVValue(type, value)).toThrow(new RegExp(`Invalid KV value for type ${type}`));
  });

  it.each(['constructor', 'hasOwnProperty', '__proto__'])('refuses the unknown type %s', (type) => {
    expect(() => coerceKVValue(type as KVType, '1')).toThrow(`Unknown KV type '${type}'`);
  });
});

describe('SqliteKVStore', () => {
  it('stores typed values and reads them back', async () => {
    const entry = await stores.kv.set({ namespace: 'company', key: 'n', value: '7', type: 'NUMBER' });
    expect(entry).toMatchObject({ namespace: 'company', key: 'n', type: 'NUMBER', value: 7 });
    await stores.kv.set({ namespace: 'company', key: 'obj', value: { nested: [1, 'two'] } });
    expect(await stores.kv.get('company', 'obj')).toMatchObject({ type: 'JSON', value: { nested: [1, 'two'] } });
    expect(stores.kv.getSync('company', 'n')?.value).toBe(7);
    expect(await stores.kv.get('company.team', 'n')).toBeUndefined();
    await expect(stores.kv.set({ namespace: 'company', key: 'bad', value: 'abc', type: 'NUMBER' })).rejects.toThrow(/NUMBER/);
  });

  it('refuses to overwrite a live key when overwrite is false', async () => {
    await stores.kv.set({ namespace: 'ns', key: 'k', value: 'one' });
    await expect(stores.kv.set({ namespace: 'ns', key: 'k', value: 'two', overwrite: false })).rejects.toThrow(/already exists/);
    expect((await stores.kv.get('ns', 'k'))?.value).toBe('one');
    await stores.kv.set({ namespace: 'ns', key: 'k', value: 'three' });
    expect((await stores.kv.get('ns', 'k'))?.value).toBe('three');
  });

  it('sets an expiration date from the ttl and hides expired entries', async () => {
    const before = Date.now();
    const entry = await stores.kv.set({ namespace: 'ns', key: 'short', value: 1, ttl: 'PT1H' });
    const expires = Date.parse(entry.expirationDate!);
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(expires).toBeLessThan(before + 3_600_000 + 60_000);
    await expect(stores.kv.set({ namespace: 'ns', key: 'x', value: 1, ttl: 'one hour' })).rejects.toThrow(/ttl/);
    for (const ttl of ['-PT1H', 'PT0S', 'P999999999999Y', 'P8000Y']) {
      await expect(stores.kv.set({ namespace: 'ns', key: 'x', value: 1, ttl })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/ttl/) });
    }
    expect(await stores.kv.get('ns', 'x')).toBeUndefined();

    // Expire an entry by moving its expiration into the past through a second connection.
    await stores.kv.set({ namespace: 'ns', key: 'gone', value: 'v', ttl: 'PT1H' });
    const other = new Database(path.join(tmp.dir, 'store.db'));
    other.prepare("UPDATE kv SET expiration_date = '2000-01-01T00:00:00.000Z' WHERE key = 'gone'").run();
    other.close();
    expect(await stores.kv.get('ns', 'gone')).toBeUndefined();
    expect((await stores.kv.list('ns')).map((e) => e.key)).toEqual(['short']);
    expect(await stores.kv.delete('ns', 'gone')).toBe(false);
    // An expired key no longer blocks overwrite: false.
    await stores.kv.set({ namespace: 'ns', key: 'gone', value: 'back', ttl: 'PT1H' });
    const third = new Database(path.join(tmp.dir, 'store.db'));
    third.prepare("UPDATE kv SET expiration_date = '2000-01-01T00:00:00.000Z' WHERE key = 'gone'").run();
    third.close();
    expect((await stores.kv.set({ namespace: 'ns', key: 'gone', value: 'new', overwrite: false })).value).toBe('new');
  });

  it('deletes and lists sorted by key', async () => {
    await stores.kv.set({ namespace: 'ns', key: 'b', value: true });
    await stores.kv.set({ namespace: 'ns', key: 'a', value: 'PT1M' });
    await stores.kv.set({ namespace: 'ns.child', key: 'c', value: 1 });
    expect((await stores.kv.list('ns')).map((e) => [e.key, e.type])).toEqual([['a', 'DURATION'], ['b', 'BOOLEAN']]);
    expect(await stores.kv.delete('ns', 'a')).toBe(true);
    expect(await stores.kv.delete('ns', 'a')).toBe(false);
    expect((await stores.kv.list('ns')).map((e) => e.key)).toEqual(['b']);
  });
});
