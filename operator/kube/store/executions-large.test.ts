// An execution with 10,000 task runs fits in one Execution resource: the record goes to status.recordGz (gzip+base64)
// and the stored object, measured as the API server returns it, stays under etcd's ~1.5 MiB object limit; a record too
// large even compressed is refused with a clear error. Creation from the API (which may not write status): large
// initial records ride gzipped in their annotation; one too large for that is refused with 413, leaving nothing.
import { randomBytes } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../core/ids.js';
import type { Execution, TaskRun } from '../../core/types.js';
import { sampleExecution } from '../../store/sqlite/test-fixtures.js';
import { openEmbeddedStores } from '../../store/sqlite/index.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import { chartAuthorizer } from '../../../test/kube/chart-rbac.js';
import { startKubeTestServer } from '../../../test/kube/test-server/index.js';
import { executionName } from '../names.js';
import { openKubeStores } from './index.js';
import { K8S_NAMESPACE, type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

const ETCD_LIMIT = 1.5 * 1024 * 1024;

/** Task runs shaped like the engine's for a wide ForEach: random ids, three-state histories, one attempt, small outputs. */
function wideExecution(id: string, count: number): Execution {
  const exec = sampleExecution(id, { state: 'SUCCESS', startDate: '2026-03-01T10:00:00.000Z' });
  const t0 = Date.parse(exec.state.startDate);
  const iso = (ms: number) => new Date(ms).toISOString();
  const parent = newId();
  const runs: TaskRun[] = [];
  for (let i = 0; i < count; i++) {
    const t = t0 + i * 137 + Math.floor(Math.random() * 50);
    const histories = [
      { state: 'CREATED' as const, date: iso(t) },
      { state: 'RUNNING' as const, date: iso(t + 10 + Math.floor(Math.random() * 20)) },
      { state: 'SUCCESS' as const, date: iso(t + 250 + Math.floor(Math.random() * 900)) },
    ];
    runs.push({
      id: newId(), executionId: id, namespace: exec.namespace, flowId: exec.flowId, taskId: `step${i % 5}`,
      parentTaskRunId: parent, value: JSON.stringify({ n: i, name: `item-${i}` }), iteration: i,
      state: { current: 'SUCCESS', histories, startDate: histories[0]!.date, endDate: histories[2]!.date },
      attempts: [{ state: { current: 'SUCCESS', histories: histories.slice(1), startDate: histories[1]!.date, endDate: histories[2]!.date } }],
      outputs: { value: `result ${i}`, uri: `kestra:///company/team/hello/executions/${id}/tasks/step/${newId()}/out.json` },
    });
  }
  exec.taskRunList = runs;
  exec.state.endDate = iso(t0 + count * 137 + 2000);
  return exec;
}

let h: StoreHarness;
beforeAll(async () => { h = await startStoreHarness(); });
afterAll(async () => { await h.close(); });

it('stores 10,000 task runs compressed, under 1.5 MiB, and reads them back in this and another process', async () => {
  const { resourceVersion } = await h.stores.executions.create(sampleExecution('wide'));
  const record = wideExecution('wide', 10_000);
  const rawJson = JSON.stringify(record).length;
  expect(rawJson).toBeGreaterThan(ETCD_LIMIT * 2); // uncompressed it would never fit

  const saved = await h.stores.executions.update(record, resourceVersion);
  const obj = (await h.co.getNamespacedCustomObject({ ...crd('executions'), name: executionName('wide') })) as any;
  const storedBytes = Buffer.byteLength(JSON.stringify(obj));
  expect(storedBytes, `stored object is ${storedBytes} bytes (record JSON ${rawJson} bytes)`).toBeLessThan(ETCD_LIMIT);
  expect(obj.status.record).toBeUndefined();
  expect(typeof obj.status.recordGz).toBe('string');
  expect(obj.status).toMatchObject({ state: 'SUCCESS', taskRunCount: 10_000, endDate: record.state.endDate });

  expect((await h.stores.executions.get('wide'))?.execution).toEqual(JSON.parse(JSON.stringify(record)));
  const peer = await h.openPeer();
  const seen = await until(async () => {
    const s = await peer.executions.get('wide');
    return s && s.resourceVersion === saved.resourceVersion ? s : undefined;
  }, 'the peer informer');
  expect(seen.execution.taskRunList).toHaveLength(10_000);
  expect(seen.execution.taskRunList[9_999]).toEqual(JSON.parse(JSON.stringify(record.taskRunList[9_999])));
  expect((await peer.executions.search({ state: ['SUCCESS'] })).total).toBe(1);
});

it('refuses a record that cannot fit even compressed, with a clear error, and keeps the stored one', async () => {
  const { resourceVersion } = await h.stores.executions.create(sampleExecution('huge'));
  const record = sampleExecution('huge', { state: 'RUNNING' });
  record.outputs = { blob: randomBytes(1_200_000).toString('base64') }; // incompressible
  await expect(h.stores.executions.update(record, resourceVersion)).rejects.toThrow(/too large for a Kubernetes object/);
  expect((await h.stores.executions.get('huge'))).toMatchObject({ resourceVersion, execution: { state: { current: 'CREATED' } } });
});

it('from the API (chart RBAC: no status writes) a record too large for its annotation is refused with 413, leaving nothing', async () => {
  const tokens = { 'admin-token': { username: 'admin' }, 'api-token': { username: 'api' } };
  const srv = await startKubeTestServer({ tokens, authorize: chartAuthorizer(), authorizeRequests: true, ownerReferencesPermissionEnforcement: true });
  const tmp = tempDir('kube-api-large-');
  const local = openEmbeddedStores(tmp.dir);
  const api = await openKubeStores({ kc: srv.kubeConfig('api-token'), namespace: K8S_NAMESPACE, logs: local.logs, storage: local.storage, resyncMs: 0 });
  try {
    await api.ready();
    const replay = wideExecution('replay-huge', 1);
    replay.outputs = { blob: randomBytes(200_000).toString('base64') }; // incompressible: needs the status write
    const err = await api.executions.create(replay).catch((e: unknown) => e as Error & { status?: number });
    expect(err).toMatchObject({ status: 413, message: expect.stringMatching(/too large to create/) });
    const co = srv.kubeConfig('admin-token').makeApiClient(CustomObjectsApi);
    expect(((await co.listNamespacedCustomObject(crd('executions'))) as { items: unknown[] }).items).toEqual([]);
    // A large but compressible one (a replay of 800 task runs, ~700 KB of JSON) is created in one write, without status.
    const ok = wideExecution('replay-ok', 800);
    expect((await api.executions.create(ok)).execution.taskRunList).toHaveLength(800);
  } finally {
    await api.close();
    await local.close();
    await srv.close();
    tmp.remove();
  }
});
