// serdes.xml.XmlToIon and IonToXml: XML to and from ION rows, streamed. XmlToIon maps elements as Kestra's org.json
// XML.toJSONObject does (attributes and children as keys, repeated elements as lists, text with attributes as
// `content`, numbers and booleans typed) with a streaming parser (saxes: no DTD or external entity is ever loaded):
// with `query` (`/root/item`) each matching element is one row as soon as it closes; without, the document is one row.
// One row is at most STORAGE_MAX_ITEM_BYTES of text.
import { definePlugin, p } from '../define.js';
import { charsetProp, decodeText, encodingFor, fromProp, outputPath, recordsResult, textConverter, withScratch } from './common.js';

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** org.json's stringToValue: `true`/`false`, `null`, numbers typed; anything else the text itself. */
function typedText(text: string): unknown {
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  if (lower === 'null') return null;
  if (NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  }
  return text;
}

interface Frame { name: string; obj: Record<string, unknown>; text: string; hasChildren: boolean; capture: boolean }

export const xmlToIon = definePlugin({
  type: 'serdes.xml.XmlToIon',
  aliases: ['io.kestra.plugin.serdes.xml.XmlReader'],
  title: 'Convert an XML file into ION',
  description: 'Reads XML as Kestra does (org.json\'s mapping: attributes and child elements become keys, repeated elements lists, the text of an element '
    + 'with attributes or children `content`; `true`, `false`, `null` and numbers are typed). With `query`, a path of element names from the root '
    + '(`/catalog/product`), each matching element is one row, emitted while the file streams; without it the whole document is one row. '
    + 'A row is at most STORAGE_MAX_ITEM_BYTES. DTDs and external entities are never loaded.',
  properties: {
    from: fromProp('XML'),
    charset: charsetProp(),
    query: p.string().describe('Path of element names from the root (`/root/items/item`); each matching element is a row. Without it, the document is one row.'),
    parserConfiguration: p.object({
      forceList: p.stringList().describe('Element names always read as lists, even when they appear once.'),
    }).describe('XML parser configuration.'),
  },
  outputs: { uri: { type: 'uri', description: 'URI of the ION file written.' } },
  examples: [{
    title: 'One row per product element',
    code: `id: xml_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.xml.XmlToIon
    from: "{{ inputs.file }}"
    query: /catalog/product`,
  }],
  async run(ctx, props) {
    const [{ SaxesParser }, { IonRowWriter }, { limitError, limitsFromEnv }] = await Promise.all([
      import('saxes'), import('../../storage/ion.js'), import('../../core/limits.js'),
    ]);
    const limits = limitsFromEnv(process.env);
    const what = `serdes.xml.XmlToIon of '${props.from}'`;
    const query = props.query === undefined ? undefined : props.query.split('/').filter(Boolean);
    if (query && (query.length === 0 || query.some((s) => /^\d+$/.test(s)))) throw new Error(`Property 'query' must be a path of element names from the root ('/root/item'), got '${props.query}'`);
    const forceList = new Set(props.parserConfiguration?.forceList ?? []);
    const out = new IonRowWriter(ctx.workingDir);
    const parser = new SaxesParser({ xmlns: false, position: true });
    const stack: Frame[] = [];
    const root: Record<string, unknown> = Object.create(null);
    const pending: unknown[] = [];
    let held = 0; // characters of the row being built
    let failure: Error | undefined;
    const hold = (n: number): void => {
      held += n;
      if (held > limits.storageMaxItemBytes) throw limitError('storageMaxItemBytes', `${what}: a row of more than ${limits.storageMaxItemBytes} characters`, limits);
    };
    const add = (obj: Record<string, unknown>, key: string, value: unknown): void => {
      if (Object.hasOwn(obj, key)) {
        const prev = obj[key];
        if (Array.isArray(prev)) prev.push(value); // values are never lists themselves: a list is a repeated element
        else obj[key] = [prev, value];
      } else obj[key] = forceList.has(key) ? [value] : value;
    };
    const matches = (depth: number, name: string): boolean => !!query && depth === query.length - 1 && name === query[depth]
      && stack.every((f, k) => f.name === query[k]);
    parser.on('opentag', (tag) => {
      const depth = stack.length;
      const parent = stack[depth - 1];
      const capture = query ? (parent?.capture ?? false) || matches(depth, tag.name) : true;
      if (parent) parent.hasChildren = true;
      const obj: Record<string, unknown> = Object.create(null);
      if (capture) {
        for (const [k, v] of Object.entries(tag.attributes as Record<string, string>)) {
          hold(k.length + v.length);
          add(obj, k, typedText(v));
        }
      }
      stack.push({ name: tag.name, obj, text: '', hasChildren: Object.keys(obj).length > 0, capture });
    });
    parser.on('text', (text) => {
      const f = stack[stack.length - 1];
      if (f?.capture) {
        hold(text.length);
        f.text += text;
      }
    });
    parser.on('cdata', (text) => {
      const f = stack[stack.length - 1];
      if (f?.capture) { hold(text.length); f.text += text; }
    });
    parser.on('closetag', () => {
      const f = stack.pop()!;
      if (!f.capture) return;
      const text = f.text.trim();
      let value: unknown;
      if (f.hasChildren || Object.keys(f.obj).length > 0) {
        if (text) add(f.obj, 'content', typedText(text));
        value = f.obj;
      } else value = text === '' ? '' : typedText(text);
      const depth = stack.length;
      if (query && depth === query.length - 1) {
        pending.push(value);
        held = 0;
      } else if (depth > 0) add(stack[depth - 1].obj, f.name, value);
      else add(root, f.name, value);
    });
    parser.on('error', (err) => { failure ??= err; });
    try {
      for await (const chunk of decodeText(await ctx.storage.stream(props.from), props.charset)) {
        try { parser.write(chunk); } catch (err) { failure ??= err as Error; }
        if (failure) break;
        for (const row of pending.splice(0)) await out.write(row);
      }
      if (!failure) {
        try { parser.close(); } catch (err) { failure ??= err as Error; }
      }
      if (failure) {
        if ((failure as { name?: string }).name === 'LimitError' || failure.message.includes('STORAGE_MAX_ITEM_BYTES')) throw failure;
        throw new Error(`${what}: malformed XML: ${failure.message}`);
      }
      for (const row of pending.splice(0)) await out.write(row);
      if (!query) await out.write(root);
      const uri = await out.store(ctx.storage, outputPath(ctx, 'ion'));
      return recordsResult({ uri }, out.rows);
    } finally {
      await out.discard();
    }
  },
});

