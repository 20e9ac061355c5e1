// serdes.avro.AvroToIon and IonToAvro: Avro object container files to and from ION row files, streamed (avsc decodes
// block by block; the writer appends ~64 KiB blocks). Kestra's AvroConverter properties (trueValues, nullValues,
// date formats, strictSchema...) parse text rows (from CSV) into the schema's types; no schema: one is inferred.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { definePlugin, p } from '../define.js';
import { javaDateParser, fromProp, outputPath, recordsResult, systemZone, withScratch } from './common.js';

const ON_BAD_LINES = ['ERROR', 'WARN', 'SKIP'] as const;
const DEFAULT_DATE = 'yyyy-MM-dd[XXX]';
const DEFAULT_TIME = 'HH:mm[:ss][.SSSSSS][XXX]';
const DEFAULT_DATETIME = "yyyy-MM-dd'T'HH:mm[:ss][.SSSSSS][XXX]";
const BLOCK_BYTES = 64 * 1024;

/** A CommonJS module's exports, however `import()` hands them over (Node: under `default`). */
const cjs = <T>(m: T): T => ((m as { default?: T }).default ?? m);

/** Avro codecs the reader takes beyond null and deflate: snappy (a block plus its CRC-32). Decompressed blocks are bounded. */
async function codecs(maxBlock: number, tooBig: () => Error) {
  const [{ snappyUncompress }, zlib] = await Promise.all([import('hyparquet'), import('node:zlib')]);
  type Cb = (err: Error | null, buf?: Buffer) => void;
  return {
    null: (buf: Buffer, cb: Cb) => (buf.length > maxBlock ? cb(tooBig()) : cb(null, buf)),
    deflate: (buf: Buffer, cb: Cb) => zlib.inflateRaw(buf, { maxOutputLength: maxBlock }, (err, out) => cb(err ? ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? tooBig() : err) : null, out)),
    snappy: (buf: Buffer, cb: Cb) => {
      try {
        const data = buf.subarray(0, buf.length - 4);
        let len = 0;
        for (let i = 0, shift = 0; i < 5; i++, shift += 7) {
          const b = data[i];
          len += (b & 0x7f) * 2 ** shift;
          if (!(b & 0x80)) break;
        }
        if (len > maxBlock) { cb(tooBig()); return; }
        const out = new Uint8Array(len);
        snappyUncompress(data, out);
        cb(null, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      } catch (err) {
        cb(err as Error);
      }
    },
  };
}

/** Kestra's AbstractAvroConverter properties: the schema (or its inference) and how text is parsed into its types. */
export const avroConverterProps = {
    schema: p.string().describe('The Avro schema of the rows (JSON). Inferred from the data when absent.'),
    numberOfRowsToScan: p.integer({ min: 1 }).default(100).describe('Rows scanned to infer the schema when `schema` is absent.'),
    trueValues: p.stringList().default(['t', 'true', 'enabled', '1', 'on', 'yes']).describe('Values read as true.'),
    falseValues: p.stringList().default(['f', 'false', 'disabled', '0', 'off', 'no', '']).describe('Values read as false.'),
    nullValues: p.stringList().default(['', '#N/A', '#N/A N/A', '#NA', '-1.#IND', '-1.#QNAN', '-NaN', '1.#IND', '1.#QNAN', 'NA', 'n/a', 'nan', 'null']).describe('Values read as null.'),
    dateFormat: p.string().default(DEFAULT_DATE).describe('Java DateTimeFormatter pattern dates are parsed with.'),
    timeFormat: p.string().default(DEFAULT_TIME).describe('Java DateTimeFormatter pattern times are parsed with.'),
    datetimeFormat: p.string().default(DEFAULT_DATETIME).describe('Java DateTimeFormatter pattern date-times are parsed with.'),
    decimalSeparator: p.string().default('.').describe('Character read as the decimal point (e.g. `,`).'),
    strictSchema: p.boolean().default(false).describe('Fail on a field present in the data but not declared in the schema.'),
    inferAllFields: p.boolean().default(false).describe('Also read `nullValues` as null in nullable string fields (by default a nullable string field keeps the text, e.g. `NA`).'),
    timeZoneId: p.string().describe('Time zone of date-times without an offset (default: the service\'s).'),
    onBadLines: p.enum(ON_BAD_LINES).default('ERROR').describe('A row that does not fit the schema: ERROR fails, WARN logs and skips, SKIP skips.'),
};

type AvroConverterValues = { [K in keyof typeof avroConverterProps]: typeof avroConverterProps[K] extends import('../define.js').Prop<infer T> ? T : never };

