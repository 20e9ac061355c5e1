// serdes.csv.CsvToIon and IonToCsv: CSV files to and from ION row files, streamed (csv-parse reads record by record;
// a record longer than STORAGE_MAX_ITEM_BYTES or `maxBufferSize` is refused, as is a field over `maxFieldSize`).
import { Readable } from 'node:stream';
import { definePlugin, p } from '../define.js';
import { charsetProp, decodeText, encodingFor, fromProp, outputPath, recordsResult, textConverter, textWriterProps, withScratch } from './common.js';

const ON_BAD_LINES = ['ERROR', 'WARN', 'SKIP'] as const;
const QUOTE_MODES = ['ALWAYS', 'REQUIRED', 'NON_NUMERIC'] as const;
const DEFAULT_MAX_SIZE = 16 * 1024 * 1024;

const oneChar = (value: string, name: string): string => {
  if ([...value].length !== 1) throw new Error(`Property '${name}' must be one character, got '${value}'`);
  return value;
};

export const csvToIon = definePlugin({
  type: 'serdes.csv.CsvToIon',
  aliases: ['io.kestra.plugin.serdes.csv.CsvReader'],
  title: 'Convert a CSV file to the Amazon ION format',
  description: 'Reads a CSV file record by record and writes one ION row per record: a map keyed by the header when `header` is true, else a list. '
    + 'The value `\\N` is read as null. `onBadLines` decides what a malformed record or one with a different field count does. '
    + 'The file is streamed; one record is at most `maxBufferSize` characters and STORAGE_MAX_ITEM_BYTES.',
  properties: {
    from: fromProp('CSV'),
    header: p.boolean().default(true).describe('The first line is the header (the rows are maps keyed by it).'),
    fieldSeparator: p.string().default(',').describe('The field separator character.'),
    textDelimiter: p.string().default('"').describe('The text delimiter (quote) character.'),
    skipEmptyRows: p.boolean().default(false).describe('Skip empty rows.'),
    errorOnDifferentFieldCount: p.boolean().describe('Deprecated: `onBadLines: ERROR` (true) or `SKIP` (false).'),
    onBadLines: p.enum(ON_BAD_LINES).describe('What a malformed record or one with a different field count than the header does: ERROR fails the task, WARN logs and skips it, SKIP skips it. Default ERROR.'),
    skipRows: p.integer({ min: 0 }).default(0).describe('Number of rows to skip at the start of the file (after the header).'),
    charset: charsetProp(),
    maxBufferSize: p.integer({ min: 1 }).default(DEFAULT_MAX_SIZE).describe('Longest record, in characters (STORAGE_MAX_ITEM_BYTES bounds it too).'),
    allowExtraCharsAfterClosingQuote: p.boolean().default(false).describe('Accept characters after a closing quote (the field is then kept as written, quotes included).'),
    maxFieldSize: p.integer({ min: 1 }).default(DEFAULT_MAX_SIZE).describe('Longest field, in characters.'),
  },
  outputs: { uri: { type: 'uri', description: 'URI of the ION file written.' } },
  examples: [{
    title: 'Convert a CSV file to ION',
    code: `id: csv_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.csv.CsvToIon
    from: "{{ inputs.file }}"
    fieldSeparator: ";"`,
  }],
  async run(ctx, props) {
    const [{ parse }, { IonRowWriter }, { limitError, limitsFromEnv }] = await Promise.all([
      import('csv-parse'), import('../../storage/ion.js'), import('../../core/limits.js'),
    ]);
    const limits = limitsFromEnv(process.env);
    const delimiter = oneChar(props.fieldSeparator, 'fieldSeparator');
    const quote = oneChar(props.textDelimiter, 'textDelimiter');
    const onBadLines = props.onBadLines ?? (props.errorOnDifferentFieldCount === false ? 'SKIP' : 'ERROR');
    const maxRecord = Math.min(props.maxBufferSize, limits.storageMaxItemBytes);
    const parser = parse({
      delimiter, quote, escape: quote,
      skip_empty_lines: props.skipEmptyRows,
      relax_column_count: true,
      relax_quotes: props.allowExtraCharsAfterClosingQuote,
      max_record_size: maxRecord,
      skip_records_with_error: onBadLines !== 'ERROR',
    });
    parser.on('skip', (err: Error) => {
      if (onBadLines === 'WARN') ctx.logger.warn(`Bad line encountered (skipped): ${err.message}`);
    });
    const source = Readable.from(decodeText(await ctx.storage.stream(props.from), props.charset));
    source.on('error', (err) => parser.destroy(err));
    source.pipe(parser);
    const out = new IonRowWriter(ctx.workingDir);
    try {
      let header: string[] | undefined;
      let skipped = 0;
      try {
        let n = 0; // records read, the header included
        for await (const record of parser as AsyncIterable<string[]>) {
          n++;
          for (const field of record) {
            if (field.length > props.maxFieldSize) throw new Error(`CSV record ${n}: a field of more than ${props.maxFieldSize} characters (property 'maxFieldSize')`);
          }
          if (props.header && !header) { header = record; continue; }
          if (skipped < props.skipRows) { skipped++; continue; }
          const values = record.map((v) => (v === '\\N' ? null : v));
          if (header) {
            if (values.length !== header.length) {
              const message = `Bad line encountered (field count mismatch) at record ${n}: Expected ${header.length}, got ${values.length} fields.`;
              if (onBadLines === 'ERROR') throw new Error(message);
              if (onBadLines === 'WARN') ctx.logger.warn(message);
              continue;
            }
            const row: Record<string, unknown> = Object.create(null);
            header.forEach((name, k) => { row[name] = values[k]; });
            await out.write(row);
          } else {
            await out.write(values);
          }
        }
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'CSV_MAX_RECORD_SIZE') {
          if (maxRecord === limits.storageMaxItemBytes) throw limitError('storageMaxItemBytes', `serdes.csv.CsvToIon of '${props.from}': a record of more than ${maxRecord} characters`, limits);
          throw new Error(`serdes.csv.CsvToIon of '${props.from}': a record of more than ${maxRecord} characters (property 'maxBufferSize')`);
        }
        if (code?.startsWith('CSV_')) throw new Error(`Malformed CSV in '${props.from}': ${(err as Error).message}`);
        throw err;
      }
      const uri = await out.store(ctx.storage, outputPath(ctx, 'ion'));
      return recordsResult({ uri }, out.rows);
    } finally {
      await out.discard();
    }
  },
});

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)$/;

