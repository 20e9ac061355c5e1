// ForEachItem's `_split` streams its items file: a child process whose heap is capped at 64 MiB splits a 160 MiB
// items file (real local internal storage) into its batches, which a whole-file read (a 160 MiB string) cannot do.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../support/split-child.ts', import.meta.url));
const HEAP_MIB = 64;
const LINES = 1_600_000;
const LINE_BYTES = 100;
const ROWS = 100_000;

it(`splits a ${(LINES * LINE_BYTES) / 2 ** 20 | 0} MiB items file under a ${HEAP_MIB} MiB heap, ${ROWS} rows a batch`, () => {
  const child = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MIB}`, '--import', 'tsx', CHILD, String(ROWS), String(LINES), String(LINE_BYTES)], {
    encoding: 'utf8', maxBuffer: 16 * 1024 * 1024,
  });
  expect(child.status, child.stderr.slice(-2000)).toBe(0);
  const out = JSON.parse(child.stdout) as { state: string; numberOfBatches: number; firsts: string[]; total: number; itemsBytes: number; heapLimit: number };
  expect(out.itemsBytes).toBe(LINES * LINE_BYTES);
  expect(out.heapLimit).toBeLessThan(out.itemsBytes); // the file cannot fit in this heap
  expect(out.state).toBe('SUCCESS');
  expect(out.numberOfBatches).toBe(LINES / ROWS);
  expect(out.firsts).toEqual(Array.from({ length: LINES / ROWS }, (_, b) => `item-${String(b * ROWS).padStart(10, '0')}`));
  expect(out.total).toBe(LINES * LINE_BYTES);
}, 180_000);
