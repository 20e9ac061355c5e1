// ForEachItem's `_split` streams its items file: a child process whose heap is capped at ~51 MiB (48 MiB of old space,
// 1 MiB semi-spaces) splits a 57 MiB items file (real local internal storage) into its batches, which a whole-file read
// (a 57 MiB string) cannot do.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../support/split-child.ts', import.meta.url));
const HEAP_ARGS = ['--max-old-space-size=48', '--max-semi-space-size=1'];
const HEAP_MIB = 51;
const LINES = 600_000;
const LINE_BYTES = 100;
const ROWS = 100_000;

it(`splits a ${(LINES * LINE_BYTES) / 2 ** 20 | 0} MiB items file under a ~${HEAP_MIB} MiB heap, ${ROWS} rows a batch`, () => {
  const child = spawnSync(process.execPath, [...HEAP_ARGS, '--import', 'tsx', CHILD, String(ROWS), String(LINES), String(LINE_BYTES)], {
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