/**
 * What IonToAvro and IonToParquet share: the rows of `from` (readable again), the schema (given, or inferred from the
 * first `numberOfRowsToScan` rows), its names and the parsing options; each property checked with its name.
 */
export async function avroConversion(ctx: import('../types.js').RunContext, props: AvroConverterValues & { from: string }, what: string) {
  const [{ readIonRows }, { limitsFromEnv }, v] = await Promise.all([
    import('../../storage/ion.js'), import('../../core/limits.js'), import('./avro-values.js'),
  ]);
  const limits = limitsFromEnv(process.env);
  if ([...props.decimalSeparator].length !== 1) throw new Error(`Property 'decimalSeparator' must be one character, got '${props.decimalSeparator}'`);
  const zone = props.timeZoneId || systemZone();
  const rowsOf = async () => readIonRows(await ctx.storage.stream(props.from), limits, what);
  let schema: import('./avro-values.js').AvroSchema;
  if (props.schema !== undefined) {
    try { schema = JSON.parse(props.schema); } catch (err) { throw new Error(`Property 'schema': invalid Avro schema: ${(err as Error).message}`); }
  } else {
    const infer = new v.SchemaInferrer();
    let n = 0;
    for await (const row of await rowsOf()) {
      infer.add(row);
      if (++n >= props.numberOfRowsToScan) break;
    }
    schema = infer.schema();
  }
  const names = new v.AvroNames(schema);
  const parser = await javaDateParser({ date: props.dateFormat, time: props.timeFormat, datetime: props.datetimeFormat }, zone,
    { date: DEFAULT_DATE, time: DEFAULT_TIME, datetime: DEFAULT_DATETIME });
  if (!parser.DateTime.now().setZone(zone).isValid) throw new Error(`Property 'timeZoneId': unknown time zone '${zone}'`);
  const options: import('./avro-values.js').WriteOptions = {
    trueValues: new Set(props.trueValues), falseValues: new Set(props.falseValues), nullValues: new Set(props.nullValues),
    parseDate: parser.parse, decimalSeparator: props.decimalSeparator, strictSchema: props.strictSchema, inferAllFields: props.inferAllFields,
    zone, DateTime: parser.DateTime,
  };
  /** A row as the schema's record (avsc's wrapped unions), or a message naming the row and field for onBadLines. */
  const record = (row: unknown, n: number): { value?: unknown; error?: string } => {
    try { return { value: v.toAvro(names, schema, row, options, '') }; } catch (err) { return { error: `Row ${n} does not fit the schema: ${(err as Error).message}` }; }
  };
  /** onBadLines for a row that does not fit: throws (ERROR) or logs (WARN) or nothing (SKIP). */
  const badRow = (message: string): void => {
    if (props.onBadLines === 'ERROR') throw new Error(message);
    if (props.onBadLines === 'WARN') ctx.logger.warn(`Bad record skipped (onBadLines=WARN): ${message}`);
  };
  return { rowsOf, schema, names, record, badRow, v };
}

export const avroToIon = definePlugin({
  type: 'serdes.avro.AvroToIon',
  aliases: ['io.kestra.plugin.serdes.avro.AvroReader'],
  title: 'Convert an Avro file into ION',
  description: 'Reads an Avro object container file (codecs null, deflate, snappy) block by block and writes one ION row per record. '
    + 'Logical types become ION values as Kestra maps them: date a date, timestamp-millis/micros a timestamp, local-timestamp a timestamp without offset, '
    + 'decimal a decimal, time-millis/micros a time text. A decompressed block is at most STORAGE_MAX_ITEM_BYTES.',
  properties: { from: fromProp('Avro') },
  outputs: { uri: { type: 'uri', description: 'URI of the ION file written.' } },
  examples: [{
    title: 'Convert an Avro file to ION',
    code: `id: avro_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.avro.AvroToIon
    from: "{{ inputs.file }}"`,
  }],
  async run(ctx, props) {
    const [avroModule, { IonRowWriter }, { limitError, limitsFromEnv }, { AvroNames, fromAvro }, { pipeline }] = await Promise.all([
      import('avsc'), import('../../storage/ion.js'), import('../../core/limits.js'), import('./avro-values.js'), import('node:stream/promises'),
    ]);
    const avro = cjs(avroModule);
    const limits = limitsFromEnv(process.env);
    const what = `serdes.avro.AvroToIon of '${props.from}'`;
    let overLimit = false;
    const tooBig = () => { overLimit = true; return limitError('storageMaxItemBytes', `${what}: an Avro block of more than ${limits.storageMaxItemBytes} bytes`, limits); };
    let schema: unknown;
    const decoder = new avro.streams.BlockDecoder({
      codecs: await codecs(limits.storageMaxItemBytes, tooBig) as never,
      parseHook: (s: unknown) => { schema = s; return avro.Type.forSchema(s as never, { wrapUnions: true }); },
    } as never);
    const out = new IonRowWriter(ctx.workingDir);
    try {
      const source = await ctx.storage.stream(props.from);
      const feeding = pipeline(source as NodeJS.ReadableStream, decoder as unknown as NodeJS.WritableStream).catch((err: Error) => { decoder.destroy(err); });
      let names: InstanceType<typeof AvroNames> | undefined;
      try {
        for await (const record of decoder as AsyncIterable<unknown>) {
          names ??= new AvroNames(schema as never);
          await out.write(fromAvro(names, schema as never, record));
        }
      } catch (err) {
        if (overLimit) throw tooBig();
        throw new Error(`${what}: not a readable Avro file: ${(err as Error).message}`);
      }
      await feeding;
      const uri = await out.store(ctx.storage, outputPath(ctx, 'ion'));
      return recordsResult({ uri }, out.rows);
    } finally {
      await out.discard();
    }
  },
});

