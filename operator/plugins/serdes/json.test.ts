// Tests of serdes.json.JsonToIon and IonToJson: JSON Lines and JSON documents (arrays split item by item while read),
// round trips with timestamps and decimals, charsets, and hostile input (bad JSON, unterminated arrays, huge items).
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { ionToJson, jsonToIon, splitJsonItems } from './json.js';

afterEach(async () => { await cleanupConverted(); delete process.env.STORAGE_MAX_ITEM_BYTES; });

async function split(chunks: string[], max = 1000): Promise<string[]> {
  const out: string[] = [];
  for await (const s of splitJsonItems(Readable.from(chunks), max, () => new Error('too long'))) out.push(s.trim());
  return out;
}

describe('splitJsonItems', () => {
  it('splits a top-level array into its items across any chunking; strings with brackets and commas stay whole', async () => {
    const text = ' [ {"a":"x,]}[\\"","b":[1,2]} , 3, "s" ,null ] \n';
    const expected = ['{"a":"x,]}[\\"","b":[1,2]}', '3', '"s"', 'null'];
    expect(await split([text])).toEqual(expected);
    expect(await split([...text])).toEqual(expected);
    expect(await split(['{"one":', ' 1}'])).toEqual(['{"one": 1}']);
    expect(await split(['[]'])).toEqual([]);
  });

  it('refuses an unterminated array, trailing data and an item over the bound', async () => {
    await expect(split(['[1,2'])).rejects.toThrow(/Unterminated/);
    await expect(split(['[1] x'])).rejects.toThrow(/after the top-level JSON array/);
    await expect(split(['[', '"', 'x'.repeat(600), 'x'.repeat(600)], 1000)).rejects.toThrow(/too long/);
    await expect(split(['{"a":"', 'x'.repeat(2000), '"}'], 1000)).rejects.toThrow(/too long/);
  });
});

describe('JsonToIon', () => {
  it('JSON Lines: one row per line, blank lines skipped, records counted', async () => {
    const c = await convert(jsonToIon, {}, '{"id":1,"tags":["a"],"n":{"x":null}}\n\n{"id":2}\n[1,2]\n"text"\n');
    expect(c.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 4 }]);
    expect(plain(await c.rows())).toEqual([{ id: 1, tags: ['a'], n: { x: null } }, { id: 2 }, [1, 2], 'text']);
  });

  it('newLine: false: an array gives one row per item, another value one row', async () => {
    expect(plain(await (await convert(jsonToIon, { newLine: false }, '[\n {"id":1},\n {"id":2}\n]')).rows())).toEqual([{ id: 1 }, { id: 2 }]);
    expect(plain(await (await convert(jsonToIon, { newLine: false }, '{"id":1,\n"b":2}')).rows())).toEqual([{ id: 1, b: 2 }]);
  });

  it('bad JSON names the line or item; a huge line or item names STORAGE_MAX_ITEM_BYTES; charset', async () => {
    expect((await convert(jsonToIon, {}, '{"id":1}\n{"id":\n')).r.error).toMatch(/line 2 is not JSON/);
    expect((await convert(jsonToIon, { newLine: false }, '[{"id":1},{"id"}]')).r.error).toMatch(/item 2 is not JSON/);
    process.env.STORAGE_MAX_ITEM_BYTES = '2048';
    expect((await convert(jsonToIon, {}, `{"a":"${'x'.repeat(5000)}"}\n`)).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
    expect((await convert(jsonToIon, { newLine: false }, `[{"a":"${'x'.repeat(5000)}"}]`)).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":"é"}\n', 'utf16le')]);
    expect(plain(await (await convert(jsonToIon, { charset: 'UTF-16LE' }, utf16)).rows())).toEqual([{ a: 'é' }]);
  });
});

describe('IonToJson', () => {
  const ION = '{id:1,at:2024-01-31T10:00:00Z,day:2024-01-31,price:12.50,big:123456789012345678901.5,bin:{{aGk=}},l:[a,"b"]}\n{id:2,at:null}\n';

  it('writes JSON Lines: timestamps as ISO strings, decimals as numbers, blobs as base64', async () => {
    const c = await convert(ionToJson, {}, ION);
    expect(c.r.outputs!.uri).toMatch(/\.jsonl$/);
    expect(await c.text()).toBe('{"id":1,"at":"2024-01-31T10:00:00Z","day":"2024-01-31","price":12.5,"big":123456789012345680000,"bin":"aGk=","l":["a","b"]}\n{"id":2,"at":null}\n');
    const zoned = await (await convert(ionToJson, { timeZoneId: 'Asia/Tokyo' }, ION)).text();
    expect(zoned).toContain('"at":"2024-01-31T19:00:00.000+09:00"');
  });

  it('newLine: false writes one array; round trip JSON → ION → JSON keeps the data', async () => {
    const c = await convert(ionToJson, { newLine: false }, ION);
    expect(c.r.outputs!.uri).toMatch(/\.json$/);
    expect(JSON.parse(await c.text()).map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect(await (await convert(ionToJson, { newLine: false }, '')).text()).toBe('[]');
    const json = '{"a":1,"b":"x\\ny","c":[true,null,{"d":-1.5e-7}]}\n';
    expect(await (await convert(ionToJson, {}, await convert(jsonToIon, {}, json))).text()).toBe(json);
  });
});