export const ionToCsv = definePlugin({
  type: 'serdes.csv.IonToCsv',
  aliases: ['io.kestra.plugin.serdes.csv.CsvWriter'],
  title: 'Convert an ION file to the CSV format',
  description: 'Writes one CSV record per ION row, streamed. Rows that are maps give their values (and, with `header`, the first row\'s keys as the header); '
    + 'rows that are lists give their items (refused with `header: true`). Dates and date-times are written with `dateFormat`/`dateTimeFormat`, '
    + 'nested maps and lists as JSON (Kestra writes Java\'s toString), null as an empty field.',
  properties: {
    from: fromProp('ION'),
    header: p.boolean().default(true).describe('Write a header line with the first row\'s keys.'),
    fieldSeparator: p.string().default(',').describe('The field separator character.'),
    textDelimiter: p.string().default('"').describe('The text delimiter (quote) character.'),
    lineDelimiter: p.string().default('\n').describe('The characters ending a row.'),
    alwaysDelimitText: p.boolean().default(false).describe('Deprecated: quote every field (`quoteMode: ALWAYS`); ignored when `quoteMode` is set.'),
    quoteMode: p.enum(QUOTE_MODES).describe('When fields are quoted: ALWAYS, REQUIRED (only fields holding the separator, the quote or a line break; the default) or NON_NUMERIC (all but numbers).'),
    charset: charsetProp(),
    ...textWriterProps,
  },
  outputs: { uri: { type: 'uri', description: 'URI of the CSV file written.' } },
  examples: [{
    title: 'Convert ION rows to CSV with numbers unquoted',
    code: `id: ion_to_csv
namespace: company.team
tasks:
  - id: to_csv
    type: io.kestra.plugin.serdes.csv.IonToCsv
    from: "{{ outputs.query.uri }}"
    quoteMode: NON_NUMERIC`,
  }],
  async run(ctx, props) {
    const [{ readIonRows }, { LineFile }, { limitsFromEnv }] = await Promise.all([
      import('../../storage/ion.js'), import('../../storage/lines.js'), import('../../core/limits.js'),
    ]);
    const sep = oneChar(props.fieldSeparator, 'fieldSeparator');
    const quote = oneChar(props.textDelimiter, 'textDelimiter');
    const mode = props.quoteMode ?? (props.alwaysDelimitText ? 'ALWAYS' : 'REQUIRED');
    const encoding = encodingFor(props.charset);
    const convert = await textConverter(props);
    const doubled = quote + quote;
    const field = (value: unknown): string => {
      const text = convert(value);
      if (text === null) return '';
      const quoteIt = mode === 'ALWAYS' || (mode === 'NON_NUMERIC' && !NUMERIC.test(text))
        || text.includes(sep) || text.includes(quote) || text.includes('\n') || text.includes('\r');
      return quoteIt ? quote + text.split(quote).join(doubled) + quote : text;
    };
    const line = (values: unknown[]): string => values.map(field).join(sep) + props.lineDelimiter;
    return withScratch(ctx, 'csv', async (path) => {
      const file = new LineFile(path, encoding);
      let rows = 0;
      try {
        for await (const row of readIonRows(await ctx.storage.stream(props.from), limitsFromEnv(process.env), `serdes.csv.IonToCsv of '${props.from}'`)) {
          if (Array.isArray(row)) {
            if (props.header) throw new Error(`Row ${rows + 1}: invalid data of type List with header (set 'header: false')`);
            await file.write(line(row));
          } else if (row !== null && typeof row === 'object') {
            const map = row as Record<string, unknown>;
            if (rows === 0 && props.header) await file.write(line(Object.keys(map)));
            await file.write(line(Object.values(map)));
          } else {
            throw new Error(`Row ${rows + 1}: a CSV row must be a map or a list, got ${row === null ? 'null' : typeof row}`);
          }
          rows++;
        }
      } finally {
        await file.close();
      }
      const uri = await ctx.storage.put(outputPath(ctx, 'csv'), file.read());
      return recordsResult({ uri }, rows);
    });
  },
});
