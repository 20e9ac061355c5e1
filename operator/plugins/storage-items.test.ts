// Tests of core.storage.FilterItems and DeduplicateItems over real row files in the local internal storage.
import { afterEach, describe, expect, it } from 'vitest';
import { deduplicateItemsPlugin, filterItemsPlugin } from './storage-items.js';
import { makeTestContext, type TestContext } from './testing.js';
import { parseIon } from '../storage/ion.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; delete process.env.STORAGE_MAX_DISTINCT_KEYS; });

const ROWS = [
  { id: 1, email: 'kelly@example.com', price: 20 },
  { id: 2, email: 'miguel@example.net', price: 14 },
  { id: 3, email: 'kelly@example.com', price: 20 },
  { id: 4, email: 'jess@example.com', price: null },
].map((r) => JSON.stringify(r)).join('\n') + '\n';

async function run(plugin: typeof filterItemsPlugin, props: Record<string, unknown>, content = ROWS) {
  t = makeTestContext({ task: { id: 'f', type: plugin.type, from: '', ...props } });
  t.ctx.task.from = await t.stores.storage.put('company/team/flow1/executions/exec1/rows.ion', Buffer.from(content));
  const r = await plugin.run(t.ctx);
  const ids = r.state === 'SUCCESS'
    ? (await t.stores.storage.get(r.outputs!.uri as string)).toString().split('\n').filter(Boolean).map((l) => (parseIon(l) as { id: unknown }).id)
    : [];
  return { r, ids };
}

describe('FilterItems', () => {
  it('keeps the matching items (INCLUDE, the default) with their fields as variables', async () => {
    const { r, ids } = await run(filterItemsPlugin, { filterCondition: "{{ email == 'kelly@example.com' }}" });
    expect(ids).toEqual([1, 3]);
    expect(r.outputs).toMatchObject({ processedItemsTotal: 4, droppedItemsTotal: 2 });
    expect(r.outputs?.uri).toMatch(/\/tasks\/f\/tr1\/[0-9a-f-]+\.ion$/);
  });

  it('EXCLUDE drops the matching ones', async () => {
    expect((await run(filterItemsPlugin, { filterCondition: '{{ id > 2 }}', filterType: 'EXCLUDE' })).ids).toEqual([1, 2]);
  });

  it('errorOrNullBehavior: FAIL (default) names the item; INCLUDE / EXCLUDE decide for null or failing items', async () => {
    const cond = '{{ price }}';
    expect((await run(filterItemsPlugin, { filterCondition: cond })).r.error).toMatch(/returned null on item 4/);
    expect((await run(filterItemsPlugin, { filterCondition: cond, errorOrNullBehavior: 'INCLUDE' })).ids).toEqual([1, 2, 3, 4]);
    expect((await run(filterItemsPlugin, { filterCondition: cond, errorOrNullBehavior: 'EXCLUDE' })).ids).toEqual([1, 2, 3]);
    expect((await run(filterItemsPlugin, { filterCondition: '{{ nope.x }}', errorOrNullBehavior: 'EXCLUDE' })).ids).toEqual([]);
  });

  it('refuses an unknown filterType and a line that is not an ION row; reads Ion text (unquoted names, timestamps)', async () => {
    expect((await run(filterItemsPlugin, { filterCondition: '{{ true }}', filterType: 'KEEP' })).r.error).toMatch(/filterType.*INCLUDE, EXCLUDE/);
    expect((await run(filterItemsPlugin, { filterCondition: '{{ true }}' }, '{id:\n')).r.error).toMatch(/Item 1 is not an ION row/);
    const ion = '{id:1,at:2024-01-31T10:00:00Z}\n{id:2,at:2023-01-01}\n';
    const { r } = await run(filterItemsPlugin, { filterCondition: "{{ at == '2024-01-31T10:00:00Z' and id == 1 }}" }, ion.replace(/\n$/, '\n'));
    expect(r.error).toBeUndefined();
    expect(r.outputs).toMatchObject({ processedItemsTotal: 2, droppedItemsTotal: 1 });
  });
});

describe('DeduplicateItems', () => {
  it('keeps the last item of each key, in file order', async () => {
    const { r, ids } = await run(deduplicateItemsPlugin, { expr: '{{ email }}' });
    expect(ids).toEqual([2, 3, 4]);
    expect(r.outputs).toMatchObject({ numKeys: 3, processedItemsTotal: 4, droppedItemsTotal: 1 });
  });

  it('stops at STORAGE_MAX_DISTINCT_KEYS, naming it', async () => {
    process.env.STORAGE_MAX_DISTINCT_KEYS = '2';
    expect((await run(deduplicateItemsPlugin, { expr: '{{ id }}' })).r.error).toMatch(/STORAGE_MAX_DISTINCT_KEYS/);
  });
});
