// ForEachItem's `_split` batch semantics (core.storage.Split's splitter, Kestra's): rows, bytes and partitions over real
// local internal storage, deterministic batch file names, empty lines kept, and the task-run bound on batches.
import { afterEach, expect, it } from 'vitest';
import { FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import { makeTestContext, type TestContext } from '../plugins/testing.js';
import { batchMode, splitPlugin } from './split.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; delete process.env.MAX_TASK_RUNS_PER_EXECUTION; });

const ITEMS = 'company/team/flow1/executions/exec1/inputs/items.txt';

async function split(content: string, batch: Record<string, unknown> | undefined): Promise<{ r: Awaited<ReturnType<typeof splitPlugin.run>>; batches: string[] }> {
  t = makeTestContext({ task: { id: 'each_split', type: FOR_EACH_ITEM_SPLIT, items: `kestra:///${ITEMS}`, ...(batch ? { batch } : {}) } });
  await t.stores.storage.put(ITEMS, Buffer.from(content));
  const r = await splitPlugin.run(t.ctx);
  if (r.state !== 'SUCCESS') return { r, batches: [] };
  const uris = (await t.stores.storage.get(String(r.outputs?.splits))).toString().split('\n').filter(Boolean);
  expect(uris.map((u) => u.slice(u.lastIndexOf('/') + 1))).toEqual(uris.map((_, i) => `batch-${i + 1}.txt`));
  return { r, batches: await Promise.all(uris.map(async (u) => (await t!.stores.storage.get(u)).toString())) };
}

it.each([
  ['default: one row a batch', undefined, ['a\n', 'b\n', 'c\n', 'd\n', 'e\n']],
  ['rows: 2', { rows: 2 }, ['a\nb\n', 'c\nd\n', 'e\n']],
  ['rows as a template', { rows: '{{ 1 + 2 }}' }, ['a\nb\nc\n', 'd\ne\n']],
  ['bytes: 4B (a new batch once the current one holds the bytes)', { bytes: '4B' }, ['a\nb\n', 'c\nd\n', 'e\n']],
  ['bytes: 3 (a batch may pass the bound by its last row)', { bytes: 3 }, ['a\nb\n', 'c\nd\n', 'e\n']],
  ['partitions: 2 (rows dealt round-robin)', { partitions: 2 }, ['a\nc\ne\n', 'b\nd\n']],
  ['partitions beyond the items: no empty batch', { partitions: 9 }, ['a\n', 'b\n', 'c\n', 'd\n', 'e\n']],
])('%s', async (_name, batch, expected) => {
  const { r, batches } = await split('a\nb\nc\nd\ne\n', batch);
  expect(r.outputs?.numberOfBatches).toBe(expected.length);
  expect(batches).toEqual(expected);
});

it('keeps empty lines inside the file, not a last newline; an empty file has no batch', async () => {
  expect((await split('a\n\nb', { rows: 1 })).batches).toEqual(['a\n', '\n', 'b\n']);
  await t!.cleanup(); t = undefined;
  expect((await split('', undefined)).r.outputs?.numberOfBatches).toBe(0);
});

it('more batches than MAX_TASK_RUNS_PER_EXECUTION fail the split, naming the setting', async () => {
  process.env.MAX_TASK_RUNS_PER_EXECUTION = '10';
  await expect(split(Array.from({ length: 11 }, (_, i) => `i${i}`).join('\n'), undefined))
    .rejects.toThrow(/ForEachItem 'each' would create 11 batches: .*MAX_TASK_RUNS_PER_EXECUTION/);
});

it.each([
  [{ rows: 0 }, 'batch.rows: expected an integer >= 1'],
  [{ partitions: 'x' }, 'batch.partitions: expected an integer >= 1'],
  [{ bytes: '1 parsec' }, 'batch.bytes'],
])('refuses %j by name', (batch, message) => {
  expect(() => batchMode(batch)).toThrow(message);
});
