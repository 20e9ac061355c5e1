// exceljs's streaming reader decodes each inflated chunk of a sheet's XML on its own (exceljs/lib/utils/parse-sax.js),
// so a UTF-8 character split across two chunks becomes two U+FFFD (exceljs issues #2084 and #2316; the fixes are not
// merged). Imported before exceljs is first loaded, this module replaces that parser with one that decodes each
// stream with its own StringDecoder, which carries an unfinished character over to the next chunk.
import { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';

const require = createRequire(import.meta.url);
const path = require.resolve('exceljs/lib/utils/parse-sax.js');
const { SaxesParser } = require('saxes') as typeof import('saxes');

type SaxEvent = { eventType: 'opentag' | 'text' | 'closetag'; value: unknown };

async function* parseSax(iterable: AsyncIterable<Buffer | string> & { pipe?: unknown }): AsyncGenerator<SaxEvent[]> {
  const decoder = new StringDecoder('utf8');
  const parser = new SaxesParser();
  let error: Error | undefined;
  parser.on('error', (err) => { error = err; });
  let events: SaxEvent[] = [];
  parser.on('opentag', (value) => events.push({ eventType: 'opentag', value }));
  parser.on('text', (value) => events.push({ eventType: 'text', value }));
  parser.on('closetag', (value) => events.push({ eventType: 'closetag', value }));
  for await (const chunk of iterable) {
    parser.write(typeof chunk === 'string' ? chunk : decoder.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)));
    if (error) throw error;
    yield events;
    events = [];
  }
  const tail = decoder.end();
  if (tail) {
    parser.write(tail);
    if (error) throw error;
    yield events;
  }
}

/** True when the fix is in place (exceljs not loaded before this module, or loaded with it). */
export const excelUtf8Fixed = ((): boolean => {
  const cached = require.cache[path];
  if (cached) {
    if (cached.exports === parseSax || (cached.exports as { utf8Fixed?: boolean }).utf8Fixed) return true;
    // parse-sax was loaded already: its users hold the old function, replacing it now would change nothing
    return false;
  }
  require(path); // load it, then swap its exports before any exceljs module requires it
  (parseSax as unknown as { utf8Fixed: boolean }).utf8Fixed = true;
  require.cache[path]!.exports = parseSax;
  return true;
})();

/** exceljs, loaded after the fix (the only way the serdes tasks load it). */
export async function loadExcelJS(): Promise<typeof import('exceljs')> {
  const m = await import('exceljs');
  return ((m as { default?: typeof import('exceljs') }).default ?? m);
}
