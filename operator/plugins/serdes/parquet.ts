// serdes.parquet.ParquetToIon and IonToParquet: Parquet files to and from ION rows with hyparquet/hyparquet-writer,
// one row group at a time both ways (Parquet needs a whole row group to write its column chunks, and its footer to
// read): memory holds one row group, at most SERDES_MAX_ROW_GROUP_BYTES. The schema is an Avro schema as in Kestra
// (given or inferred); nested values (records, lists, maps, other unions) are written as JSON columns.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { definePlugin, p } from '../define.js';
import { avroConversion, avroConverterProps } from './avro.js';
import { fromProp, outputPath, recordsResult, withScratch } from './common.js';

const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD'] as const;
const VERSIONS = ['V1', 'V2'] as const;

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

export const parquetToIon = definePlugin({
  type: 'serdes.parquet.ParquetToIon',
  aliases: ['io.kestra.plugin.serdes.parquet.ParquetReader'],
  title: 'Convert a Parquet file into ION',
  description: 'Reads a Parquet file one row group at a time and writes one ION row per row: DATE columns become dates, TIMESTAMP columns timestamps, '
    + 'DECIMAL numbers, 64-bit integers numbers (decimals when a double cannot hold them), JSON columns their values. The file is copied to the '
    + 'working directory first (Parquet is read from its footer); a row group over SERDES_MAX_ROW_GROUP_BYTES is refused.',
  properties: { from: fromProp('Parquet') },
  outputs: { uri: { type: 'uri', description: 'URI of the ION file written.' } },
  examples: [{
    title: 'Convert a Parquet file to ION',
    code: `id: parquet_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.parquet.ParquetToIon
    from: "{{ inputs.file }}"`,
  }],
  async run(ctx, props) {
    const [hp, { IonRowWriter, IonTimestamp, IonDecimal }, { limitError, limitsFromEnv }, { pipeline }, zlib] = await Promise.all([
      import('hyparquet'), import('../../storage/ion.js'), import('../../core/limits.js'), import('node:stream/promises'), import('node:zlib'),
    ]);
    const limits = limitsFromEnv(process.env);
    const what = `serdes.parquet.ParquetToIon of '${props.from}'`;
    return withScratch(ctx, 'parquet', async (path) => {
      await pipeline(await ctx.storage.stream(props.from) as NodeJS.ReadableStream, createWriteStream(path, { flags: 'wx' }));
      const file = await hp.asyncBufferFromFile(path);
      let metadata: Awaited<ReturnType<typeof hp.parquetMetadataAsync>>;
      try { metadata = await hp.parquetMetadataAsync(file); } catch (err) { throw new Error(`${what}: not a readable Parquet file: ${(err as Error).message}`); }
      const iso = (ms: number, extra = ''): string => new Date(ms).toISOString().replace('Z', `${extra}Z`);
      const parsers = {
        timestampFromMilliseconds: (v: bigint | number) => new IonTimestamp(iso(Number(v))),
        timestampFromMicroseconds: (v: bigint) => new IonTimestamp(iso(Number(v / 1000n), pad(Number(((v % 1000n) + 1000n) % 1000n), 3))),
        timestampFromNanoseconds: (v: bigint) => new IonTimestamp(iso(Number(v / 1000000n), pad(Number(((v % 1000000n) + 1000000n) % 1000000n), 6))),
        dateFromDays: (days: number) => new IonTimestamp(new Date(days * 86_400_000).toISOString().slice(0, 10)),
      };
      const value = (v: unknown): unknown => {
        if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : new IonDecimal(v.toString());
        if (Array.isArray(v)) return v.map(value);
        if (v instanceof Date) return new IonTimestamp(v.toISOString());
        if (v && typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof IonTimestamp) && !(v instanceof IonDecimal)) {
          const out: Record<string, unknown> = Object.create(null);
          for (const [k, x] of Object.entries(v)) out[k] = value(x);
          return out;
        }
        return v === undefined ? null : v;
      };
      // DECIMAL columns come as doubles: rounded to their scale (-3.0700000000000003 is -3.07)
      const scales = new Map(metadata.schema.filter((e) => e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL')
        .map((e) => [e.name, e.scale ?? (e.logical_type as { scale?: number } | undefined)?.scale ?? 0]));
      const zstd = (zlib as unknown as { zstdDecompressSync?: (b: Uint8Array, o: object) => Buffer }).zstdDecompressSync;
      const compressors = {
        GZIP: (input: Uint8Array, size: number) => new Uint8Array(zlib.gunzipSync(input, { maxOutputLength: Math.max(size, 1) })),
        BROTLI: (input: Uint8Array, size: number) => new Uint8Array(zlib.brotliDecompressSync(input, { maxOutputLength: Math.max(size, 1) })),
        ...(zstd ? { ZSTD: (input: Uint8Array, size: number) => new Uint8Array(zstd(input, { maxOutputLength: Math.max(size, 1) })) } : {}),
      };
      const out = new IonRowWriter(ctx.workingDir);
      try {
        let start = 0;
        for (const [k, group] of metadata.row_groups.entries()) {
          const rows = Number(group.num_rows);
          if (Number(group.total_byte_size) > limits.serdesMaxRowGroupBytes) {
            throw limitError('serdesMaxRowGroupBytes', `${what}: row group ${k + 1} holds ${group.total_byte_size} bytes`, limits);
          }
          let objects: Record<string, unknown>[];
          try {
            objects = await hp.parquetReadObjects({ file, metadata, rowStart: start, rowEnd: start + rows, parsers, compressors } as never) as Record<string, unknown>[];
          } catch (err) {
            throw new Error(`${what}: cannot read row group ${k + 1}: ${(err as Error).message}`);
          }
          for (const o of objects) {
            for (const [name, scale] of scales) {
              if (typeof o[name] === 'number') o[name] = Number((o[name] as number).toFixed(Math.min(scale, 100)));
            }
            await out.write(value(o));
          }
          start += rows;
        }
        const uri = await out.store(ctx.storage, outputPath(ctx, 'ion'));
        return recordsResult({ uri }, out.rows);
      } finally {
        await out.discard();
      }
    });
  },
});

