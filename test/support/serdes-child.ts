// Child process of operator/plugins/serdes/streaming.test.ts and the serdes bench: generates a large CSV file into
// real local internal storage (streamed), converts it CSV → ION → <each format> → ION → CSV with the serdes tasks,
// samples process.memoryUsage() all along, and prints sizes, timings (MB/s), the peaks and whether the last CSV is
// byte for byte the first (by SHA-256). Args: <csv MiB> <format,...> (formats: json, jsonarray, avro, parquet, xml, excel).
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { PluginDefinition } from '../../operator/plugins/define.js';
import { SERDES_DEFINITIONS } from '../../operator/plugins/serdes/index.js';
import { makeTestContext } from '../../operator/plugins/testing.js';

const [mib, formats] = [Number(process.argv[2] ?? 16), (process.argv[3] ?? '').split(',').filter(Boolean)];
const TARGET = mib * 2 ** 20;
const def = (name: string): PluginDefinition => SERDES_DEFINITIONS.find((d) => d.kestraType.endsWith(name))!;

let peakRss = 0;
let peakHeap = 0;
const sample = (): void => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
};
const timer = setInterval(sample, 10);
sample();
const baseRss = process.memoryUsage().rss;

const HEADER = 'id,name,amount,day,comment\n';
/** CSV rows generated chunk by chunk until `TARGET` bytes: quoted fields with separators and quotes, UTF-8 text. */
function csv(): Readable {
  let bytes = 0;
  let i = 0;
  let headerDone = false;
  return new Readable({
    read() {
      if (bytes >= TARGET) { this.push(null); return; }
      let chunk = headerDone ? '' : HEADER;
      headerDone = true;
      for (let k = 0; k < 2000; k++, i++) {
        chunk += `${i},name ${i % 977} é,${(i % 100000) / 100},2024-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')},"a ""quoted"", comment ${'x'.repeat(i % 40)}!"\n`;
      }
      bytes += Buffer.byteLength(chunk);
      this.push(chunk);
    },
  });
}

async function sha(stream: NodeJS.ReadableStream): Promise<{ hash: string; bytes: number }> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const c of stream as AsyncIterable<Buffer>) { h.update(c); bytes += c.length; }
  return { hash: h.digest('hex'), bytes };
}

const t = makeTestContext({ task: { id: 'conv', type: 'x' } });
const steps: { step: string; inBytes: number; seconds: number; mbPerS: number; records?: number }[] = [];
try {
  const source = await t.stores.storage.put('company/team/flow1/executions/exec1/input.csv', csv());
  const original = await sha(await t.stores.storage.stream(source));
  const run = async (name: string, from: string, props: Record<string, unknown> = {}): Promise<string> => {
    const d = def(name);
    t.ctx.task = { id: 'conv', type: d.type, from, ...props };
    const inBytes = (await sha(await t.stores.storage.stream(from))).bytes;
    const t0 = performance.now();
    const r = await d.runnable.run(t.ctx);
    const seconds = (performance.now() - t0) / 1000;
    if (r.state !== 'SUCCESS') throw new Error(`${name}: ${r.error}`);
    steps.push({ step: name, inBytes, seconds, mbPerS: inBytes / 2 ** 20 / seconds, records: r.metrics?.find((m) => m.name === 'records')?.value ?? Number(r.outputs?.size) });
    return String(r.outputs!.uri ?? (r.outputs!.uris as Record<string, string>).Sheet);
  };
  const ion = await run('CsvToIon', source);
  let last = ion;
  for (const f of formats) {
    if (f === 'json') last = await run('JsonToIon', await run('IonToJson', last));
    else if (f === 'jsonarray') last = await run('JsonToIon', await run('IonToJson', last, { newLine: false }), { newLine: false });
    else if (f === 'avro') last = await run('AvroToIon', await run('IonToAvro', last, { schema: JSON.stringify({ type: 'record', name: 'R', fields: ['id', 'name', 'amount', 'day', 'comment'].map((name) => ({ name, type: 'string' })) }) }));
    else if (f === 'parquet') last = await run('ParquetToIon', await run('IonToParquet', last, { rowGroupSize: 4 * 2 ** 20 }));
    else if (f === 'xml') last = await run('XmlToIon', await run('IonToXml', last), { query: '/items/item' });
    else if (f === 'excel') last = await run('ExcelToIon', await run('IonToExcel', last));
    else throw new Error(`unknown format ${f}`);
  }
  const back = await run('IonToCsv', last);
  const result = await sha(await t.stores.storage.stream(back));
  sample();
  clearInterval(timer);
  process.stdout.write(JSON.stringify({
    csvBytes: original.bytes, same: result.hash === original.hash, outBytes: result.bytes,
    baseRss, peakRss, peakHeap, heapLimit: (await import('node:v8')).getHeapStatistics().heap_size_limit, steps,
  }) + '\n');
} finally {
  clearInterval(timer);
  await t.cleanup();
}
