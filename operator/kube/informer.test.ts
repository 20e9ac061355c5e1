// Lean informers against the Kubernetes API test server: the list is read in pages (and started over when a continue
// token expires), listed and watched objects are cached without Pod templates, Pod specs, managedFields or the
// last-applied annotation, and a field selector narrows both the list and the watch.
import { afterEach, describe, expect, it } from 'vitest';
import { BatchV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Job, type V1Secret } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from '../../test/kube/test-server/index.js';
import { until } from '../../test/support/wait.js';
import { type Cache, leanJob, leanPod, leanSecret, makeLeanInformer } from './informer.js';
import { listPages, type PageReader } from './store/kube-api.js';

let srv: KubeTestServer | undefined;
const informers: Cache<any>[] = [];
afterEach(async () => {
  for (const i of informers.splice(0)) await i.stop();
  await srv?.close();
  srv = undefined;
});

const NS = 'default';
const job = (name: string, labels: Record<string, string> = { app: 'lean' }): V1Job => ({
  metadata: { name, labels, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}', keep: 'me' } },
  spec: { backoffLimit: 0, ttlSecondsAfterFinished: 600, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1', env: [{ name: 'X', value: 'x'.repeat(1000) }] }] } } },
});

describe('makeLeanInformer', () => {
  it('lists in pages and caches lean Jobs, for listed and watched objects alike', async () => {
    srv = await startKubeTestServer();
    const batch = srv.kubeConfig().makeApiClient(BatchV1Api);
    for (const n of ['j1', 'j2', 'j3', 'j4', 'j5']) await batch.createNamespacedJob({ namespace: NS, body: job(n) });
    await batch.createNamespacedJob({ namespace: NS, body: job('not-ours', { app: 'else' }) });
    const pages: (string | undefined)[] = [];
    const read: PageReader<V1Job> = (page) => { pages.push(page._continue); return batch.listNamespacedJob({ namespace: NS, labelSelector: 'app=lean', ...page }); };
    const jobs = makeLeanInformer(srv.kubeConfig(), `/apis/batch/v1/namespaces/${NS}/jobs`, read, { labelSelector: 'app=lean', transform: leanJob, pageSize: 2 });
    informers.push(jobs);
    await jobs.start();
    expect(pages.length).toBe(3); // 2 + 2 + 1
    expect(jobs.list(NS).map((j) => j.metadata?.name).sort()).toEqual(['j1', 'j2', 'j3', 'j4', 'j5']);
    const listed = jobs.get('j1', NS)!;
    expect(listed.spec?.template).toBeUndefined();
    expect(listed.spec?.ttlSecondsAfterFinished).toBe(600);
    expect(listed.metadata?.annotations).toEqual({ keep: 'me' });
    expect(listed.metadata?.labels?.app).toBe('lean');

    await batch.createNamespacedJob({ namespace: NS, body: job('j6') });
    await batch.patchNamespacedJobStatus({ namespace: NS, name: 'j1', body: { status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await until(() => jobs.get('j6', NS) && jobs.get('j1', NS)?.status?.conditions?.length, 'the watched Job changes');
    for (const name of ['j1', 'j6']) {
      const j = jobs.get(name, NS)!;
      expect(j.spec?.template).toBeUndefined();
      expect(j.metadata?.annotations).toEqual({ keep: 'me' });
    }
    expect(jobs.get('j1', NS)!.status?.conditions?.[0]?.type).toBe('Complete');
    expect(jobs.get('not-ours', NS)).toBeUndefined();
  });

  it('narrows list and watch to one Secret by field selector, without its last-applied copy', async () => {
    srv = await startKubeTestServer();
    const core = srv.kubeConfig().makeApiClient(CoreV1Api);
    const secret = (name: string, v: string): V1Secret => ({
      metadata: { name, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"data":{"k":"${v}"}}` } },
      stringData: { k: v },
    });
    await core.createNamespacedSecret({ namespace: NS, body: secret('wanted', 'one') });
    await core.createNamespacedSecret({ namespace: NS, body: secret('other', 'two') });
    const fieldSelector = 'metadata.name=wanted';
    const secrets = makeLeanInformer<V1Secret>(srv.kubeConfig(), `/api/v1/namespaces/${NS}/secrets`,
      (page) => core.listNamespacedSecret({ namespace: NS, fieldSelector, ...page }), { fieldSelector, transform: leanSecret });
    informers.push(secrets);
    const events: string[] = [];
    secrets.on('change', (s) => events.push(s.metadata!.name!));
    await secrets.start();
    await core.createNamespacedSecret({ namespace: NS, body: secret('third', 'three') });
    await core.replaceNamespacedSecret({ namespace: NS, name: 'wanted', body: secret('wanted', 'changed') });
    await until(() => Buffer.from(secrets.get('wanted', NS)?.data?.k ?? '', 'base64').toString() === 'changed', 'the named Secret changed');
    expect(secrets.list(NS).map((s) => s.metadata?.name)).toEqual(['wanted']);
    expect(events).toEqual(['wanted', 'wanted']);
    expect(secrets.get('wanted', NS)!.metadata?.annotations).toEqual({});
  });
});

describe('listPages', () => {
  it('starts the list over when a continue token expires (410) between pages', async () => {
    srv = await startKubeTestServer({ historyLimit: 2 });
    const batch = srv.kubeConfig().makeApiClient(BatchV1Api);
    for (const n of ['j1', 'j2', 'j3']) await batch.createNamespacedJob({ namespace: NS, body: job(n) });
    let firstPages = 0;
    let churned = false;
    const all = await listPages<V1Job>(async (page) => {
      if (!page._continue) firstPages++;
      else if (!churned) { // writes between two pages push the token's revision out of the history window
        churned = true;
        for (const n of ['k1', 'k2', 'k3']) await batch.createNamespacedJob({ namespace: NS, body: job(n) });
      }
      return batch.listNamespacedJob({ namespace: NS, ...page });
    }, 2);
    expect(firstPages).toBe(2);
    expect(all.items.map((j) => j.metadata?.name)).toEqual(['j1', 'j2', 'j3', 'k1', 'k2', 'k3']);
    expect(all.metadata?.resourceVersion).toBe(srv.resourceVersion);
  });

  it('a lean Pod keeps its metadata and status only', () => {
    const pod = leanPod({
      metadata: { name: 'p', labels: { a: 'b' }, managedFields: [{ manager: 'kubectl' }] },
      spec: { containers: [{ name: 'main', image: 'x' }] },
      status: { phase: 'Pending', containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }] },
    });
    expect(pod).toEqual({
      metadata: { name: 'p', labels: { a: 'b' } },
      status: { phase: 'Pending', containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff' } } }] },
    });
  });
});
