// Group commit of the execution store (group-commit.ts): the writes of one turn share one transaction, each settles
// after the commit (its change event first), a write that fails alone rejects alone, a locked database rejects the
// group and writes nothing.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTransient } from '../../faults.js';
import { ConflictError, type WatchEvent } from '../types.js';
import { openDatabase } from './db.js';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { sampleExecution, tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;
beforeEach(() => { tmp = tempDir('group-'); stores = openEmbeddedStores(tmp.dir, { busyTimeoutMs: 10 }); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('group commit', () => {
  it('commits the creates and updates of one turn in one transaction; each resolves after it, its event first', async () => {
    const { stats } = stores.executions.group;
    const before = { ...stats };
    const events: string[] = [];
    stores.executions.watch((e: WatchEvent) => events.push(`${e.type}:${e.execution.id}`));
    const created = await Promise.all(['a', 'b', 'c', 'd'].map((id) => stores.executions.create(sampleExecution(id)).then((s) => {
      events.push(`resolved:${id}`);
      return s;
    })));
    expect(stats.commits - before.commits).toBe(1);
    expect(stats.writes - before.writes).toBe(4);
    // Every change event (in write order) before any caller hears of its write.
    expect(events).toEqual(['ADDED:a', 'ADDED:b', 'ADDED:c', 'ADDED:d', 'resolved:a', 'resolved:b', 'resolved:c', 'resolved:d']);
    // Committed: another connection reads them.
    const other = openDatabase(join(tmp.dir, 'store.db'));
    expect((other.prepare('SELECT count(*) AS n FROM executions').get() as { n: number }).n).toBe(4);
    other.close();
    const updated = await Promise.all(created.map((s) => stores.executions.update({ ...s.execution, state: { ...s.execution.state, current: 'RUNNING' } }, s.resourceVersion)));
    expect(stats.commits - before.commits).toBe(2);
    expect(updated.map((u) => u.resourceVersion)).toEqual([2, 2, 2, 2]);
  });

  it('a stale write of the group rejects alone and leaves nothing; the others commit', async () => {
    const a = await stores.executions.create(sampleExecution('a'));
    const b = await stores.executions.create(sampleExecution('b'));
    const results = await Promise.allSettled([
      stores.executions.update({ ...a.execution, state: { ...a.execution.state, current: 'RUNNING' } }, a.resourceVersion),
      stores.executions.update({ ...b.execution, state: { ...b.execution.state, current: 'RUNNING' } }, 7),
      stores.executions.update({ ...b.execution, state: { ...b.execution.state, current: 'KILLED' } }, b.resourceVersion),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    expect((await stores.executions.get('a'))!.execution.state.current).toBe('RUNNING');
    expect(await stores.executions.get('b')).toMatchObject({ resourceVersion: 2, execution: { state: { current: 'KILLED' } } });
  });

  it('a database locked by another process rejects the whole group (transient), writes nothing, and the retry commits', async () => {
    const lock = openDatabase(join(tmp.dir, 'store.db'));
    lock.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled(['a', 'b'].map((id) => stores.executions.create(sampleExecution(id))));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(isTransient((results[0] as PromiseRejectedResult).reason)).toBe(true);
    lock.exec('ROLLBACK');
    lock.close();
    expect(await stores.executions.get('a')).toBeUndefined();
    await Promise.all(['a', 'b'].map((id) => stores.executions.create(sampleExecution(id))));
    expect((await stores.executions.get('b'))!.resourceVersion).toBe(1);
  });
});
