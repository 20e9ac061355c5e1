// serdes.json.JsonToIon and IonToJson: JSON (one value a line, or one document/array) to and from ION row files,
// streamed both ways: a top-level JSON array is split into its items as it is read (Kestra loads it whole), so only
// one item is in memory, and one item (or a line) is at most STORAGE_MAX_ITEM_BYTES.
import { definePlugin, p } from '../define.js';
import { charsetProp, decodeText, encodingFor, fromProp, outputPath, recordsResult, withScratch } from './common.js';

/**
 * The items of a JSON text read chunk by chunk: a top-level array gives its items one at a time, any other value is
 * one item. Only the current item's text is held; an item longer than `maxChars` fails with `tooLong()`.
 */
export async function* splitJsonItems(chunks: AsyncIterable<string>, maxChars: number, tooLong: () => Error): AsyncGenerator<string> {
  let mode: 'start' | 'array' | 'single' | 'done' = 'start';
  let item = '';
  let depth = 0; // inside the current item
  let inString = false;
  let escaped = false;
  for await (const chunk of chunks) {
    let from = 0;
    let i = 0;
    if (mode === 'start') {
      while (i < chunk.length && /\s/.test(chunk[i])) i++;
      if (i === chunk.length) continue;
      if (chunk[i] === '[') { mode = 'array'; i++; from = i; } else { mode = 'single'; from = i; }
    }
    if (mode === 'single') {
      item += chunk.slice(from);
      if (item.length > maxChars) throw tooLong();
      continue;
    }
    for (; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (mode === 'done') {
        if (!(c === 32 || c === 9 || c === 10 || c === 13)) throw new Error(`Unexpected '${chunk[i]}' after the top-level JSON array`);
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true;
        else if (c === 34) inString = false;
        continue;
      }
      if (c === 34) inString = true;
      else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        if (depth === 0 && c === 93) { // the end of the top-level array
          item += chunk.slice(from, i);
          if (item.length > maxChars) throw tooLong();
          if (item.trim() !== '') yield item;
          item = '';
          mode = 'done';
          continue;
        }
        depth--;
      } else if (c === 44 && depth === 0) {
        item += chunk.slice(from, i);
        if (item.length > maxChars) throw tooLong();
        if (item.trim() === '') throw new Error('Empty item in the top-level JSON array');
        yield item;
        item = '';
        from = i + 1;
      }
    }
    if (mode === 'array') {
      item += chunk.slice(from);
      if (item.length > maxChars) throw tooLong();
    }
  }
  if (mode === 'array') throw new Error('Unterminated top-level JSON array');
  if (mode === 'single' && item.trim() !== '') yield item;
}

export const jsonToIon = definePlugin({
  type: 'serdes.json.JsonToIon',
  aliases: ['io.kestra.plugin.serdes.json.JsonReader'],
  title: 'Convert a JSON file to the Amazon ION format',
  description: 'Reads JSON Lines (one value a line, `newLine: true`) or one JSON document (`newLine: false`: an array gives one row per item, '
    + 'any other value one row) and writes one ION row per value. Streamed in both cases: an array is split item by item, never loaded whole.',
  properties: {
    from: fromProp('JSON'),
    charset: charsetProp(),
    newLine: p.boolean().default(true).describe('The file is newline-delimited JSON (JSONL); false: one JSON document (an array is split into rows).'),
  },
  outputs: { uri: { type: 'uri', description: 'URI of the ION file written.' } },
  examples: [{
    title: 'Convert a JSON array to ION rows',
    code: `id: json_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.json.JsonToIon
    from: "{{ inputs.file }}"
    newLine: false`,
  }],
  async run(ctx, props) {
    const [{ IonRowWriter }, { readLines }, { limitError, limitsFromEnv }, { parseJsonSafe }] = await Promise.all([
      import('../../storage/ion.js'), import('../../storage/lines.js'), import('../../core/limits.js'), import('../../core/keyed.js'),
    ]);
    const limits = limitsFromEnv(process.env);
    const what = `serdes.json.JsonToIon of '${props.from}'`;
    const out = new IonRowWriter(ctx.workingDir);
    try {
      const parse = (text: string, where: string): unknown => {
        try { return parseJsonSafe(text); } catch (err) { throw new Error(`${what}: ${where} is not JSON: ${(err as Error).message}`); }
      };
      const input = await ctx.storage.stream(props.from);
      if (props.newLine) {
        const { Readable } = await import('node:stream');
        const utf8 = /^utf-?8$/i.test(props.charset.trim());
        let n = 0;
        for await (const raw of readLines(utf8 ? input : Readable.from(encodeUtf8(decodeText(input, props.charset))), limits, what)) {
          n++;
          const line = n === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
          if (line.trim() === '') continue;
          await out.write(parse(line, `line ${n}`));
        }
      } else {
        let n = 0;
        const tooLong = () => limitError('storageMaxItemBytes', `${what}: a JSON item of more than ${limits.storageMaxItemBytes} characters`, limits);
        for await (const text of splitJsonItems(decodeText(input, props.charset), limits.storageMaxItemBytes, tooLong)) {
          n++;
          await out.write(parse(text, `item ${n}`));
        }
      }
      const uri = await out.store(ctx.storage, outputPath(ctx, 'ion'));
      return recordsResult({ uri }, out.rows);
    } finally {
      await out.discard();
    }
  },
});

