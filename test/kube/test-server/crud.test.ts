// CRUD through client-node against the test server: custom resources, Jobs, Pods, Leases, conflicts, status isolation,
// generation, selectors, paging, patches and errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from './index.js';
import { gadgetCrd, widgetCrd } from './fixtures.js';

const G = 'test.flowpilot.io';
let srv: KubeTestServer;
let co: CustomObjectsApi;
let core: CoreV1Api;
let batch: BatchV1Api;

/** The HTTP status and Status body of a client-node failure. */
async function failure(p: Promise<unknown>): Promise<{ code: number; body: any }> {
  try { await p; } catch (e: any) { return { code: e.code, body: typeof e.body === 'string' ? JSON.parse(e.body) : e.body }; }
  throw new Error('expected the call to fail');
}

const widget = (name: string, spec: Record<string, unknown> = { size: 1 }, labels?: Record<string, string>) =>
  ({ apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name, ...(labels ? { labels } : {}) }, spec });

beforeAll(async () => {
  srv = await startKubeTestServer({ crdDir: undefined, crds: [widgetCrd(), gadgetCrd()] });
  const kc = srv.kubeConfig();
  co = kc.makeApiClient(CustomObjectsApi);
  core = kc.makeApiClient(CoreV1Api);
  batch = kc.makeApiClient(BatchV1Api);
});
afterAll(async () => { await srv.close(); });

