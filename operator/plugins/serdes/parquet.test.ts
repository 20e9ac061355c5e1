// Tests of serdes.parquet.IonToParquet and ParquetToIon: files we write are read by hyparquet (and back by us), files
// hyparquet-writer writes are read; types (dates, timestamps, decimals, longs, nested JSON), row groups by size,
// codecs, schema inference, bad rows, and hostile input (not Parquet, row groups over SERDES_MAX_ROW_GROUP_BYTES).
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { ionToParquet, parquetToIon } from './parquet.js';

afterEach(async () => { await cleanupConverted(); delete process.env.SERDES_MAX_ROW_GROUP_BYTES; });

const SCHEMA = JSON.stringify({ type: 'record', name: 'Order', fields: [
  { name: 'id', type: 'long' },
  { name: 'name', type: ['null', 'string'], default: null },
  { name: 'day', type: { type: 'int', logicalType: 'date' } },
  { name: 'at', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }] },
  { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
  { name: 'ok', type: 'boolean' },
  { name: 'tags', type: { type: 'array', items: 'string' } },
] });

const ION = '{id:1,name:"Lamp",day:2024-01-31,at:2024-01-31T10:00:00.000Z,amount:12.5,ok:true,tags:["a","b"]}\n'
  + '{id:2,name:null,day:"2023-12-25",at:null,amount:"-3.07",ok:"no",tags:[]}\n';

const toArrayBuffer = (b: Buffer): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

describe('IonToParquet', () => {
  it('writes a file hyparquet reads with the schema\'s types', async () => {
    const c = await convert(ionToParquet, { schema: SCHEMA }, ION);
    expect(c.r).toMatchObject({ state: 'SUCCESS', metrics: [{ name: 'records', value: 2 }] });
    expect(c.r.outputs!.uri).toMatch(/\.parquet$/);
    const file = toArrayBuffer(await c.bytes());
    const rows = await parquetReadObjects({ file, compressors: { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) } });
    expect(rows[0]).toMatchObject({ id: 1n, name: 'Lamp', ok: true, amount: 12.5, tags: ['a', 'b'] });
    expect((rows[0].day as Date).toISOString()).toBe('2024-01-31T00:00:00.000Z');
    expect((rows[0].at as Date).toISOString()).toBe('2024-01-31T10:00:00.000Z');
    expect(rows[1]).toMatchObject({ id: 2n, name: null, at: null, ok: false, tags: [] });
    expect(rows[1].amount).toBeCloseTo(-3.07, 10); // hyparquet reads DECIMAL through a double
    const md = parquetMetadata(file);
    expect(md.row_groups[0].columns[0].meta_data?.codec).toBe('GZIP');
  });

  it('round trip ION → Parquet → ION keeps dates, timestamps, decimals and nested values', async () => {
    const back = await convert(parquetToIon, {}, await convert(ionToParquet, { schema: SCHEMA, compressionCodec: 'SNAPPY' }, ION));
    expect(back.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 2 }]);
    expect(await back.text()).toBe('{"id":1,"name":"Lamp","day":2024-01-31,"at":2024-01-31T10:00:00.000Z,"amount":12.5,"ok":true,"tags":["a","b"]}\n'
      + '{"id":2,"name":null,"day":2023-12-25,"at":null,"amount":-3.07,"ok":false,"tags":[]}\n');
  });

  it('splits rows into row groups of about rowGroupSize bytes; infers a schema when none is given', async () => {
    const ion = Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: i, text: 'x'.repeat(100) })).join('\n');
    const c = await convert(ionToParquet, { rowGroupSize: 5000, compressionCodec: 'UNCOMPRESSED' }, ion);
    const md = parquetMetadata(toArrayBuffer(await c.bytes()));
    expect(md.row_groups.length).toBeGreaterThan(5);
    expect(md.row_groups.reduce((n, g) => n + Number(g.num_rows), 0)).toBe(300);
    expect(md.schema.map((e) => e.name)).toEqual(['root', 'id', 'text']);
    const back = await convert(parquetToIon, {}, c);
    expect((await back.rows()).length).toBe(300);
  });

  it('refuses V1, ZSTD without runtime support, a rowGroupSize over SERDES_MAX_ROW_GROUP_BYTES, bad rows (ERROR) or skips them', async () => {
    expect((await convert(ionToParquet, { schema: SCHEMA, parquetVersion: 'V1' }, ION)).r.error).toMatch(/Property 'parquetVersion'/);
    process.env.SERDES_MAX_ROW_GROUP_BYTES = '100000';
    expect((await convert(ionToParquet, { schema: SCHEMA, rowGroupSize: 200000 }, ION)).r.error).toMatch(/SERDES_MAX_ROW_GROUP_BYTES/);
    delete process.env.SERDES_MAX_ROW_GROUP_BYTES;
    const schema = JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'n', type: 'int' }] });
    expect((await convert(ionToParquet, { schema }, '{n:1}\n{n:"x"}\n')).r.error).toMatch(/Row 2 does not fit the schema: n: expected an int/);
    const skip = await convert(ionToParquet, { schema, onBadLines: 'SKIP' }, '{n:1}\n{n:"x"}\n{n:3}\n');
    expect(skip.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 2 }]);
  });
});

describe('ParquetToIon', () => {
  it('reads a file hyparquet-writer writes: strings, doubles, int64, booleans, timestamps, JSON', async () => {
    const buf = parquetWriteBuffer({ columnData: [
      { name: 's', data: ['a', null], type: 'STRING' },
      { name: 'd', data: [1.5, 2], type: 'DOUBLE' },
      { name: 'big', data: [9007199254740993n, 5n], type: 'INT64' },
      { name: 'b', data: [true, false], type: 'BOOLEAN' },
      { name: 't', data: [new Date('2024-01-31T10:00:00Z'), null], type: 'TIMESTAMP' },
      { name: 'j', data: [{ k: [1] }, null], type: 'JSON' },
    ] });
    const c = await convert(parquetToIon, {}, Buffer.from(buf));
    expect(await c.text()).toBe('{"s":"a","d":1.5,"big":9007199254740993,"b":true,"t":2024-01-31T10:00:00.000Z,"j":{"k":[1]}}\n{"s":null,"d":2,"big":5,"b":false,"t":null,"j":null}\n');
    expect(plain((await c.rows())[1])).toEqual({ s: null, d: 2, big: 5, b: false, t: null, j: null });
  });

  it('refuses a file that is not Parquet and a row group over SERDES_MAX_ROW_GROUP_BYTES', async () => {
    expect((await convert(parquetToIon, {}, 'a,b\n1,2\n')).r.error).toMatch(/not a readable Parquet file/);
    const buf = parquetWriteBuffer({ columnData: [{ name: 's', data: Array.from({ length: 2000 }, (_, i) => `row ${i} ${'y'.repeat(50)}`), type: 'STRING' }], codec: 'UNCOMPRESSED' } as never);
    process.env.SERDES_MAX_ROW_GROUP_BYTES = '2048';
    expect((await convert(parquetToIon, {}, Buffer.from(buf))).r.error).toMatch(/SERDES_MAX_ROW_GROUP_BYTES/);
  });
});