const escapeXml = (s: string): string => s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
  // characters XML 1.0 cannot hold at all
  .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');

/** An element name from a key: XML names cannot hold spaces or start with a digit. */
export function xmlName(key: string): string {
  const s = key.replace(/[^A-Za-z0-9_.\-:\u00C0-\uFFEF]/g, '_');
  return /^[A-Za-z_\u00C0-\uFFEF]/.test(s) && !/^xml/i.test(s) ? s : `_${s}`;
}

export const ionToXml = definePlugin({
  type: 'serdes.xml.IonToXml',
  aliases: ['io.kestra.plugin.serdes.xml.XmlWriter'],
  title: 'Convert an ION file to the XML format',
  description: 'Writes each ION row as an `<item>` element under a root element (`rootName`), indented as Kestra\'s Jackson XmlMapper does: map keys '
    + 'become child elements (names XML cannot hold get `_`), lists repeat their element inside a wrapper, null is an empty element, date-times '
    + 'ISO 8601 (in `timeZoneId` when set). Streamed row by row (Kestra loads all rows first).',
  properties: {
    from: fromProp('ION'),
    charset: charsetProp(),
    rootName: p.string().default('items').describe('Name of the root element.'),
    timeZoneId: p.string().describe('Time zone date-times without an offset are written in (default: the service\'s).'),
  },
  outputs: { uri: { type: 'uri', description: 'URI of the XML file written.' } },
  examples: [{
    title: 'ION rows to XML',
    code: `id: ion_to_xml
namespace: company.team
tasks:
  - id: to_xml
    type: io.kestra.plugin.serdes.xml.IonToXml
    from: "{{ outputs.query.uri }}"
    rootName: products`,
  }],
  async run(ctx, props) {
    const [{ readIonRows, IonTimestamp, IonDecimal }, { LineFile }, { limitsFromEnv }] = await Promise.all([
      import('../../storage/ion.js'), import('../../storage/lines.js'), import('../../core/limits.js'),
    ]);
    const encoding = encodingFor(props.charset);
    const rootName = xmlName(props.rootName);
    const text = await textConverter({ dateFormat: 'yyyy-MM-dd', timeFormat: 'HH:mm:ss', dateTimeFormat: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", timeZoneId: props.timeZoneId });
    const element = (name: string, value: unknown, indent: string): string => {
      const tag = xmlName(name);
      if (value === null || value === undefined) return `${indent}<${tag}/>\n`;
      if (Array.isArray(value)) {
        if (value.length === 0) return `${indent}<${tag}/>\n`;
        return `${indent}<${tag}>\n${value.map((v) => element(name, v, indent + '  ')).join('')}${indent}</${tag}>\n`;
      }
      if (typeof value === 'object' && !(value instanceof IonTimestamp) && !(value instanceof IonDecimal) && !(value instanceof Uint8Array)) {
        const entries = Object.entries(value as Record<string, unknown>);
        if (entries.length === 0) return `${indent}<${tag}/>\n`;
        return `${indent}<${tag}>\n${entries.map(([k, v]) => element(k, v, indent + '  ')).join('')}${indent}</${tag}>\n`;
      }
      return `${indent}<${tag}>${escapeXml(text(value) ?? '')}</${tag}>\n`;
    };
    return withScratch(ctx, 'xml', async (path) => {
      const file = new LineFile(path, encoding);
      let rows = 0;
      try {
        await file.write(`<?xml version='1.0' encoding='${props.charset}'?>\n<${rootName}>\n`);
        for await (const row of readIonRows(await ctx.storage.stream(props.from), limitsFromEnv(process.env), `serdes.xml.IonToXml of '${props.from}'`)) {
          await file.write(element('item', row, '  '));
          rows++;
        }
        await file.write(`</${rootName}>\n`);
      } finally {
        await file.close();
      }
      const uri = await ctx.storage.put(outputPath(ctx, 'xml'), file.read());
      return recordsResult({ uri }, rows);
    });
  },
});
