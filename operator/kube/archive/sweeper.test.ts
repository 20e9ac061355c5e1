// The leader's sweeper and the store's read-through on the Kubernetes API test server with a real PostgreSQL: finished
// executions archived, labelled out of the cache until their TTL (daily statistics count them once, from the archive), then deleted (found by the label scan) while live ones
// stay; an unreachable database only delays (the resource stays, the next pass completes); create of an archived id
// returns the archived record instead of running it again; a resource changed after it was archived is not deleted at
// the stale version, and a command for a labelled one makes it live again (one write), as does the scan for a
// labelled one a writer gave a command without removing the label.
import { CustomObjectsApi } from '@kubernetes/client-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeTestServer, type KubeTestServer } from '../../../test/kube/test-server/index.js';
import { freePort, startPostgres } from '../../../test/support/services.js';
import type { Execution, ExecutionState } from '../../core/types.js';
import { isTransient } from '../../faults.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import { executionName, GROUP, LABELS, VERSION } from '../names.js';
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
const raw = (id: string) => srv.kubeConfig().makeApiClient(CustomObjectsApi)
  .getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'executions', name: executionName(id) })
  .then((o) => o as { metadata: { labels?: Record<string, string>; resourceVersion: string } }, (err: { code?: number }) => { if (err.code === 404) return undefined; throw err; });
const resource = async (id: string) => (await raw(id)) !== undefined;
const cached = (id: string) => stores.executions.cache.get(executionName(id)) !== undefined;
const sweeper = (a = archive, ttlSeconds = 0) => new ExecutionSweeper({ store: stores.executions, archive: a, ttlSeconds, intervalMs: 60_000, clock: () => new Date('2026-01-01T00:10:00Z') });

