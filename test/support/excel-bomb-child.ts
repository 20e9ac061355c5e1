// Child process of operator/plugins/serdes/excel-bounds.test.ts: builds an .xlsx whose xl/sharedStrings.xml is a
// deflate bomb of <MiB> MiB (the zip declares it 100 bytes), runs serdes.excel.ExcelToIon on it from real local
// internal storage (the bound is the parent's SERDES_MAX_SHARED_STRINGS_BYTES), samples the V8 heap all along and
// prints the task's state, error and the heap peaks as one JSON line. Args: <MiB> [chars per shared string] [rich].
import { getHeapStatistics } from 'node:v8';
import { excelToIon } from '../../operator/plugins/serdes/excel.js';
import { bombStringItems, deflatePart, handmadeXlsx } from '../../operator/plugins/serdes/xlsx-fixtures.js';
import { makeTestContext } from '../../operator/plugins/testing.js';

const [mib, chars, rich] = [Number(process.argv[2] ?? 256), Number(process.argv[3] ?? 32), process.argv[4] === 'rich'];
const sharedStrings = { ...(await deflatePart('xl/sharedStrings.xml', bombStringItems(mib, chars, rich))), declared: 100 };
const xlsx = await handmadeXlsx({ strings: 0, chars: 0, rows: 2, sharedStrings });
const t = makeTestContext({ task: { id: 'conv', type: excelToIon.type } });
let peakHeap = 0;
const sample = (): void => { peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed); };
try {
  const from = await t.stores.storage.put('company/team/flow1/executions/exec1/bomb.xlsx', xlsx);
  t.ctx.task = { id: 'conv', type: excelToIon.type, from };
  global.gc?.();
  const baseHeap = process.memoryUsage().heapUsed;
  const timer = setInterval(sample, 5);
  const r = await excelToIon.runnable.run(t.ctx);
  sample();
  clearInterval(timer);
  process.stdout.write(JSON.stringify({
    state: r.state, error: r.error, fileBytes: xlsx.length, inflatedBytes: sharedStrings.size, baseHeap, peakHeap,
    heapLimit: getHeapStatistics().heap_size_limit,
  }) + '\n');
} finally {
  await t.cleanup();
}
