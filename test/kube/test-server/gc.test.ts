// Deletion through client-node against the test server: finalizers, ownerReference cascades (owner CR → Job → Pod)
// with Background / Foreground / Orphan propagation, Jobs orphaning Pods by default, namespace termination.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1OwnerReference } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from './index.js';
import { widgetCrd } from './fixtures.js';
import { until } from '../../support/wait.js';

const G = 'test.flowpilot.io';
let srv: KubeTestServer;
let co: CustomObjectsApi;
let core: CoreV1Api;
let batch: BatchV1Api;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  srv = await startKubeTestServer({ crds: [widgetCrd()] });
  const kc = srv.kubeConfig();
  co = kc.makeApiClient(CustomObjectsApi);
  core = kc.makeApiClient(CoreV1Api);
  batch = kc.makeApiClient(BatchV1Api);
});
afterAll(async () => { await srv.close(); });

async function exists(p: Promise<unknown>): Promise<boolean> {
  try { await p; return true; } catch (e: any) { if (e.code === 404) return false; throw e; }
}

const ref = (o: any, extra: Partial<V1OwnerReference> = {}): V1OwnerReference => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, controller: true, ...extra });

/** A Widget owning a Job owning a Pod. */
async function chain(ns: string, name: string, block = false): Promise<void> {
  const owner: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: ns, plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name }, spec: { size: 1 } } });
  const job = await batch.createNamespacedJob({ namespace: ns, body: { metadata: { name: `${name}-job`, ownerReferences: [ref(owner, { blockOwnerDeletion: block })] }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] } } } } });
  await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: `${name}-pod`, ownerReferences: [ref({ apiVersion: 'batch/v1', kind: 'Job', metadata: job.metadata }, { blockOwnerDeletion: block })] }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } });
}
const widgetThere = (ns: string, name: string) => exists(co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: ns, plural: 'widgets', name }));
const jobThere = (ns: string, name: string) => exists(batch.readNamespacedJob({ namespace: ns, name }));
const podThere = (ns: string, name: string) => exists(core.readNamespacedPod({ namespace: ns, name }));

describe('garbage collection', () => {
  it('background: deleting the owner CR deletes its Job and the Job\'s Pod', async () => {
    await chain('gc', 'bg');
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', name: 'bg' });
    expect(await widgetThere('gc', 'bg')).toBe(false);
    await until(async () => !(await jobThere('gc', 'bg-job')) && !(await podThere('gc', 'bg-pod')), 'the cascade');
  });

  it('foreground: the owner stays with a deletionTimestamp until blocking dependents are gone', async () => {
    await chain('gc', 'fg', true);
    const body: any = await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', name: 'fg', propagationPolicy: 'Foreground' });
    expect(body.metadata.deletionTimestamp).toBeTruthy();
    expect(body.metadata.finalizers).toContain('foregroundDeletion');
    await until(async () => !(await widgetThere('gc', 'fg')), 'the owner to go');
    expect(await jobThere('gc', 'fg-job')).toBe(false);
    expect(await podThere('gc', 'fg-pod')).toBe(false);
  });

  it('orphan: dependents stay and lose the owner reference; Jobs orphan their Pods by default', async () => {
    await chain('gc', 'or');
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', name: 'or', propagationPolicy: 'Orphan' });
    await until(async () => !(await widgetThere('gc', 'or')), 'the owner to go');
    await srv.gcIdle();
    const job = await batch.readNamespacedJob({ namespace: 'gc', name: 'or-job' });
    expect(job.metadata?.ownerReferences).toBeUndefined();
    await batch.deleteNamespacedJob({ namespace: 'gc', name: 'or-job' });
    await until(async () => !(await jobThere('gc', 'or-job')), 'the job to go');
    await srv.gcIdle();
    const pod = await core.readNamespacedPod({ namespace: 'gc', name: 'or-pod' });
    expect(pod.metadata?.ownerReferences).toBeUndefined();
  });

  it('a Job deleted with Background propagation takes its Pods', async () => {
    await chain('gc', 'jb');
    await batch.deleteNamespacedJob({ namespace: 'gc', name: 'jb-job', propagationPolicy: 'Background' });
    await until(async () => !(await podThere('gc', 'jb-pod')), 'the pod to go');
    expect(await widgetThere('gc', 'jb')).toBe(true);
  });

  it('an object with several owners loses only the dangling reference', async () => {
    const a: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'own-a' }, spec: { size: 1 } } });
    const b: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'own-b' }, spec: { size: 1 } } });
    await core.createNamespacedConfigMap({ namespace: 'gc', body: { metadata: { name: 'shared', ownerReferences: [ref(a), ref(b, { controller: false })] } } });
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'gc', plural: 'widgets', name: 'own-a' });
    await until(async () => (await core.readNamespacedConfigMap({ namespace: 'gc', name: 'shared' })).metadata?.ownerReferences?.length === 1, 'the reference to go');
    expect((await core.readNamespacedConfigMap({ namespace: 'gc', name: 'shared' })).metadata?.ownerReferences?.[0].uid).toBe(b.metadata.uid);
  });
});

describe('finalizers', () => {
  it('keep a deleted object with a deletionTimestamp until the last finalizer is removed', async () => {
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'f1', finalizers: ['flowpilot.io/cleanup', 'other/x'] }, spec: { size: 1 } } });
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', name: 'f1' });
    const held: any = await co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', name: 'f1' });
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    const addMore = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', name: 'f1', body: { metadata: { finalizers: ['flowpilot.io/cleanup', 'other/x', 'new/one'] } } }, merge).catch((e) => e);
    expect(addMore.code).toBe(422);
    await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', name: 'f1', body: [{ op: 'remove', path: '/metadata/finalizers/1' }] });
    expect(await widgetThere('fin', 'f1')).toBe(true);
    await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'fin', plural: 'widgets', name: 'f1', body: { metadata: { finalizers: null } } }, merge);
    expect(await widgetThere('fin', 'f1')).toBe(false);
  });

  it('a terminating namespace deletes its content and then goes', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
    await core.deleteNamespace({ name: 'doomed' });
    await until(async () => !(await exists(core.readNamespace({ name: 'doomed' }))), 'the namespace to go');
    expect(await exists(core.readNamespacedConfigMap({ namespace: 'doomed', name: 'c' }))).toBe(false);
  });
});

describe('graceful pod deletion (gracefulPodDeletion)', () => {
  it('keeps a bound Pod with a deletionTimestamp until a delete with grace 0; unbound Pods go at once', async () => {
    const own = await startKubeTestServer({ gracefulPodDeletion: true });
    try {
      const api = own.kubeConfig().makeApiClient(CoreV1Api);
      await api.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'bound' }, spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 600, containers: [{ name: 'c', image: 'x:1' }] } } });
      await api.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'unbound' }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } });
      const terminating = await api.deleteNamespacedPod({ namespace: 'default', name: 'bound' });
      expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(600);
      expect((await api.readNamespacedPod({ namespace: 'default', name: 'bound' })).metadata?.deletionTimestamp).toBeTruthy();
      await api.deleteNamespacedPod({ namespace: 'default', name: 'unbound' });
      expect(await exists(api.readNamespacedPod({ namespace: 'default', name: 'unbound' }))).toBe(false);
      await api.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0 });
      expect(await exists(api.readNamespacedPod({ namespace: 'default', name: 'bound' }))).toBe(false);
    } finally {
      await own.close();
    }
  });
});
