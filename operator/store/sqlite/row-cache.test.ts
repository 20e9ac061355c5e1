// The heads of flows and namespaces are cached (RowCache): no query per read while nothing writes, a write of the same
// store seen at once, a write of another connection (another process) seen from the next turn of the event loop or
// the next request (read-scope.ts).
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, SqliteFlowStore, SqliteNamespaceStore } from './index.js';
import { flowSource, sampleFlow, tempDir } from './test-fixtures.js';
import { newReadScope } from '../read-scope.js';

let tmp: ReturnType<typeof tempDir>;
const open: Database.Database[] = [];
beforeEach(() => { tmp = tempDir('row-cache-'); });
afterEach(() => { for (const db of open.splice(0)) db.close(); tmp.remove(); });

const nextTurn = () => new Promise((r) => setImmediate(r));

/** A connection to the test database whose statements count the queries they run (reads and writes alike). */
function countingConnection(): { db: Database.Database; queries: () => number } {
  const db = openDatabase(join(tmp.dir, 'store.db'));
  open.push(db);
  let n = 0;
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const stmt = prepare(sql);
    for (const m of ['get', 'all', 'run'] as const) {
      const f = stmt[m].bind(stmt) as (...a: unknown[]) => unknown;
      (stmt as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => { n++; return f(...a); };
    }
    return stmt;
  }) as typeof db.prepare;
  return { db, queries: () => n };
}

function otherConnection(): Database.Database {
  const db = openDatabase(join(tmp.dir, 'store.db'));
  open.push(db);
  return db;
}

describe('flow heads', () => {
  it('answers repeated reads without a query, sees its own writes at once and another connection\'s from the next turn', async () => {
    const { db, queries } = countingConnection();
    const flows = new SqliteFlowStore(db);
    const flow = sampleFlow('company.team', 'hello');
    await flows.save(flow, flowSource(flow));
    expect((await flows.get('company.team', 'hello'))?.revision).toBe(1);
    await nextTurn();
    expect((await flows.get('company.team', 'hello'))?.revision).toBe(1);
    const before = queries();
    for (let i = 0; i < 100; i++) expect((await flows.get('company.team', 'hello'))?.revision).toBe(1);
    expect((await flows.get('company.team', 'absent'))).toBeUndefined();
    expect((await flows.get('company.team', 'absent'))).toBeUndefined();
    // At most the once-per-turn data_version read and one head query for the absent flow (data_version is a pragma,
    // counted by this connection's prepare too).
    expect(queries() - before).toBeLessThanOrEqual(2);

    // Its own write: seen in the same turn.
    const changed = sampleFlow('company.team', 'hello');
    await flows.save(changed, flowSource(changed, '\ndescription: changed'));
    expect((await flows.get('company.team', 'hello'))?.revision).toBe(2);
    await flows.delete('company.team', 'hello');
    expect(await flows.get('company.team', 'hello')).toBeUndefined();
    expect((await flows.get('company.team', 'hello', 2))?.deleted).toBe(true);

    // Another connection's write (as another process would): seen from the next turn.
    const flow3 = sampleFlow('company.team', 'other');
    await flows.save(flow3, flowSource(flow3));
    expect((await flows.get('company.team', 'other'))?.revision).toBe(1);
    await nextTurn();
    expect((await flows.get('company.team', 'other'))?.revision).toBe(1);
    otherConnection().prepare('UPDATE flows SET deleted = 1 WHERE namespace = ? AND id = ?').run('company.team', 'other');
    await nextTurn();
    expect(await flows.get('company.team', 'other')).toBeUndefined();
    // ... or at once by a new request (the API starts a read scope per request).
    otherConnection().prepare('UPDATE flows SET deleted = 0 WHERE namespace = ? AND id = ?').run('company.team', 'other');
    expect(await flows.get('company.team', 'other')).toBeUndefined(); // same scope: the earlier look stands
    newReadScope();
    expect((await flows.get('company.team', 'other'))?.revision).toBe(1);
  });
});

describe('namespace heads', () => {
  it('answers repeated chains without a query and sees writes of its own at once, of another connection next turn', async () => {
    const { db, queries } = countingConnection();
    const namespaces = new SqliteNamespaceStore(db);
    await namespaces.put({ id: 'company', variables: { v: 1 }, pluginDefaults: [] });
    expect((await namespaces.chain('company.team')).map((r) => r.variables)).toEqual([{ v: 1 }]);
    await nextTurn();
    await namespaces.chain('company.team');
    const before = queries();
    for (let i = 0; i < 100; i++) await namespaces.chain('company.team');
    expect(queries() - before).toBeLessThanOrEqual(1);

    await namespaces.put({ id: 'company', variables: { v: 2 }, pluginDefaults: [] });
    expect((await namespaces.chain('company.team')).map((r) => r.variables)).toEqual([{ v: 2 }]);
    await namespaces.put({ id: 'company.team', variables: { t: 1 }, pluginDefaults: [] });
    expect((await namespaces.chain('company.team')).map((r) => r.id)).toEqual(['company.team', 'company']);

    otherConnection().prepare('DELETE FROM namespaces WHERE id = ?').run('company');
    await nextTurn();
    expect((await namespaces.chain('company.team')).map((r) => r.id)).toEqual(['company.team']);
    await namespaces.delete('company.team');
    expect(await namespaces.chain('company.team')).toEqual([]);
  });
});
