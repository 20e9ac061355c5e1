// What the serdes.* converters share: the `from` and `charset` properties, text decoding and encoding by charset,
// reading an ION file's rows and writing rows to a new ION file of the task run (operator/storage/ion.ts), Kestra's
// date/time formatting of text writers (dateFormat, timeFormat, dateTimeFormat, timeZoneId) and the `records` metric.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { p, type Prop } from '../define.js';
import type { RunContext, TaskResult } from '../types.js';

/** The source file: an internal-storage URI of the execution. */
export const fromProp = (what: string): Prop<string> => p.string().required().describe(`URI of the ${what} file in internal storage (\`kestra:///...\`), e.g. the output of a previous task.`);
export const charsetProp = (): Prop<string> => p.string().default('UTF-8').describe('Name of the charset of the text (UTF-8, ISO-8859-1, windows-1252, UTF-16LE...).');

/** The properties of Kestra's AbstractTextWriter: how dates and times are written as text. */
export const textWriterProps = {
  dateFormat: p.string().default('yyyy-MM-dd').describe('Java DateTimeFormatter pattern for dates.'),
  timeFormat: p.string().default('HH:mm:ss[XXX]').describe('Java DateTimeFormatter pattern for times.'),
  dateTimeFormat: p.string().default("yyyy-MM-dd'T'HH:mm:ss.SSS[XXX]").describe('Java DateTimeFormatter pattern for date-times.'),
  timeZoneId: p.string().describe('Time zone of date-times that carry none (default: the service\'s time zone).'),
};

/** The records metric every converter reports (Kestra's `records` counter). */
export function recordsResult(outputs: Record<string, unknown>, records: number): TaskResult {
  return { state: 'SUCCESS', outputs, metrics: [{ name: 'records', type: 'counter', value: records }] };
}

/** A text decoder for a charset name, or an error naming the property. */
export function decoderFor(charset: string, name = 'charset'): TextDecoder {
  try {
    return new TextDecoder(charset, { fatal: false });
  } catch {
    throw new Error(`Property '${name}': unsupported charset '${charset}'`);
  }
}

/** Node's encoding for writing text in a charset (those Node can write), or an error naming the property. */
export function encodingFor(charset: string, name = 'charset'): BufferEncoding {
  const c = charset.trim().toLowerCase().replace(/_/g, '-');
  if (c === 'utf-8' || c === 'utf8') return 'utf8';
  if (c === 'iso-8859-1' || c === 'latin1' || c === 'iso8859-1') return 'latin1';
  if (c === 'us-ascii' || c === 'ascii') return 'ascii';
  if (c === 'utf-16le' || c === 'utf16le') return 'utf16le';
  throw new Error(`Property '${name}': cannot write charset '${charset}' (UTF-8, ISO-8859-1, US-ASCII and UTF-16LE can be written)`);
}

/** The text of a byte stream in a charset, chunk by chunk (multi-byte characters split across chunks are kept whole). */
export async function* decodeText(stream: NodeJS.ReadableStream, charset: string): AsyncGenerator<string> {
  const decoder = decoderFor(charset);
  let first = true;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    let text = decoder.decode(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, { stream: true });
    if (first && text.length > 0) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte-order mark is not data
    }
    if (text) yield text;
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}

/** Where a converter's output goes: `<storagePrefix>/<uuid>.<ext>`. */
export function outputPath(ctx: RunContext, ext: string): string {
  return `${ctx.storagePrefix}/${randomUUID()}.${ext}`;
}

/** A scratch file of the working directory, removed once `use` ends. */
export async function withScratch<T>(ctx: RunContext, ext: string, use: (path: string) => Promise<T>): Promise<T> {
  const path = join(ctx.workingDir, `serdes-${randomUUID()}.${ext}`);
  try {
    return await use(path);
  } finally {
    await rm(path, { force: true });
  }
}