interface Column { name: string; element: Record<string, unknown>; toValue(avroValue: unknown): unknown }

export const ionToParquet = definePlugin({
  type: 'serdes.parquet.IonToParquet',
  aliases: ['io.kestra.plugin.serdes.parquet.ParquetWriter'],
  title: 'Convert an ION file into Parquet',
  description: 'Writes ION rows to a Parquet file with an Avro `schema` (as Kestra; inferred from the first `numberOfRowsToScan` rows when absent), '
    + 'parsing text values as serdes.avro.IonToAvro does. Rows are gathered into row groups of about `rowGroupSize` bytes (at most '
    + 'SERDES_MAX_ROW_GROUP_BYTES), each written as soon as it is full: memory holds one row group. Top-level fields are columns; nested '
    + 'records, lists, maps and unions of several types are JSON columns. Data pages are version 2 (`parquetVersion: V1` is refused).',
  properties: {
    from: fromProp('ION'),
    compressionCodec: p.enum(CODECS).default('GZIP').describe('Compression of the column chunks: UNCOMPRESSED, SNAPPY, GZIP or ZSTD (ZSTD when the Node.js runtime has it).'),
    parquetVersion: p.enum(VERSIONS).default('V2').describe('Parquet data page version; only V2 is written.'),
    rowGroupSize: p.integer({ min: 1 }).default(128 * 1024 * 1024).describe('Target row group size in bytes (of the rows\' data); at most SERDES_MAX_ROW_GROUP_BYTES.'),
    pageSize: p.integer({ min: 1 }).default(1024 * 1024).describe('Target page size in bytes.'),
    dictionaryPageSize: p.integer({ min: 1 }).default(1024 * 1024).describe('Largest dictionary of a column chunk, in bytes (a larger one is not used).'),
    ...avroConverterProps,
  },
  outputs: { uri: { type: 'uri', description: 'URI of the Parquet file written.' } },
  examples: [{
    title: 'ION rows to Parquet with a schema',
    code: `id: ion_to_parquet
namespace: company.team
tasks:
  - id: to_parquet
    type: io.kestra.plugin.serdes.parquet.IonToParquet
    from: "{{ outputs.query.uri }}"
    compressionCodec: SNAPPY
    schema: |
      {"type": "record", "name": "Salary", "fields": [
        {"name": "job_title", "type": "string"},
        {"name": "avg_salary", "type": "double"}
      ]}`,
  }],
  async run(ctx, props) {
    const [hw, { limitError, limitsFromEnv }, zlib] = await Promise.all([
      import('hyparquet-writer'), import('../../core/limits.js'), import('node:zlib'),
    ]);
    const limits = limitsFromEnv(process.env);
    if (props.parquetVersion !== 'V2') throw new Error("Property 'parquetVersion': only V2 data pages are written");
    if (props.rowGroupSize > limits.serdesMaxRowGroupBytes) throw limitError('serdesMaxRowGroupBytes', `Property 'rowGroupSize' is ${props.rowGroupSize}`, limits);
    const zstd = (zlib as unknown as { zstdCompressSync?: (b: Uint8Array) => Buffer }).zstdCompressSync;
    if (props.compressionCodec === 'ZSTD' && !zstd) throw new Error("Property 'compressionCodec': ZSTD needs a Node.js runtime with zstd (22.15 or later); use SNAPPY or GZIP");
    const { rowsOf, schema, names, record, badRow, v } = await avroConversion(ctx, props, `serdes.parquet.IonToParquet of '${props.from}'`);
    const rootNode = names.node(schema);
    if (Array.isArray(rootNode) || rootNode.type !== 'record' || !rootNode.fields?.length) throw new Error("Property 'schema': a Parquet schema must be an Avro record with fields");
    const columns: Column[] = rootNode.fields.map((f) => column(names, f.name, f.type, v));
    return withScratch(ctx, 'parquet', async (path) => {
      const out = createWriteStream(path, { flags: 'wx' });
      // hyparquet-writer's Writer, flushing ~1 MiB pieces to the file with backpressure
      const writer = new hw.ByteWriter();
      let draining: Promise<unknown> | undefined;
      const flushBytes = (): void => {
        if (writer.index === 0) return;
        const chunk = Buffer.from(new Uint8Array(writer.buffer, 0, writer.index));
        writer.index = 0;
        if (!out.write(chunk)) draining = once(out, 'drain');
      };
      const ensure = writer.ensure.bind(writer);
      writer.ensure = (size: number) => { if (writer.index > 1_048_576) flushBytes(); ensure(size); };
      (writer as unknown as { flush(): Promise<void> }).flush = async () => { flushBytes(); if (draining) { await draining; draining = undefined; } };
      (writer as unknown as { finish(): void }).finish = () => flushBytes();
      const compressors = {
        GZIP: (b: Uint8Array) => new Uint8Array(zlib.gzipSync(b)),
        ...(zstd ? { ZSTD: (b: Uint8Array) => new Uint8Array(zstd(b)) } : {}),
      };
      const pw = new hw.ParquetWriter({
        writer: writer as never, schema: [{ name: 'root', num_children: columns.length }, ...columns.map((c) => c.element)] as never,
        codec: props.compressionCodec as never, compressors: compressors as never,
      });
      let data: unknown[][] = columns.map(() => []);
      let groupBytes = 0;
      let records = 0;
      const writeGroup = async () => {
        if (data[0].length === 0) return;
        await pw.write({
          columnData: columns.map((c, k) => ({ name: c.name, data: data[k] })) as never,
          rowGroupSize: data[0].length, pageSize: props.pageSize, dictionarySize: props.dictionaryPageSize,
        });
        await (writer as unknown as { flush(): Promise<void> }).flush();
        data = columns.map(() => []);
        groupBytes = 0;
      };
      try {
        let n = 0;
        for await (const row of await rowsOf()) {
          n++;
          const r = record(row, n);
          if (r.error !== undefined) { badRow(r.error); continue; }
          const values = columns.map((c) => c.toValue((r.value as Record<string, unknown>)[c.name]));
          values.forEach((x, k) => { data[k].push(x); groupBytes += sizeOf(x); });
          records++;
          if (groupBytes >= props.rowGroupSize) await writeGroup();
        }
        await writeGroup();
        pw.finish();
        flushBytes();
      } finally {
        out.end();
        await once(out, 'close');
      }
      const { createReadStream } = await import('node:fs');
      const uri = await ctx.storage.put(outputPath(ctx, 'parquet'), createReadStream(path));
      return recordsResult({ uri }, records);
    });
  },
});