describe('custom resources', () => {
  it('creates, gets, lists and deletes', async () => {
    const created: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('w1') });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.generation).toBe(1);
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(created.spec.color).toBe('red');
    const got: any = await co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'w1' });
    expect(got.metadata.uid).toBe(created.metadata.uid);
    const list: any = await co.listClusterCustomObject({ group: G, version: 'v1', plural: 'widgets' });
    expect(list.items.map((i: any) => i.metadata.name)).toContain('w1');
    expect(list.kind).toBe('WidgetList');
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'w1' });
    const gone = await failure(co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'w1' }));
    expect(gone.code).toBe(404);
    expect(gone.body.reason).toBe('NotFound');
  });

  it('generateName, AlreadyExists and cluster scope', async () => {
    const a: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: { ...widget(''), metadata: { generateName: 'gen-' } } });
    expect(a.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('dup') });
    const dup = await failure(co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('dup') }));
    expect(dup.code).toBe(409);
    expect(dup.body.reason).toBe('AlreadyExists');
    const g: any = await co.createClusterCustomObject({ group: G, version: 'v1', plural: 'gadgets', body: { apiVersion: `${G}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, anything: { goes: 1 } } });
    expect(g.metadata.namespace).toBeUndefined();
    expect(g.anything).toEqual({ goes: 1 });
  });

  it('PUT conflicts on a stale resourceVersion and 404s when missing', async () => {
    const w: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('c1') });
    const updated: any = await co.replaceNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'c1', body: { ...w, spec: { size: 2 } } });
    expect(updated.metadata.generation).toBe(2);
    const stale = await failure(co.replaceNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'c1', body: { ...w, spec: { size: 3 } } }));
    expect(stale.code).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const missing = await failure(co.replaceNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'nope', body: widget('nope') }));
    expect(missing.code).toBe(404);
  });

  it('isolates the status subresource and bumps generation only on spec changes', async () => {
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: { ...widget('s1'), status: { phase: 'Ignored' } } });
    const base: any = await co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1' });
    expect(base.status).toBeUndefined();
    const st: any = await co.replaceNamespacedCustomObjectStatus({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1', body: { ...base, spec: { size: 99 }, status: { phase: 'Running' } } });
    expect(st.status.phase).toBe('Running');
    expect(st.spec.size).toBe(1);
    expect(st.metadata.generation).toBe(1);
    const main: any = await co.replaceNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1', body: { ...st, status: { phase: 'Hacked' }, metadata: { ...st.metadata, labels: { a: 'b' } } } });
    expect(main.status.phase).toBe('Running');
    expect(main.metadata.generation).toBe(1);
    expect(main.metadata.labels).toEqual({ a: 'b' });
    const patched: any = await co.patchNamespacedCustomObjectStatus({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1', body: { status: { count: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(patched.status).toEqual({ phase: 'Running', count: 3 });
    const specPatch: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1', body: [{ op: 'replace', path: '/spec/size', value: 5 }] });
    expect(specPatch.metadata.generation).toBe(2);
    const same: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 's1', body: [{ op: 'replace', path: '/spec/size', value: 5 }] });
    expect(same.metadata.resourceVersion).toBe(specPatch.metadata.resourceVersion);
  });

  it('json patch test op, patch preconditions and strategic merge refusal', async () => {
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('p1') });
    const bad = await failure(co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'p1', body: [{ op: 'test', path: '/spec/size', value: 7 }, { op: 'replace', path: '/spec/size', value: 8 }] }));
    expect(bad.code).toBe(422);
    const ok: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'p1', body: [{ op: 'test', path: '/spec/size', value: 1 }, { op: 'replace', path: '/spec/size', value: 8 }] });
    expect(ok.spec.size).toBe(8);
    const stale = await failure(co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'p1', body: { metadata: { resourceVersion: '1' }, spec: { size: 9 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(stale.code).toBe(409);
    const smp = await failure(co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'p1', body: { spec: { size: 9 } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)));
    expect(smp.code).toBe(415);
  });

  it('server-side apply creates then merges, and needs a fieldManager', async () => {
    const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
    const body = { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'ssa' }, spec: { size: 4 } };
    const noManager = await failure(co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'ssa', body }, apply));
    expect(noManager.code).toBe(422);
    const created: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'ssa', body, fieldManager: 'test' }, apply);
    expect(created.spec).toEqual({ size: 4, color: 'red' });
    const merged: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'ssa', body: { ...body, spec: { color: 'blue' } }, fieldManager: 'test' }, apply);
    expect(merged.spec).toEqual({ size: 4, color: 'blue' });
  });

  it('dryRun=All validates and answers without storing', async () => {
    const dry: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('dry'), dryRun: 'All' });
    expect(dry.spec.color).toBe('red');
    expect((await failure(co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'dry' }))).code).toBe(404);
    const bad = await failure(co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('dry', { size: 'x' }), dryRun: 'All' }));
    expect(bad.code).toBe(422);
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('dry') });
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'dry', dryRun: 'All' });
    expect(((await co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'dry' })) as any).metadata.name).toBe('dry');
  });

  it('label and field selectors, paging', async () => {
    for (const [n, l] of [['l1', { app: 'a', tier: 'x' }], ['l2', { app: 'b' }], ['l3', { app: 'c', tier: 'y' }]] as const) {
      await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', body: widget(n, { size: 1 }, l) });
    }
    const names = async (labelSelector?: string, fieldSelector?: string) => ((await co.listNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', labelSelector, fieldSelector })) as any).items.map((i: any) => i.metadata.name);
    expect(await names('app=a')).toEqual(['l1']);
    expect(await names('app!=a')).toEqual(['l2', 'l3']);
    expect(await names('app in (a,c)')).toEqual(['l1', 'l3']);
    expect(await names('app notin (a,c)')).toEqual(['l2']);
    expect(await names('tier')).toEqual(['l1', 'l3']);
    expect(await names('!tier')).toEqual(['l2']);
    expect(await names('app in (a,b),tier')).toEqual(['l1']);
    expect(await names(undefined, 'metadata.name=l2')).toEqual(['l2']);
    expect(await names(undefined, 'metadata.name!=l2,metadata.namespace=sel')).toEqual(['l1', 'l3']);
    const p1: any = await co.listNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', limit: 2 });
    expect(p1.items.map((i: any) => i.metadata.name)).toEqual(['l1', 'l2']);
    expect(p1.metadata.continue).toBeTruthy();
    const p2: any = await co.listNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', limit: 2, _continue: p1.metadata.continue });
    expect(p2.items.map((i: any) => i.metadata.name)).toEqual(['l3']);
    expect(p2.metadata.continue).toBeUndefined();
    const badField = await failure(co.listNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', fieldSelector: 'spec.size=1' }));
    expect(badField.code).toBe(400);
    const del: any = await co.deleteCollectionNamespacedCustomObject({ group: G, version: 'v1', namespace: 'sel', plural: 'widgets', labelSelector: 'tier' });
    expect(del).toBeTruthy();
    expect(await names()).toEqual(['l2']);
  });
});

describe('built-in kinds', () => {
  it('Jobs get defaults and selector labels; Pods get Pending; status patches', async () => {
    const job = await batch.createNamespacedJob({ namespace: 'default', body: { metadata: { name: 'j1' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1' }] } } } } });
    expect(job.spec?.backoffLimit).toBe(6);
    expect(job.spec?.template.metadata?.labels?.['job-name']).toBe('j1');
    expect(job.status).toEqual({});
    const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p1', labels: { 'job-name': 'j1' } }, spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.spec?.containers[0].imagePullPolicy).toBe('Always');
    await core.patchNamespacedPodStatus({ namespace: 'default', name: 'p1', body: { status: { phase: 'Running' } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    const running = await core.listNamespacedPod({ namespace: 'default', fieldSelector: 'status.phase=Running' });
    expect(running.items.map((p) => p.metadata?.name)).toEqual(['p1']);
    const badJob = await failure(batch.createNamespacedJob({ namespace: 'default', body: { metadata: { name: 'j2' }, spec: { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'x' }] } } } } }));
    expect(badJob.code).toBe(422);
    expect(badJob.body.details.causes.map((c: any) => c.field)).toContain('spec.template.spec.restartPolicy');
    const noPolicy = await failure(batch.createNamespacedJob({ namespace: 'default', body: { metadata: { name: 'j3' }, spec: { template: { spec: { containers: [{ name: 'main', image: 'x' }] } } } } }));
    expect(noPolicy.code).toBe(422);
    const replaced = await batch.replaceNamespacedJob({ namespace: 'default', name: 'j1', body: { ...job, metadata: { ...job.metadata, labels: { ...job.metadata?.labels, extra: 'x' } } } });
    expect(replaced.metadata?.labels?.extra).toBe('x');
  });

  it('strategic merge patch merges containers by name; json merge patch replaces lists', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'smp' }, spec: { containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] } } });
    const p = await core.patchNamespacedPod({ namespace: 'default', name: 'smp', body: { spec: { containers: [{ name: 'b', image: 'b:2' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    expect(p.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual(['a=a:1', 'b=b:2']);
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'mp', labels: { x: '1', y: '2' } }, data: { a: '1' } } });
    const m = await core.patchNamespacedConfigMap({ namespace: 'default', name: 'mp', body: { metadata: { labels: { x: null } }, data: { b: '2' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(m.metadata?.labels).toEqual({ y: '2' });
    expect(m.data).toEqual({ a: '1', b: '2' });
    expect(Number(m.metadata?.resourceVersion)).toBeGreaterThan(Number(cm.metadata?.resourceVersion));
    const immutable = await failure(core.patchNamespacedPod({ namespace: 'default', name: 'smp', body: { spec: { restartPolicy: 'Never' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    expect(immutable.code).toBe(422);
  });

  it('Secrets, ConfigMaps and Leases', async () => {
    const s = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's1' }, stringData: { k: 'v' } } });
    expect(s.data?.k).toBe(Buffer.from('v').toString('base64'));
    expect(s.type).toBe('Opaque');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm1' }, data: { a: '1' } } });
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'cm1' });
    expect(cm.data).toEqual({ a: '1' });
    const leases = srv.kubeConfig().makeApiClient(CoordinationV1Api);
    const l = await leases.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: new Date() as any } } });
    const l2 = await leases.replaceNamespacedLease({ namespace: 'default', name: 'leader', body: { ...l, spec: { ...l.spec, holderIdentity: 'b' } } });
    expect(l2.spec?.holderIdentity).toBe('b');
    const stale = await failure(leases.replaceNamespacedLease({ namespace: 'default', name: 'leader', body: { ...l, spec: { ...l.spec, holderIdentity: 'c' } } }));
    expect(stale.code).toBe(409);
    const nss = await core.listNamespace();
    expect(nss.items.map((n) => n.metadata?.name)).toContain('default');
  });

  it('refuses objects over the etcd size limit and deletes collections of Jobs by label', async () => {
    const big = await failure(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'big' }, data: { x: 'y'.repeat(1600 * 1024) } } }));
    expect(big.code).toBe(500);
    expect(big.body.message).toBe('etcdserver: request is too large');
    for (const n of ['dc1', 'dc2']) await batch.createNamespacedJob({ namespace: 'dc', body: { metadata: { name: n, labels: { batch: 'one' } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] } } } } });
    await batch.deleteCollectionNamespacedJob({ namespace: 'dc', labelSelector: 'batch=one', propagationPolicy: 'Background' });
    expect((await batch.listNamespacedJob({ namespace: 'dc' })).items).toEqual([]);
  });

  it('counts writes by verb and resource', async () => {
    srv.resetStats();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm-stats' } } });
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'cm-stats', body: { data: { x: 'y' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'cm-stats' });
    expect(srv.stats.writes).toEqual({ 'POST configmaps': 1, 'PATCH configmaps': 1, 'DELETE configmaps': 1 });
    expect(srv.stats.totalWrites).toBe(3);
  });

  it('serves discovery', async () => {
    const res = await fetch(`${srv.url}/apis/${G}/v1`);
    const doc: any = await res.json();
    const w = doc.resources.find((r: any) => r.name === 'widgets');
    expect(w).toMatchObject({ namespaced: true, kind: 'Widget', shortNames: ['wd'] });
    expect(doc.resources.map((r: any) => r.name)).toContain('widgets/status');
    const core1: any = await (await fetch(`${srv.url}/api/v1`)).json();
    expect(core1.resources.find((r: any) => r.name === 'namespaces').namespaced).toBe(false);
    const groups: any = await (await fetch(`${srv.url}/apis`)).json();
    expect(groups.groups.map((g: any) => g.name)).toEqual(expect.arrayContaining([G, 'batch', 'coordination.k8s.io']));
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    expect(((await (await fetch(`${srv.url}/version`)).json()) as any).major).toBe('1');
  });
});
