// Flow revisions and search on a real SQLite file.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedStores, SqliteFlowStore, openDatabase, openEmbeddedStores } from './index.js';
import { flowSource, sampleFlow, tempDir } from './test-fixtures.js';
import { newReadScope } from '../read-scope.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('SqliteFlowStore revisions', () => {
  it('creates a revision only when the source changes', async () => {
    const flow = sampleFlow('company.team', 'hello');
    const first = await stores.flows.save(flow, flowSource(flow));
    expect(first.created).toBe(true);
    expect(first.record.revision).toBe(1);
    expect(flow.revision).toBe(1);

    const same = await stores.flows.save(sampleFlow('company.team', 'hello'), flowSource(flow));
    expect(same.created).toBe(false);
    expect(same.record.revision).toBe(1);

    const changed = sampleFlow('company.team', 'hello', 'now described');
    const second = await stores.flows.save(changed, flowSource(changed, '\ndescription: now described'));
    expect(second).toMatchObject({ created: true, record: { revision: 2 } });
    expect(second.record.flow.revision).toBe(2);

    const revisions = await stores.flows.revisions('company.team', 'hello');
    expect(revisions.map((r) => r.revision)).toEqual([1, 2]);
    expect((await stores.flows.get('company.team', 'hello'))?.revision).toBe(2);
    expect((await stores.flows.get('company.team', 'hello', 1))?.source).toBe(flowSource(flow));
  });

  it('hides a deleted flow and continues numbering when it is saved again', async () => {
    const flow = sampleFlow('company', 'f');
    await stores.flows.save(flow, flowSource(flow));
    expect(await stores.flows.delete('company', 'f')).toBe(true);
    expect(await stores.flows.delete('company', 'f')).toBe(false);
    expect(await stores.flows.delete('company', 'missing')).toBe(false);
    expect(await stores.flows.get('company', 'f')).toBeUndefined();
    expect((await stores.flows.get('company', 'f', 1))?.deleted).toBe(true);
    expect(await stores.flows.all()).toEqual([]);

    const again = await stores.flows.save(flow, flowSource(flow));
    expect(again).toMatchObject({ created: true, record: { revision: 2 } });
    expect((await stores.flows.get('company', 'f'))?.revision).toBe(2);
    expect((await stores.flows.all()).map((r) => r.id)).toEqual(['f']);
  });
});

describe('SqliteFlowStore search', () => {
  beforeEach(async () => {
    for (const [ns, id, description] of [
      ['company', 'a', 'Loads the warehouse'], ['company.team', 'b', undefined], ['company.team.sub', 'c', undefined],
      ['companyx', 'd', undefined], ['other', 'warehouse-sync', undefined],
    ] as const) {
      const flow = sampleFlow(ns, id, description);
      await stores.flows.save(flow, flowSource(flow, description ? `\ndescription: ${description}` : ''));
    }
  });

  it('matches a namespace and its children on dotted segments', async () => {
    const page = await stores.flows.search({ namespace: 'company' });
    expect(page.results.map((r) => `${r.namespace}/${r.id}`)).toEqual(['company/a', 'company.team/b', 'company.team.sub/c']);
    expect(page.total).toBe(3);
    expect((await stores.flows.search({ namespace: 'company.team' })).total).toBe(2);
  });

  it('matches q on id, namespace and description, case-insensitively', async () => {
    const ids = async (q: string) => (await stores.flows.search({ q })).results.map((r) => r.id);
    expect(await ids('WAREHOUSE')).toEqual(['a', 'warehouse-sync']);
    expect(await ids('companyx')).toEqual(['d']);
  });

  it('pages with limit and offset and reports the total', async () => {
    const page = await stores.flows.search({ limit: 2, offset: 1 });
    expect(page.results.map((r) => r.id)).toEqual(['b', 'c']);
    expect(page.total).toBe(5);
  });

  it('parses a revision once (a frozen flow shared by its readers); the latest revision and the deleted flag of another connection are seen by the next request', async () => {
    const flow = sampleFlow('company', 'cached');
    await stores.flows.save(flow, flowSource(flow));
    const a = (await stores.flows.get('company', 'cached'))!;
    const b = (await stores.flows.get('company', 'cached', 1))!;
    expect(b.flow).toBe(a.flow);
    expect(Object.isFrozen(a.flow)).toBe(true);
    expect(() => { (a.flow as { description?: string }).description = 'changed'; }).toThrow(TypeError);
    // Another connection (another process on the same file) saves a revision and deletes the flow: seen at once.
    const db = openDatabase(join(tmp.dir, 'store.db'));
    const other = new SqliteFlowStore(db);
    const changed = sampleFlow('company', 'cached', 'second');
    await other.save(changed, flowSource(changed, '\ndescription: second'));
    newReadScope(); // as each API request does: what was committed before it is seen (row-cache.test.ts)
    expect((await stores.flows.get('company', 'cached'))).toMatchObject({ revision: 2, flow: { description: 'second' } });
    expect((await stores.flows.get('company', 'cached', 1))!.flow).toBe(a.flow);
    await other.delete('company', 'cached');
    db.close();
    newReadScope();
    expect(await stores.flows.get('company', 'cached')).toBeUndefined();
    expect(await stores.flows.get('company', 'cached', 2)).toMatchObject({ revision: 2, deleted: true });
  });
});