function sizeOf(x: unknown): number {
  if (x === null || x === undefined) return 1;
  if (typeof x === 'string') return x.length + 4;
  if (x instanceof Uint8Array) return x.length + 4;
  return 8;
}

/** A top-level field as a Parquet column: its schema element and how an Avro value (wrapped unions) becomes its value. */
function column(names: import('./avro-values.js').AvroNames, name: string, type: import('./avro-values.js').AvroSchema,
  v: typeof import('./avro-values.js')): Column {
  let node = names.node(type);
  let repetition = 'REQUIRED';
  let unwrap = (x: unknown): unknown => x;
  if (Array.isArray(node)) {
    const nonNull = node.filter((b) => names.branchKey(b) !== 'null');
    if (nonNull.length === 1) {
      repetition = node.length > 1 ? 'OPTIONAL' : 'REQUIRED';
      const key = names.branchKey(nonNull[0]);
      unwrap = (x) => (x === null || x === undefined ? null : (x as Record<string, unknown>)[key]);
      node = names.node(nonNull[0]);
    }
  }
  const json = (): Column => {
    const schemaType = type;
    return {
      name, element: { name, type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type: 'OPTIONAL' },
      // JSON-like values (timestamps and decimals as text, bytes as base64) that hyparquet-writer stringifies
      toValue: (x) => (x === null || x === undefined ? null : JSON.parse(JSON.stringify(v.fromAvro(names, schemaType, x), (_k, y: unknown) => (
        y && typeof y === 'object' && (y as { type?: string }).type === 'Buffer' && Array.isArray((y as { data?: unknown }).data) ? Buffer.from((y as { data: number[] }).data).toString('base64') : y)))),
    };
  };
  if (Array.isArray(node)) return json();
  const el = (extra: Record<string, unknown>): Record<string, unknown> => ({ name, repetition_type: repetition, ...extra });
  const scalar = (element: Record<string, unknown>, conv: (x: unknown) => unknown): Column => ({
    name, element, toValue: (x) => { const u = unwrap(x); return u === null || u === undefined ? null : conv(u); },
  });
  switch (node.logicalType) {
    case 'date': return scalar(el({ type: 'INT32', converted_type: 'DATE' }), (x) => x);
    case 'timestamp-millis': case 'local-timestamp-millis': return scalar(el({ type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' }), (x) => BigInt(x as number));
    case 'timestamp-micros': case 'local-timestamp-micros': return scalar(el({ type: 'INT64', converted_type: 'TIMESTAMP_MICROS' }), (x) => BigInt(x as number));
    case 'time-millis': return scalar(el({ type: 'INT32', converted_type: 'TIME_MILLIS' }), (x) => x);
    case 'time-micros': return scalar(el({ type: 'INT64', converted_type: 'TIME_MICROS' }), (x) => BigInt(x as number));
    case 'decimal': {
      const scale = node.scale ?? 0;
      const precision = node.precision ?? 38;
      return scalar(el({ type: 'BYTE_ARRAY', converted_type: 'DECIMAL', scale, precision }), (x) => v.scaledBigInt(v.decimalText(x as Uint8Array, scale), scale));
    }
    default: break;
  }
  switch (node.type) {
    case 'boolean': return scalar(el({ type: 'BOOLEAN' }), (x) => x);
    case 'int': return scalar(el({ type: 'INT32' }), (x) => x);
    case 'long': return scalar(el({ type: 'INT64' }), (x) => BigInt(x as number));
    case 'float': return scalar(el({ type: 'FLOAT' }), (x) => x);
    case 'double': return scalar(el({ type: 'DOUBLE' }), (x) => x);
    case 'string': case 'enum': return scalar(el({ type: 'BYTE_ARRAY', converted_type: 'UTF8' }), (x) => x);
    case 'bytes': case 'fixed': return scalar(el({ type: 'BYTE_ARRAY' }), (x) => new Uint8Array(x as Buffer));
    default: return json();
  }
}
