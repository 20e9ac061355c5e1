// The leader's sweeper and the store's read-through on the Kubernetes API test server with a real PostgreSQL: finished
// executions archived then deleted (TTL 0) while live ones stay; an unreachable database only delays (the resource
// stays, the next pass completes); create of an archived id returns the archived record instead of running it again;
// a resource changed after it was archived is not deleted at the stale version.
import { CustomObjectsApi } from '@kubernetes/client-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeTestServer, type KubeTestServer } from '../../../test/kube/test-server/index.js';
import { freePort, startPostgres } from '../../../test/support/services.js';
import type { Execution, ExecutionState } from '../../core/types.js';
import { isTransient } from '../../faults.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import { executionName, GROUP, VERSION } from '../names.js';
import { openKubeStores, type KubeStores } from '../store/index.js';
import { PgExecutionArchive } from './pg-archive.js';
import { ExecutionSweeper } from './sweeper.js';

const NS = 'sweeper-test';
let srv: KubeTestServer;
let pgSvc: Awaited<ReturnType<typeof startPostgres>>;
let pool: pg.Pool;
let archive: PgExecutionArchive;
let stores: KubeStores;
let local: EmbeddedStores;
const tmp = tempDir('sweeper-');

beforeAll(async () => {
  [srv, pgSvc] = await Promise.all([startKubeTestServer(), startPostgres()]);
  pool = new pg.Pool({ connectionString: pgSvc.url, max: 4 });
  archive = new PgExecutionArchive(pool);
  await archive.init();
  local = openEmbeddedStores(tmp.dir);
  stores = await openKubeStores({ kc: srv.kubeConfig(), namespace: NS, logs: local.logs, storage: local.storage, resyncMs: 0, archive });
  await stores.ready();
}, 60_000);
afterAll(async () => {
  await stores?.close();
  await local?.close();
  await pool?.end();
  await srv?.close();
  await pgSvc?.stop();
  tmp.remove();
});

const exec = (id: string, state: ExecutionState): Execution => ({
  id, namespace: 'company.team', flowId: 'hello', flowRevision: 1, originalId: id, labels: [], inputs: {}, taskRunList: [],
  state: { current: state, histories: [{ state, date: '2026-01-01T00:00:00.000Z' }], startDate: '2026-01-01T00:00:00.000Z', ...(state === 'RUNNING' ? {} : { endDate: '2026-01-01T00:00:01.000Z' }) },
});
const resource = (id: string) => srv.kubeConfig().makeApiClient(CustomObjectsApi)
  .getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'executions', name: executionName(id) })
  .then(() => true, (err: { code?: number }) => { if (err.code === 404) return false; throw err; });
const sweeper = (a = archive, ttlSeconds = 0) => new ExecutionSweeper({ store: stores.executions, archive: a, ttlSeconds, intervalMs: 60_000, clock: () => new Date('2026-01-01T00:10:00Z') });

describe('ExecutionSweeper', () => {
  it('archives finished executions and deletes them after the TTL; live ones stay; reads go through to the archive', async () => {
    await stores.executions.create(exec('done-1', 'SUCCESS'));
    await stores.executions.create(exec('live-1', 'RUNNING'));
    const keep = sweeper(archive, 3600);
    expect(await keep.sweep()).toEqual({ archived: 1, deleted: 0 });
    expect(await keep.sweep(), 'archived at this version already').toEqual({ archived: 0, deleted: 0 });
    await keep.stop();
    expect(await resource('done-1')).toBe(true);
    const s = sweeper();
    expect(await s.sweep(), 'a new leader reads what is archived: deletes without archiving again').toEqual({ archived: 0, deleted: 1 });
    await s.stop();
    expect(await resource('done-1')).toBe(false);
    expect(await resource('live-1')).toBe(true);
    expect((await stores.executions.get('done-1'))?.execution.state.current).toBe('SUCCESS');
    // Creating the id again (a trigger or a parent retrying) answers the archived record: nothing runs twice.
    const again = await stores.executions.create(exec('done-1', 'CREATED'));
    expect(again.execution.state.current).toBe('SUCCESS');
    expect(await resource('done-1')).toBe(false);
    const page = await stores.executions.search({ namespace: 'company.team' });
    expect(page.results.map((e) => e.id).sort()).toEqual(['done-1', 'live-1']);
    expect(page.total).toBe(2);
  });

  it('an unreachable database only delays: the pass fails as transient, the resource stays, the next pass deletes it', async () => {
    await stores.executions.create(exec('done-2', 'FAILED'));
    const down = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`, max: 1 });
    const broken = sweeper(new PgExecutionArchive(down));
    const err = await broken.sweep().catch((e: unknown) => e);
    expect(isTransient(err), String(err)).toBe(true);
    await broken.stop();
    await down.end();
    expect(await resource('done-2')).toBe(true);
    const s = sweeper();
    expect((await s.sweep()).deleted).toBe(1);
    await s.stop();
    expect(await resource('done-2')).toBe(false);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${archive.table} WHERE id = 'done-2'`)).rows[0].n).toBe(1);
  });

  it('a resource given a command after it was archived is kept, and its delete at the stale version is refused', async () => {
    await stores.executions.create(exec('done-3', 'FAILED'));
    const s = sweeper(archive, 3600);
    await s.sweep();
    await s.stop();
    const stale = stores.executions.cache.get(executionName('done-3'))!;
    await stores.executions.addCommand('done-3', { type: 'restart' });
    expect(await stores.executions.deleteVersion(stale)).toBe('moved');
    const now = sweeper();
    expect(await now.sweep(), 'a pending restart keeps it').toEqual({ archived: 0, deleted: 0 });
    await now.stop();
    expect(await resource('done-3')).toBe(true);
  });
});
