// Tests of serdes.avro.IonToAvro and AvroToIon: files written by avsc's own encoder are read, files we write are read
// back by avsc, type mapping (logical types: dates, timestamps, decimals; unions; nested records, arrays, maps),
// text parsing of CSV rows, schema inference, bad rows (onBadLines), and hostile files.
import { once } from 'node:events';
import { crc32, deflateRaw } from 'node:zlib';
import avro from 'avsc';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { avroToIon, ionToAvro } from './avro.js';
import { csvToIon } from './csv.js';

afterEach(async () => { await cleanupConverted(); delete process.env.STORAGE_MAX_ITEM_BYTES; });

const SCHEMA = {
  type: 'record', name: 'Order', namespace: 'shop', fields: [
    { name: 'id', type: 'long' },
    { name: 'paid', type: 'boolean' },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'note', type: ['null', 'string'], default: null },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'attrs', type: { type: 'map', values: 'double' } },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['A', 'B'] } },
  ],
};

/** Decodes an Avro container file with avsc itself (raw values, logical types as their underlying type). */
async function decodeWithAvsc(bytes: Buffer): Promise<{ schema: unknown; records: unknown[] }> {
  const decoder = new avro.streams.BlockDecoder({ parseHook: (s: unknown) => { schema = s; return avro.Type.forSchema(s as never, { wrapUnions: true }); } } as never);
  let schema: unknown;
  const records: unknown[] = [];
  decoder.on('data', (r: unknown) => records.push(r));
  decoder.end(bytes);
  await once(decoder, 'end');
  return { schema, records };
}

/** Snappy of literals only (valid snappy that any decoder reads): the varint length, then chunks of at most 64 KiB. */
function snappyCompress(buf: Buffer): Buffer {
  const head: number[] = [];
  for (let n = buf.length; ; n = Math.floor(n / 128)) { if (n < 128) { head.push(n); break; } head.push((n % 128) | 128); }
  const parts: Buffer[] = [Buffer.from(head)];
  for (let at = 0; at < buf.length; at += 65536) {
    const chunk = buf.subarray(at, at + 65536);
    parts.push(Buffer.from([61 << 2, (chunk.length - 1) & 0xff, (chunk.length - 1) >> 8]), chunk);
  }
  return Buffer.concat(parts);
}

async function encodeWithAvsc(schema: unknown, records: unknown[], codec = 'null'): Promise<Buffer> {
  const snappy = (buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) => {
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(buf));
    cb(null, Buffer.concat([snappyCompress(buf), crc]));
  };
  const codecs = { null: (b: Buffer, cb: (e: null, o: Buffer) => void) => cb(null, b), deflate: deflateRaw, snappy };
  const encoder = new avro.streams.BlockEncoder(schema as never, { codec, codecs } as never); // unambiguous unions unwrapped
  const parts: Buffer[] = [];
  encoder.on('data', (b: Buffer) => parts.push(b));
  for (const r of records) encoder.write(r);
  encoder.end();
  await once(encoder, 'end');
  return Buffer.concat(parts);
}

