// Paged lists of built-in kinds (Jobs, Pods) through client-node's typed clients (limit / `_continue`), each page
// reporting the first page's resourceVersion, continue tokens expiring (410 Expired) once compacted out of the history
// window, and a Secret list + watch narrowed to one name by fieldSelector metadata.name.
import { afterEach, describe, expect, it } from 'vitest';
import { BatchV1Api, CoreV1Api, Watch, type V1Job } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from './index.js';
import { until } from '../../support/wait.js';

let srv: KubeTestServer | undefined;
afterEach(async () => { await srv?.close(); srv = undefined; });

const job = (name: string): V1Job => ({
  metadata: { name, labels: { app: 'paged' } },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1' }] } } },
});
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: { code?: number; body?: unknown }) => e);

describe('paged lists of built-in kinds', () => {
  it('pages Jobs and Pods with limit / _continue; later pages report the first page\'s resourceVersion', async () => {
    srv = await startKubeTestServer();
    const kc = srv.kubeConfig();
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    for (const n of ['j1', 'j2', 'j3', 'j4', 'j5']) await batch.createNamespacedJob({ namespace: 'default', body: job(n) });
    const p1 = await batch.listNamespacedJob({ namespace: 'default', labelSelector: 'app=paged', limit: 2 });
    expect(p1.items.map((j) => j.metadata?.name)).toEqual(['j1', 'j2']);
    expect(p1.metadata?._continue).toBeTruthy();
    expect(p1.metadata?.remainingItemCount).toBe(3);
    await batch.createNamespacedJob({ namespace: 'default', body: job('j6') }); // a write between pages
    const p2 = await batch.listNamespacedJob({ namespace: 'default', labelSelector: 'app=paged', limit: 2, _continue: p1.metadata!._continue! });
    expect(p2.items.map((j) => j.metadata?.name)).toEqual(['j3', 'j4']);
    expect(p2.metadata?.resourceVersion).toBe(p1.metadata?.resourceVersion);
    const p3 = await batch.listNamespacedJob({ namespace: 'default', labelSelector: 'app=paged', limit: 2, _continue: p2.metadata!._continue! });
    expect(p3.items.map((j) => j.metadata?.name)).toEqual(['j5', 'j6']);
    expect(p3.metadata?._continue).toBeUndefined();

    for (const n of ['pa', 'pb', 'pc']) await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: n }, spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
    const q1 = await core.listNamespacedPod({ namespace: 'default', limit: 2 });
    const q2 = await core.listNamespacedPod({ namespace: 'default', limit: 2, _continue: q1.metadata!._continue! });
    expect([...q1.items, ...q2.items].map((p) => p.metadata?.name)).toEqual(['pa', 'pb', 'pc']);
    expect(q2.metadata?._continue).toBeUndefined();
  });

  it('answers 410 Expired for a continue token whose resourceVersion left the history window (etcd compaction)', async () => {
    srv = await startKubeTestServer({ historyLimit: 3 });
    const batch = srv.kubeConfig().makeApiClient(BatchV1Api);
    for (const n of ['j1', 'j2', 'j3']) await batch.createNamespacedJob({ namespace: 'default', body: job(n) });
    const p1 = await batch.listNamespacedJob({ namespace: 'default', limit: 1 });
    const fresh = await batch.listNamespacedJob({ namespace: 'default', limit: 1, _continue: p1.metadata!._continue! });
    expect(fresh.items.map((j) => j.metadata?.name)).toEqual(['j2']);
    for (const n of ['j4', 'j5', 'j6', 'j7']) await batch.createNamespacedJob({ namespace: 'default', body: job(n) });
    const gone = await failure(batch.listNamespacedJob({ namespace: 'default', limit: 1, _continue: p1.metadata!._continue! }));
    expect(gone.code).toBe(410);
    expect(JSON.parse(String(gone.body))).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect((await failure(batch.listNamespacedJob({ namespace: 'default', limit: 1, _continue: 'not-a-token' }))).code).toBe(400);
  });
});

describe('fieldSelector metadata.name on Secrets', () => {
  it('lists and watches only the named Secret', async () => {
    srv = await startKubeTestServer();
    const kc = srv.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    for (const n of ['wanted', 'other']) await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: n }, data: { k: b64(n) } } });
    const list = await core.listNamespacedSecret({ namespace: 'default', fieldSelector: 'metadata.name=wanted' });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(['wanted']);
    const seen: string[] = [];
    const req = await new Watch(kc).watch('/api/v1/namespaces/default/secrets', { fieldSelector: 'metadata.name=wanted', resourceVersion: list.metadata!.resourceVersion! },
      (type, obj) => seen.push(`${type} ${obj.metadata.name}`), () => {});
    await core.replaceNamespacedSecret({ namespace: 'default', name: 'other', body: { metadata: { name: 'other' }, data: { k: b64('changed') } } });
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'third' }, data: { k: b64('x') } } });
    await core.replaceNamespacedSecret({ namespace: 'default', name: 'wanted', body: { metadata: { name: 'wanted' }, data: { k: b64('changed') } } });
    await core.deleteNamespacedSecret({ namespace: 'default', name: 'wanted' });
    await until(() => seen.length >= 2, 'the watch events of the named Secret');
    req.abort();
    expect(seen).toEqual(['MODIFIED wanted', 'DELETED wanted']);
  });
});