describe('ExecutionSweeper', () => {
  it('archives finished executions and deletes them after the TTL; live ones stay; reads go through to the archive', async () => {
    await stores.executions.create(exec('done-1', 'SUCCESS'));
    await stores.executions.create(exec('live-1', 'RUNNING'));
    const keep = sweeper(archive, 3600);
    expect(await keep.sweep()).toEqual({ archived: 1, labelled: 1, deleted: 0 });
    expect(await keep.sweep(), 'archived and labelled already').toEqual({ archived: 0, labelled: 0, deleted: 0 });
    await keep.stop();
    // Kept for its TTL, but labelled: out of the cache (only the live one is held), read from the archive.
    expect((await raw('done-1'))?.metadata.labels?.[LABELS.archived]).toBe('true');
    expect(cached('done-1')).toBe(false);
    expect(stores.executions.cache.list().map((o) => o.metadata.name)).toEqual([executionName('live-1')]);
    expect((await stores.executions.get('done-1'))?.execution.state.current).toBe('SUCCESS');
    expect((await stores.executions.search({ namespace: 'company.team' })).results.map((e) => e.id).sort()).toEqual(['done-1', 'live-1']);
    expect(cached('done-1'), 'reads do not bring it back into the cache').toBe(false);
    const s = sweeper();
    expect(await s.sweep(), 'a new leader finds labelled ones by their label: deletes without archiving again').toEqual({ archived: 0, labelled: 0, deleted: 1 });
    await s.stop();
    expect(await resource('done-1')).toBe(false);
    expect(await resource('live-1')).toBe(true);
    expect((await stores.executions.get('done-1'))?.execution.state.current).toBe('SUCCESS');
    // Daily statistics: the live resource counted from the cache, the archived one by the archive's aggregate, once.
    const day = { day: '2026-01-01', durationMinMs: 0, durationMaxMs: 0, durationSumMs: 0 };
    expect(await stores.executions.dailyStats({ namespace: 'company.team', startDate: '2026-01-01T00:00:00Z', endDate: '2026-01-01T23:59:59Z' })).toEqual([
      { ...day, state: 'RUNNING', count: 1, ended: 0 },
      { ...day, state: 'SUCCESS', count: 1, ended: 1, durationMinMs: 1000, durationMaxMs: 1000, durationSumMs: 1000 },
    ]);
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

  it('a command for a labelled resource makes it live again in one write; its delete at the stale version is refused', async () => {
    await stores.executions.create(exec('done-3', 'FAILED'));
    const s = sweeper(archive, 3600);
    expect(await s.sweep()).toMatchObject({ archived: 1, labelled: 1 });
    await s.stop();
    expect(cached('done-3')).toBe(false);
    const stale = (await stores.executions.cache.read(executionName('done-3')))!;
    expect(stale.metadata.labels?.[LABELS.archived]).toBe('true');
    const cmd = await stores.executions.addCommand('done-3', { type: 'restart' });
    expect(cmd.seq).toBe(1);
    const live = await raw('done-3');
    expect(live?.metadata.labels?.[LABELS.archived], 'the label went with the command').toBeUndefined();
    expect(Number(live!.metadata.resourceVersion), 'one write').toBe(Number(stale.metadata.resourceVersion) + 1);
    expect(cached('done-3'), 'back in the cache').toBe(true);
    expect((await stores.executions.pendingCommands('done-3')).map((c) => c.command.type)).toEqual(['restart']);
    expect(await stores.executions.deleteVersion(stale)).toBe('moved');
    const now = sweeper();
    expect(await now.sweep(), 'a pending restart keeps it').toEqual({ archived: 0, labelled: 0, deleted: 0 });
    await now.stop();
    expect(await resource('done-3')).toBe(true);
  });

  it('the label scan takes the label off a labelled resource given a command by a writer that kept the label', async () => {
    await stores.executions.create(exec('done-4', 'SUCCESS'));
    const s = sweeper(archive, 3600);
    expect(await s.sweep()).toMatchObject({ archived: 1, labelled: 1 });
    await s.stop();
    const co = srv.kubeConfig().makeApiClient(CustomObjectsApi);
    await co.patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'executions', name: executionName('done-4'),
      body: [{ op: 'add', path: '/spec/commands', value: [{ seq: 1, type: 'restart', created: '2026-01-01T00:05:00.000Z' }] }] });
    expect(cached('done-4')).toBe(false);
    const again = sweeper(archive, 3600);
    await again.sweep();
    await again.stop();
    expect((await raw('done-4'))?.metadata.labels?.[LABELS.archived]).toBeUndefined();
    expect(cached('done-4'), 'live again: the operator sees its command').toBe(true);
    expect((await stores.executions.pendingCommands('done-4')).map((c) => c.command.type)).toEqual(['restart']);
  });
  it('a command sent from a lagging cache that still holds the resource unlabelled does not leave it labelled', async () => {
    const peerLocal = openEmbeddedStores(tempDir('sweeper-peer-').dir);
    const peer = await openKubeStores({ kc: srv.kubeConfig(), namespace: NS, logs: peerLocal.logs, storage: peerLocal.storage, resyncMs: 0, archive });
    try {
      await peer.ready();
      await stores.executions.create(exec('done-5', 'FAILED'));
      for (let i = 0; peer.executions.cache.get(executionName('done-5')) === undefined; i++) {
        if (i > 500) throw new Error('the peer never saw done-5');
        await new Promise((r) => setTimeout(r, 20));
      }
      srv.suspendWatches(); // the peer (an API replica) misses the label
      const s = sweeper(archive, 3600);
      expect(await s.sweep()).toMatchObject({ labelled: 1 });
      await s.stop();
      expect(peer.executions.cache.get(executionName('done-5'))?.metadata.labels?.[LABELS.archived], 'the peer copy is stale').toBeUndefined();
      await peer.executions.addCommand('done-5', { type: 'restart' });
      const now = await raw('done-5');
      expect(now?.metadata.labels?.[LABELS.archived], 'the command made it live').toBeUndefined();
    } finally {
      srv.resumeWatches();
      await peer.close();
      await peerLocal.close();
    }
  });
  it('a command for a labelled Execution made with kubectl (its id is its name) makes that resource live, no copy', async () => {
    const co = srv.kubeConfig().makeApiClient(CustomObjectsApi);
    const at = { group: GROUP, version: VERSION, namespace: NS, plural: 'executions' };
    await co.createNamespacedCustomObject({ ...at, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Execution', metadata: { name: 'hand-1' }, spec: { namespace: 'company.team', flowId: 'hello' } } });
    const got = (await stores.executions.get('hand-1'))!;
    await stores.executions.update({ ...exec('hand-1', 'SUCCESS'), ...{ id: got.execution.id } }, got.resourceVersion);
    const s = sweeper(archive, 3600);
    expect(await s.sweep()).toMatchObject({ archived: 1, labelled: 1 });
    await s.stop();
    const named = (name: string) => co.getNamespacedCustomObject({ ...at, name }).then((o) => o as { metadata: { labels?: Record<string, string> } }, () => undefined);
    expect((await named('hand-1'))?.metadata.labels?.[LABELS.archived]).toBe('true');
    await stores.executions.addCommand('hand-1', { type: 'restart' });
    expect((await named('hand-1'))?.metadata.labels?.[LABELS.archived]).toBeUndefined();
    expect(await named(executionName('hand-1')), 'not re-created under the generated name').toBeUndefined();
    expect((await stores.executions.pendingCommands('hand-1')).map((c) => c.command.type)).toEqual(['restart']);
  });
});