describe('IonToAvro', () => {
  it('parses CSV text rows into the schema\'s types (booleans, dates, date-times, decimals, nulls) and writes a file avsc reads', async () => {
    const csv = 'id,paid,day,at,amount,note,tags,attrs,kind\n';
    const ion = await convert(csvToIon, {}, csv + '1,yes,2024-01-31,2024-01-31T10:00:00Z,12.5,NA,,,A\n');
    // tags/attrs are not text: give them through ION rows instead
    const rows = (await ion.rows()).map((r) => ({ ...(r as object), tags: ['x', 'y'], attrs: { w: 1.5 } }));
    const c = await convert(ionToAvro, { schema: JSON.stringify(SCHEMA) }, rows.map((r) => JSON.stringify(r)).join('\n'));
    expect(c.r).toMatchObject({ state: 'SUCCESS', metrics: [{ name: 'records', value: 1 }] });
    expect(c.r.outputs!.uri).toMatch(/\.avro$/);
    const { schema, records } = await decodeWithAvsc(await c.bytes());
    expect(schema).toEqual(SCHEMA);
    const r = records[0] as Record<string, unknown>;
    expect(r).toMatchObject({ id: 1, paid: true, day: 19753, at: Date.parse('2024-01-31T10:00:00Z'), note: { string: 'NA' }, tags: ['x', 'y'], attrs: { w: 1.5 }, kind: 'A' });
    expect((r.amount as Buffer).toString('hex')).toBe('04e2'); // 1250, scale 2
    const nulls = await convert(ionToAvro, { schema: JSON.stringify(SCHEMA), inferAllFields: true }, rows.map((x) => JSON.stringify(x)).join('\n'));
    expect(((await decodeWithAvsc(await nulls.bytes())).records[0] as Record<string, unknown>).note).toBeNull();
  });

  it('round trip ION → Avro → ION keeps types: dates, timestamps, decimals, nested values', async () => {
    const ion = '{id:7,paid:false,day:2023-12-25,at:2023-12-25T08:30:00.250Z,amount:-3.07,note:null,tags:["a"],attrs:{k:2e0},kind:B}\n';
    const back = await convert(avroToIon, {}, await convert(ionToAvro, { schema: JSON.stringify(SCHEMA) }, ion));
    expect(back.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 1 }]);
    expect(await back.text()).toBe('{"id":7,"paid":false,"day":2023-12-25,"at":2023-12-25T08:30:00.250Z,"amount":-3.07,"note":null,"tags":["a"],"attrs":{"k":2},"kind":"B"}\n');
  });

  it('custom date formats, decimal separator, lists filling fields in order, strictSchema', async () => {
    const schema = JSON.stringify({ type: 'record', name: 'R', fields: [
      { name: 'd', type: { type: 'int', logicalType: 'date' } },
      { name: 't', type: { type: 'long', logicalType: 'timestamp-millis' } },
      { name: 'x', type: 'double' },
    ] });
    const c = await convert(ionToAvro, { schema, dateFormat: 'dd/MM/yyyy', datetimeFormat: "yyyy-MM-dd' 'HH:mm:ss", decimalSeparator: ',', timeZoneId: 'Europe/Paris' },
      '["31/01/2024","2024-01-31 11:00:00","3,25"]\n');
    expect((await decodeWithAvsc(await c.bytes())).records[0]).toMatchObject({ d: 19753, t: Date.parse('2024-01-31T10:00:00Z'), x: 3.25 });
    const strict = await convert(ionToAvro, { schema, strictSchema: true }, '{d:2024-01-01,t:2024-01-01T00:00Z,x:1,extra:2}\n');
    expect(strict.r.error).toMatch(/Row 1 does not fit.*strictSchema/);
  });

  it('a row that does not fit fails naming the row and field (ERROR), or is skipped (WARN logs it)', async () => {
    const schema = JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'n', type: 'int' }] });
    const ion = '{n:"1"}\n{n:"one"}\n{n:3}\n';
    expect((await convert(ionToAvro, { schema }, ion)).r.error).toMatch(/Row 2 does not fit the schema: n: expected an int, got 'one'/);
    const warn = await convert(ionToAvro, { schema, onBadLines: 'WARN' }, ion);
    expect((await decodeWithAvsc(await warn.bytes())).records).toEqual([{ n: 1 }, { n: 3 }]);
    expect(warn.t.messages('WARN').join()).toMatch(/Row 2/);
    expect((await convert(ionToAvro, { schema: '{"type":"record"' }, ion)).r.error).toMatch(/Property 'schema': invalid Avro schema/);
    expect((await convert(ionToAvro, { schema: '{"type":"nope"}' }, ion)).r.error).toMatch(/Property 'schema': invalid Avro schema/);
  });

  it('infers a schema from the first rows when none is given', async () => {
    const c = await convert(ionToAvro, {}, '{id:1,name:"a",at:2024-01-01T00:00:00Z,score:1}\n{id:2,name:null,score:2.5,"unit price":3}\n');
    const { schema, records } = await decodeWithAvsc(await c.bytes());
    expect(plain(schema)).toMatchObject({ type: 'record', fields: [
      { name: 'id', type: ['null', 'long'] }, { name: 'name', type: ['null', 'string'] },
      { name: 'at', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }] }, { name: 'score', type: ['null', 'double'] },
      { name: 'unit_price', type: ['null', 'long'] },
    ] });
    expect(records[1]).toMatchObject({ id: { long: 2 }, name: null, score: { double: 2.5 }, unit_price: { long: 3 } });
    expect((await convert(ionToAvro, {}, '')).r.error).toMatch(/empty file: set `schema`/);
  });
});

describe('AvroToIon', () => {
  it('reads files avsc writes (null, deflate and snappy codecs), unions and logical types', async () => {
    const schema = { type: 'record', name: 'R', fields: [
      { name: 'id', type: 'int' }, { name: 'u', type: ['null', 'string', 'long'] },
      { name: 'ts', type: { type: 'long', logicalType: 'timestamp-micros' } }, { name: 'b', type: 'bytes' },
      { name: 'inner', type: { type: 'record', name: 'Inner', fields: [{ name: 'x', type: 'float' }] } },
    ] };
    const records = [
      { id: 1, u: 'a', ts: 1_706_695_200_123_456, b: Buffer.from('hi'), inner: { x: 0.5 } },
      { id: 2, u: null, ts: 0, b: Buffer.alloc(0), inner: { x: 1 } },
    ];
    for (const codec of ['null', 'deflate', 'snappy']) {
      const c = await convert(avroToIon, {}, await encodeWithAvsc(schema, records, codec));
      expect(await c.text()).toBe('{"id":1,"u":"a","ts":2024-01-31T10:00:00.123456Z,"b":{{aGk=}},"inner":{"x":0.5}}\n{"id":2,"u":null,"ts":1970-01-01T00:00:00.000000Z,"b":{{}},"inner":{"x":1}}\n');
    }
  });

  it('refuses a file that is not Avro, and a block over STORAGE_MAX_ITEM_BYTES', async () => {
    expect((await convert(avroToIon, {}, 'id,name\n1,a\n')).r.error).toMatch(/not a readable Avro file: invalid magic bytes/);
    const schema = { type: 'record', name: 'R', fields: [{ name: 's', type: 'string' }] };
    const big = await encodeWithAvsc(schema, Array.from({ length: 50 }, () => ({ s: 'x'.repeat(100) })), 'deflate');
    process.env.STORAGE_MAX_ITEM_BYTES = '1024';
    expect((await convert(avroToIon, {}, big)).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
  });
});