export const ionToAvro = definePlugin({
  type: 'serdes.avro.IonToAvro',
  aliases: ['io.kestra.plugin.serdes.avro.AvroWriter'],
  title: 'Convert an ION file into Avro',
  description: 'Writes ION rows to an Avro object container file with `schema` (an Avro schema in JSON), streamed. Text values (rows from CSV) are parsed '
    + 'into the schema\'s types: booleans with `trueValues`/`falseValues`, nulls with `nullValues`, numbers (with `decimalSeparator`), dates, times and '
    + 'date-times with the formats (in `timeZoneId` when they carry no offset). Rows that are lists fill the fields in order. Without `schema`, '
    + 'one is inferred from the first `numberOfRowsToScan` rows (every field nullable). A row that does not fit fails the task naming the field '
    + '(`onBadLines: ERROR`), or is skipped (WARN logs it).',
  properties: {
    from: fromProp('ION'),
    ...avroConverterProps,
  },
  outputs: { uri: { type: 'uri', description: 'URI of the Avro file written.' } },
  examples: [{
    title: 'CSV to Avro with a schema',
    code: `id: csv_to_avro
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.csv.CsvToIon
    from: "{{ inputs.file }}"
  - id: to_avro
    type: io.kestra.plugin.serdes.avro.IonToAvro
    from: "{{ outputs.to_ion.uri }}"
    datetimeFormat: "yyyy-MM-dd' 'HH:mm:ss"
    schema: |
      {"type": "record", "name": "Ride", "fields": [
        {"name": "id", "type": "long"},
        {"name": "started_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "distance", "type": ["null", "double"], "default": null}
      ]}`,
  }],
  async run(ctx, props) {
    const avro = cjs(await import('avsc'));
    const { rowsOf, schema, record, badRow } = await avroConversion(ctx, props, `serdes.avro.IonToAvro of '${props.from}'`);
    let type: import('avsc').Type;
    try { type = avro.Type.forSchema(schema as never, { wrapUnions: true }); } catch (err) { throw new Error(`Property 'schema': invalid Avro schema: ${(err as Error).message}`); }
    return withScratch(ctx, 'avro', async (path) => {
      const file = createWriteStream(path, { flags: 'wx' });
      const put = async (buf: Buffer) => { if (!file.write(buf)) await once(file, 'drain'); };
      const sync = randomBytes(16);
      const meta = avro.Type.forSchema({ type: 'map', values: 'bytes' }).toBuffer({ 'avro.schema': Buffer.from(JSON.stringify(schema)), 'avro.codec': Buffer.from('null') });
      const long = avro.Type.forSchema('long');
      await put(Buffer.concat([Buffer.from('Obj\x01', 'latin1'), meta, sync]));
      let block: Buffer[] = [];
      let blockBytes = 0;
      let records = 0;
      const flush = async () => {
        if (block.length === 0) return;
        await put(Buffer.concat([long.toBuffer(block.length), long.toBuffer(blockBytes), ...block, sync]));
        block = [];
        blockBytes = 0;
      };
      try {
        let n = 0;
        for await (const row of await rowsOf()) {
          n++;
          const r = record(row, n);
          if (r.error !== undefined) { badRow(r.error); continue; }
          const buf = type.toBuffer(r.value);
          block.push(buf);
          blockBytes += buf.length;
          records++;
          if (blockBytes >= BLOCK_BYTES) await flush();
        }
        await flush();
      } finally {
        file.end();
        await once(file, 'close');
      }
      const uri = await ctx.storage.put(outputPath(ctx, 'avro'), createReadStream(path));
      return recordsResult({ uri }, records);
    });
  },
});
