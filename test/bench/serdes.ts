// Serdes bench: a generated CSV file converted CSV → ION → each format → ION → CSV by the serdes tasks over real local
// internal storage, in a child process with a 256 MiB old-space cap (the 64 MiB proof is operator/plugins/serdes/streaming.test.ts; Parquet row groups and exceljs need room to run without GC thrash) (test/support/serdes-child.ts); prints MB/s of every
// step (input bytes / time) and the peak RSS growth and heap. BENCH=serdes; BENCH_SERDES_MIB (default 200) sizes the
// CSV, BENCH_SERDES_EXCEL_MIB (default 16) the Excel run (exceljs is the slowest step by far).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('../support/serdes-child.ts', import.meta.url));

function run(mib: number, formats: string): void {
  const child = spawnSync(process.execPath, ['--max-old-space-size=256', '--import', 'tsx', CHILD, String(mib), formats], { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
  if (child.status !== 0) {
    console.log(`serdes ${formats}: child failed (${child.status}): ${child.stderr.slice(-1500)}`);
    return;
  }
  const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
    csvBytes: number; same: boolean; baseRss: number; peakRss: number; peakHeap: number;
    steps: { step: string; inBytes: number; seconds: number; mbPerS: number; records: number }[];
  };
  const mb = (n: number) => (n / 2 ** 20).toFixed(1);
  console.log(`serdes ${mb(out.csvBytes)} MiB CSV via [${formats}]: round trip identical=${out.same}, peak RSS +${mb(out.peakRss - out.baseRss)} MiB, peak heap ${mb(out.peakHeap)} MiB`);
  for (const s of out.steps) console.log(`  ${s.step.padEnd(14)} ${mb(s.inBytes).padStart(7)} MiB in ${s.seconds.toFixed(2).padStart(6)} s  ${s.mbPerS.toFixed(1).padStart(6)} MB/s  ${s.records} records`);
}

export async function runSerdesBench(): Promise<void> {
  run(Number(process.env.BENCH_SERDES_MIB ?? 200), 'json,jsonarray,avro,parquet,xml');
  run(Number(process.env.BENCH_SERDES_EXCEL_MIB ?? 16), 'excel');
}
