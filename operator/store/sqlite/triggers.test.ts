// Trigger state on a real SQLite file: compare-and-set versions, listing by namespace prefix, durability, marks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../types.js';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('trigger state store', () => {
  it('creates with version 0, updates with the version read, rejects stale writes', async () => {
    const t = stores.triggers;
    const a = await t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: { last: '2026-01-01T00:00:00Z' } }, 0);
    expect(a.version).toBe(1);
    await expect(t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: {} }, 0)).rejects.toBeInstanceOf(ConflictError);
    const b = await t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: { last: 'x' }, disabled: true }, 1);
    expect(b).toMatchObject({ version: 2, disabled: true, state: { last: 'x' } });
    await expect(t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: {} }, 1)).rejects.toBeInstanceOf(ConflictError);
  });

  it('lists by flow and by namespace including child namespaces only', async () => {
    const t = stores.triggers;
    for (const [ns, f] of [['co', 'a'], ['co.sales', 'b'], ['cox', 'c'], ['co_x', 'd']]) await t.put({ namespace: ns!, flowId: f!, triggerId: 't', state: {} }, 0);
    expect((await t.list({ namespace: 'co' })).map((r) => r.flowId)).toEqual(['a', 'b']);
    expect((await t.list({ namespace: 'co.sales', flowId: 'b' })).map((r) => r.flowId)).toEqual(['b']);
    expect(await t.list()).toHaveLength(4);
  });

  it('survives a reopen; marks are recorded once', async () => {
    await stores.triggers.put({ namespace: 'n', flowId: 'f', triggerId: 't', state: { n: 1 } }, 0);
    expect(await stores.triggers.mark('flow-trigger', 'exec1')).toBe(true);
    expect(await stores.triggers.mark('flow-trigger', 'exec1')).toBe(false);
    await stores.close();
    stores = openEmbeddedStores(tmp.dir);
    expect((await stores.triggers.get('n', 'f', 't'))?.state).toEqual({ n: 1 });
    expect(await stores.triggers.isMarked('flow-trigger', 'exec1')).toBe(true);
    expect(await stores.triggers.isMarked('flow-trigger', 'exec2')).toBe(false);
    expect(await stores.triggers.delete('n', 'f', 't')).toBe(true);
  });

  it('forgets a mark on unmark, and purges the marks of one scope made before a date, bounded per call', async () => {
    const t = stores.triggers;
    for (const k of ['a', 'b', 'c']) await t.mark('s3', k);
    await t.mark('other', 'a');
    await t.unmark('s3', 'b');
    await t.unmark('s3', 'never');
    expect(await t.isMarked('s3', 'b')).toBe(false);
    expect(await t.mark('s3', 'b')).toBe(true); // can be marked again
    expect(await t.purgeMarks('s3', '2000-01-01T00:00:00.000Z')).toBe(0);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(await t.purgeMarks('s3', later, 2)).toBe(2);
    expect(await t.purgeMarks('s3', later)).toBe(1);
    expect(await t.isMarked('other', 'a')).toBe(true);
  });
});