async function* encodeUtf8(texts: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const t of texts) yield Buffer.from(t, 'utf8');
}

export const ionToJson = definePlugin({
  type: 'serdes.json.IonToJson',
  aliases: ['io.kestra.plugin.serdes.json.JsonWriter'],
  title: 'Convert an ION file into a JSONL file',
  description: 'Writes each ION row as one JSON line (`newLine: true`, a `.jsonl` file) or all rows as one JSON array (`newLine: false`, a `.json` file), streamed. '
    + 'Timestamps become ISO 8601 strings (in `timeZoneId` when set), blobs base64 strings, decimals numbers.',
  properties: {
    from: fromProp('ION'),
    charset: charsetProp(),
    newLine: p.boolean().default(true).describe('Write newline-delimited JSON (JSONL); false: one JSON array.'),
    timeZoneId: p.string().describe('Time zone date-times with an offset are written in (default: as they are in the file).'),
  },
  outputs: { uri: { type: 'uri', description: 'URI of the JSON file written.' } },
  examples: [{
    title: 'Convert ION rows to JSON Lines',
    code: `id: ion_to_json
namespace: company.team
tasks:
  - id: to_json
    type: io.kestra.plugin.serdes.json.IonToJson
    from: "{{ outputs.to_ion.uri }}"`,
  }],
  async run(ctx, props) {
    const [{ readIonRows, IonTimestamp, IonDecimal }, { LineFile }, { limitsFromEnv }, { DateTime }] = await Promise.all([
      import('../../storage/ion.js'), import('../../storage/lines.js'), import('../../core/limits.js'), import('luxon'),
    ]);
    const encoding = encodingFor(props.charset);
    const zone = props.timeZoneId;
    if (zone && !DateTime.now().setZone(zone).isValid) throw new Error(`Property 'timeZoneId': unknown time zone '${zone}'`);
    const replacer = function (this: Record<string, unknown>, key: string, value: unknown): unknown {
      const raw = this[key];
      if (raw instanceof IonTimestamp) {
        if (zone && raw.hasOffset) return DateTime.fromISO(raw.text, { setZone: true }).setZone(zone).toISO();
        return raw.text;
      }
      if (raw instanceof IonDecimal) return Number(raw.text);
      if (raw instanceof Uint8Array) return Buffer.from(raw).toString('base64');
      if (typeof raw === 'number' && !Number.isFinite(raw)) return String(raw);
      return value;
    };
    return withScratch(ctx, props.newLine ? 'jsonl' : 'json', async (path) => {
      const file = new LineFile(path, encoding);
      let rows = 0;
      try {
        if (!props.newLine) await file.write('[');
        for await (const row of readIonRows(await ctx.storage.stream(props.from), limitsFromEnv(process.env), `serdes.json.IonToJson of '${props.from}'`)) {
          const text = JSON.stringify({ v: row }, replacer).slice(5, -1);
          await file.write(props.newLine ? text + '\n' : (rows ? ',' : '') + text);
          rows++;
        }
        if (!props.newLine) await file.write(']');
      } finally {
        await file.close();
      }
      const uri = await ctx.storage.put(outputPath(ctx, props.newLine ? 'jsonl' : 'json'), file.read());
      return recordsResult({ uri }, rows);
    });
  },
});
