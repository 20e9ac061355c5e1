// Cluster mode under transient API faults, injected by a proxy in front of the Kubernetes API test server: the stores'
// errors (503, 429, a reset connection) classify as transient; the launcher never fails a task because the API was
// unavailable (it starts the attempt when asked again), and an attempt it already reported is reported again when the
// engine asks (a report whose write was lost), without a second Job.
import { join, resolve } from 'node:path';
import { BatchV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskOutcome } from '../../operator/core/engine-types.js';
import { isTransient } from '../../operator/faults.js';
import { KubeLauncher } from '../../operator/kube/launcher.js';
import { executionName, LABELS } from '../../operator/kube/names.js';
import { openKubeStores, type KubeStores } from '../../operator/kube/store/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../operator/store/sqlite/index.js';
import { sampleExecution, tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { oneTask } from './attempt-fixtures.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'faults-test';
let server: KubeTestServer;
let proxy: FaultProxy;
let kc: KubeConfig;
let tmp: ReturnType<typeof tempDir>;
let local: EmbeddedStores;

beforeAll(async () => {
  tmp = tempDir('kube-faults-');
  local = openEmbeddedStores(tmp.dir);
  server = await startKubeTestServer();
  kc = server.kubeConfig();
  proxy = await startFaultProxy(server.url);
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await local?.close();
  tmp?.remove();
});

const caught = (p: Promise<unknown>): Promise<unknown> => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e);

describe('cluster stores behind a faulty API', () => {
  let stores: KubeStores;
  beforeAll(async () => {
    stores = await openKubeStores({ kc: proxy.kubeConfig(kc), namespace: NS, logs: local.logs, storage: local.storage, resyncMs: 0 });
    await stores.ready();
  });
  afterAll(async () => { proxy.clear(); await stores?.close(); });

  it.each([[503], [429], [500], ['reset' as const]])('a status write answered %s fails transient; the same write succeeds after', async (fault) => {
    const created = await stores.executions.create(sampleExecution(`e-${fault}`, { state: 'RUNNING' }));
    proxy.fail({ method: 'PUT', path: new RegExp(`/executions/${executionName(`e-${fault}`)}/status`), fault, times: 1 });
    const next = { ...created.execution, error: 'x' };
    const err = await caught(stores.executions.update(next, created.resourceVersion));
    expect(isTransient(err), String(err)).toBe(true);
    expect((await stores.executions.update(next, created.resourceVersion)).execution.error).toBe('x');
  });

  it('a command append answered 503 fails transient; the same append succeeds after', async () => {
    await stores.executions.create(sampleExecution('cmd', { state: 'RUNNING' }));
    proxy.fail({ method: 'PATCH', path: /\/executions\//, fault: 503, times: 1 });
    expect(isTransient(await caught(stores.executions.addCommand('cmd', { type: 'kill' })))).toBe(true);
    expect((await stores.executions.addCommand('cmd', { type: 'kill' })).seq).toBe(1);
  });
});

describe('KubeLauncher behind a faulty API', { timeout: 120_000 }, () => {
  let kubelet: SimulatedKubelet;
  let launcher: KubeLauncher;
  const reports: { taskRunId: string; outcome: TaskOutcome }[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    kubelet = await startSimulatedKubelet({ kc, namespace: NS, pathMap: { '/app': ROOT } });
    launcher = new KubeLauncher({
      kc: proxy.kubeConfig(kc), namespace: NS, storage: local.storage,
      settings: { runnerImage: 'flowpilot-runner:test', env: { STORAGE_DIR: local.storage.root, LOG_DB: join(tmp.dir, 'store.db') }, terminationGracePeriodSeconds: 5 },
      report: (_e, taskRunId, _a, outcome) => reports.push({ taskRunId, outcome }),
      onError: (m, e) => errors.push(`${m}: ${(e as Error)?.message ?? ''}`),
    });
    await launcher.start();
  });
  afterAll(async () => { proxy.clear(); await launcher?.stop(); await kubelet?.stop(); });

  const reportsOf = (id: string) => reports.filter((r) => r.taskRunId === id);
  const jobsOf = async (id: string) => (await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.taskRunId}=${id}` })).items;

  it('a Job that cannot be created for now is not a failed task: the next launch creates it', async () => {
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: hello');
    proxy.fail({ method: 'POST', path: /\/jobs$/, fault: 503, times: 6 }); // more than the launcher's own quick retries
    launcher.launch(a.flow, a.exec, a.run, 1);
    await until(() => errors.some((e) => e.includes("could not start task 'hello' yet")), () => `the launcher to give up for now; errors: ${errors.join(' | ')}`);
    expect(reportsOf(a.run.id)).toEqual([]);
    expect(await jobsOf(a.run.id)).toEqual([]);
    launcher.launch(a.flow, a.exec, a.run, 1); // the engine asks again (resync)
    const first = await until(() => reportsOf(a.run.id)[0], () => `the outcome; errors: ${errors.join(' | ')}`);
    expect(first.outcome.state).toBe('SUCCESS');
    expect(await jobsOf(a.run.id)).toHaveLength(1);
  });

  it('an attempt already reported is reported again when the engine asks, without a second Job', async () => {
    const a = oneTask('id: again\ntype: ai.service.plugin.core.log.Log\nmessage: again');
    launcher.launch(a.flow, a.exec, a.run, 1);
    const first = await until(() => reportsOf(a.run.id)[0], () => `the outcome; errors: ${errors.join(' | ')}`);
    launcher.launch(a.flow, a.exec, a.run, 1); // the first report's write was lost: the engine still waits
    expect(reportsOf(a.run.id)).toHaveLength(2);
    expect(reportsOf(a.run.id)[1]!.outcome).toEqual(first.outcome);
    expect(await jobsOf(a.run.id)).toHaveLength(1);
  });
});
