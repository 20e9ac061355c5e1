// The memory of serdes.excel.ExcelToIon stays bounded on a hostile workbook: a child process whose V8 heap is capped
// at 64 MiB reads an .xlsx whose xl/sharedStrings.xml is a deflate bomb (512 MiB of XML in a 1-2 MB file, declared
// 100 bytes): cached whole, as exceljs does, it cannot fit in that heap; the task must fail naming
// SERDES_MAX_SHARED_STRINGS_BYTES, with the heap it grew by a small multiple of the setting (sampled all along).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('../../../test/support/excel-bomb-child.ts', import.meta.url));
const BOUND = 4 * 1024 * 1024;

it.each([['plain strings', '32', ''], ['rich-text strings', '4', 'rich']])(
  'a 512 MiB shared-strings bomb of %s fails at SERDES_MAX_SHARED_STRINGS_BYTES under a 64 MiB heap', (_shape, chars, rich) => {
    const child = spawnSync(process.execPath, ['--max-old-space-size=64', '--import', 'tsx', CHILD, '512', chars, rich], {
      encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, env: { ...process.env, SERDES_MAX_SHARED_STRINGS_BYTES: String(BOUND) },
    });
    expect(child.status, child.stderr.slice(-3000)).toBe(0); // an unbounded table dies out of memory here
    const out = JSON.parse(child.stdout.trim().split('\n').pop()!) as {
      state: string; error: string; fileBytes: number; inflatedBytes: number; baseHeap: number; peakHeap: number; heapLimit: number;
    };
    expect(out.state).toBe('FAILED');
    expect(out.error).toMatch(/shared strings, styles and workbook parts take more bytes: over the limit of 4194304 .*setting SERDES_MAX_SHARED_STRINGS_BYTES/);
    expect(out.inflatedBytes).toBeGreaterThan(out.heapLimit * 4); // the bomb could not be held
    expect(out.fileBytes).toBeLessThan(out.inflatedBytes / 100);
    expect(out.peakHeap - out.baseHeap).toBeLessThan(8 * BOUND);
  }, 120_000);
