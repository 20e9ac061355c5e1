// The serdes converters stream: a child process whose V8 heap is capped at 48 MiB of old space and 1 MiB semi-spaces
// (a heap limit of ~51 MiB) converts a 40 MiB CSV file (real local internal storage) CSV → ION → JSON array → ION →
// CSV. A whole-file read (the ~63 MiB ION file or JSON array parsed at once) cannot fit; the child samples
// process.memoryUsage() all along and the last CSV must be the first, byte for byte. Throughput of every format is printed by `BENCH=serdes npm run bench`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../../../test/support/serdes-child.ts', import.meta.url));
// Small young generation: the limit stays well under the files while the child's own code (~40 MiB with tsx) fits.
const HEAP_ARGS = ['--max-old-space-size=48', '--max-semi-space-size=1'];
const HEAP_MIB = 51;
const CSV_MIB = 40;

it(`converts a ${CSV_MIB} MiB CSV file through ION and a JSON array and back under a ~${HEAP_MIB} MiB heap`, () => {
  const child = spawnSync(process.execPath, [...HEAP_ARGS, '--import', 'tsx', CHILD, String(CSV_MIB), 'jsonarray'], {
    encoding: 'utf8', maxBuffer: 16 * 1024 * 1024,
  });
  expect(child.status, child.stderr.slice(-3000)).toBe(0);
  const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
    csvBytes: number; same: boolean; outBytes: number; baseRss: number; peakRss: number; peakHeap: number; heapLimit: number;
    steps: { step: string; inBytes: number; records: number }[];
  };
  expect(out.csvBytes).toBeGreaterThanOrEqual(CSV_MIB * 2 ** 20);
  expect(out.same).toBe(true);
  expect(out.steps.map((s) => s.step)).toEqual(['CsvToIon', 'IonToJson', 'JsonToIon', 'IonToCsv']);
  const records = out.steps[0].records;
  expect(out.steps.every((s) => s.records === records)).toBe(true);
  const ionBytes = out.steps[1].inBytes;
  expect(ionBytes).toBeGreaterThan(out.csvBytes);
  expect(out.heapLimit).toBeLessThan(ionBytes); // the ION file and the JSON array cannot be held in this heap
  // the proof is the heap cap above (the child would die out of memory); the resident set stays below the files too
  expect(out.peakHeap).toBeLessThan(out.heapLimit);
  expect(out.peakRss - out.baseRss).toBeLessThan(ionBytes * 0.75);
}, 300_000);