/** The service's time zone: Kestra's default `timeZoneId` (ZoneId.systemDefault()). */
export function systemZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export interface TextFormats { dateFormat: string; timeFormat: string; dateTimeFormat: string; timeZoneId: string | undefined }

/**
 * Kestra's AbstractTextWriter.convert: a value as the text of a cell. Dates with `dateFormat`, date-times with
 * `dateTimeFormat` (in `timeZoneId` when they carry no offset), nested values as JSON, null as null.
 */
export async function textConverter(formats: TextFormats): Promise<(value: unknown) => string | null> {
  const [{ DateTime }, { formatJava }, { IonTimestamp, IonDecimal }] = await Promise.all([
    import('luxon'), import('../../expr/dates.js'), import('../../storage/ion.js'),
  ]);
  const zone = formats.timeZoneId || systemZone();
  if (!DateTime.now().setZone(zone).isValid) throw new Error(`Property 'timeZoneId': unknown time zone '${zone}'`);
  for (const [name, pattern] of Object.entries({ dateFormat: formats.dateFormat, timeFormat: formats.timeFormat, dateTimeFormat: formats.dateTimeFormat })) {
    try { formatJava(DateTime.now(), pattern); } catch (err) { throw new Error(`Property '${name}': ${(err as Error).message}`); }
  }
  const convert = (value: unknown): string | null => {
    if (value === null || value === undefined) return null;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
    if (value instanceof IonTimestamp) {
      if (value.dateOnly) return formatJava(DateTime.fromISO(value.toDate().toISOString(), { zone: 'UTC' }), formats.dateFormat);
      const dt = value.hasOffset ? DateTime.fromISO(value.text, { setZone: true }) : DateTime.fromISO(value.text.replace(/-00:00$/, ''), { zone });
      return formatJava(dt, formats.dateTimeFormat);
    }
    if (value instanceof Date) return formatJava(DateTime.fromJSDate(value, { zone: 'UTC' }), formats.dateTimeFormat);
    if (value instanceof IonDecimal) return value.text;
    if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    return JSON.stringify(value);
  };
  return convert;
}

/**
 * A parser of date/time text for a Java DateTimeFormatter pattern (Kestra's `dateFormat`, `timeFormat`,
 * `datetimeFormat`): ISO 8601 for Kestra's default ISO-like patterns, else the pattern with each optional `[...]`
 * section present or absent, in `zone` when the text has no offset.
 */
export async function javaDateParser(patterns: Record<'date' | 'time' | 'datetime', string>, zone: string, isoDefaults: Record<'date' | 'time' | 'datetime', string>) {
  const { DateTime } = await import('luxon');
  const variants = (pattern: string): string[] => {
    const m = /\[([^[\]]*)\]/.exec(pattern);
    if (!m) return [pattern];
    const before = pattern.slice(0, m.index);
    const after = pattern.slice(m.index + m[0].length);
    return [...variants(before + m[1] + after), ...variants(before + after)];
  };
  const luxon = (java: string): string => java.replace(/X+|x+|Z+/g, 'ZZ').replace(/S+/g, 'S').replace(/E+/g, 'EEE');
  const formats = Object.fromEntries((['date', 'time', 'datetime'] as const).map((k) => [k, patterns[k] === isoDefaults[k] ? undefined : variants(patterns[k]).map(luxon)])) as Record<'date' | 'time' | 'datetime', string[] | undefined>;
  return {
    DateTime,
    parse(text: string, kind: 'date' | 'time' | 'datetime') {
      const list = formats[kind];
      if (!list) {
        const dt = kind === 'time' ? DateTime.fromISO(`1970-01-01T${text}`, { zone, setZone: true }) : DateTime.fromISO(text.replace(' ', 'T'), { zone, setZone: true });
        return dt.isValid ? dt : undefined;
      }
      for (const f of list) {
        const dt = DateTime.fromFormat(text, f, { zone, setZone: true });
        if (dt.isValid) return dt;
      }
      return undefined;
    },
  };
}
