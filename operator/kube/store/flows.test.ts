// Cluster flow store against the Kubernetes API test server: revisions as FlowRevision resources, deletion keeping
// history, search, the SAVED/DELETED feed across processes, and kubectl-applied Flows reconciled into revisions.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flowSource, sampleFlow } from '../../store/sqlite/test-fixtures.js';
import type { FlowEvent } from '../../store/types.js';
import { LABELS, flowName, flowRevisionName } from '../names.js';
import { namespaceHash } from './labels.js';
import { type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

let h: StoreHarness;
beforeEach(async () => { h = await startStoreHarness(); });
afterEach(async () => { await h.close(); });

const rawFlow = async (name: string): Promise<any> => h.co.getNamespacedCustomObject({ ...crd('flows'), name });

describe('KubeFlowStore revisions', () => {
  it('creates a revision only when the source changes', async () => {
    const flows = h.stores.flows;
    const flow = sampleFlow('company.team', 'hello');
    const first = await flows.save(flow, flowSource(flow));
    expect(first.created).toBe(true);
    expect(first.record.revision).toBe(1);
    expect(flow.revision).toBe(1);

    const same = await flows.save(sampleFlow('company.team', 'hello'), flowSource(flow));
    expect(same).toMatchObject({ created: false, record: { revision: 1 } });

    const changed = sampleFlow('company.team', 'hello', 'now described');
    const second = await flows.save(changed, flowSource(changed, '\ndescription: now described'));
    expect(second).toMatchObject({ created: true, record: { revision: 2 } });
    expect(second.record.flow.revision).toBe(2);

    expect((await flows.revisions('company.team', 'hello')).map((r) => r.revision)).toEqual([1, 2]);
    expect((await flows.get('company.team', 'hello'))?.revision).toBe(2);
    expect((await flows.get('company.team', 'hello', 1))?.source).toBe(flowSource(flow));

    // On the cluster: one Flow (spec = the document, status = current revision, Ready) and one FlowRevision per revision.
    const obj = await rawFlow(flowName('company.team', 'hello'));
    expect(obj.spec).toMatchObject({ id: 'hello', namespace: 'company.team', description: 'now described' });
    expect(obj.status).toMatchObject({ revision: 2, observedGeneration: obj.metadata.generation });
    expect(obj.status.conditions).toMatchObject([{ type: 'Ready', status: 'True' }]);
    const rev = (await h.co.getNamespacedCustomObject({ ...crd('flowrevisions'), name: flowRevisionName(flowName('company.team', 'hello'), 1) })) as any;
    expect(rev.spec).toMatchObject({ namespace: 'company.team', id: 'hello', revision: 1, source: flowSource(flow) });
    expect(rev.metadata.labels).toMatchObject({ [LABELS.flowId]: 'hello', [LABELS.flowNamespaceHash]: namespaceHash('company.team') });
    expect(rev.metadata.ownerReferences).toBeUndefined();
  });

  it('hides a deleted flow, keeps its revisions and continues numbering when it is saved again', async () => {
    const flows = h.stores.flows;
    const flow = sampleFlow('company', 'f');
    await flows.save(flow, flowSource(flow));
    expect(await flows.delete('company', 'f')).toBe(true);
    expect(await flows.delete('company', 'f')).toBe(false);
    expect(await flows.delete('company', 'missing')).toBe(false);
    expect(await flows.get('company', 'f')).toBeUndefined();
    expect((await flows.get('company', 'f', 1))?.deleted).toBe(true);
    expect(await flows.all()).toEqual([]);
    await expect(rawFlow(flowName('company', 'f'))).rejects.toMatchObject({ code: 404 });

    const again = await flows.save(flow, flowSource(flow));
    expect(again).toMatchObject({ created: true, record: { revision: 2 } });
    expect((await flows.get('company', 'f'))?.revision).toBe(2);
    expect((await flows.all()).map((r) => r.id)).toEqual(['f']);
  });

  it('reads a revision another process saved before its informer delivered it', async () => {
    const peer = await h.openPeer();
    const flow = sampleFlow('company', 'p');
    await h.stores.flows.save(flow, flowSource(flow));
    expect((await peer.flows.get('company', 'p', 1))?.flow.id).toBe('p');
  });
});

describe('KubeFlowStore search', () => {
  beforeEach(async () => {
    for (const [ns, id, description] of [
      ['company', 'a', 'Loads the warehouse'], ['company.team', 'b', undefined], ['company.team.sub', 'c', undefined],
      ['companyx', 'd', undefined], ['other', 'warehouse-sync', undefined],
    ] as const) {
      const flow = sampleFlow(ns, id, description);
      await h.stores.flows.save(flow, flowSource(flow, description ? `\ndescription: ${description}` : ''));
    }
  });

  it('matches a namespace and its children on dotted segments', async () => {
    const page = await h.stores.flows.search({ namespace: 'company' });
    expect(page.results.map((r) => `${r.namespace}/${r.id}`)).toEqual(['company/a', 'company.team/b', 'company.team.sub/c']);
    expect(page.total).toBe(3);
    expect((await h.stores.flows.search({ namespace: 'company.team' })).total).toBe(2);
  });

  it('matches q on id, namespace and description, case-insensitively; pages with a total', async () => {
    const ids = async (q: string) => (await h.stores.flows.search({ q })).results.map((r) => r.id);
    expect(await ids('WAREHOUSE')).toEqual(['a', 'warehouse-sync']);
    expect(await ids('companyx')).toEqual(['d']);
    const page = await h.stores.flows.search({ limit: 2, offset: 1 });
    expect(page.results.map((r) => r.id)).toEqual(['b', 'c']);
    expect(page.total).toBe(5);
  });
});

describe('KubeFlowStore feed', () => {
  it('emits SAVED per new revision and DELETED, in this process and in another one', async () => {
    const peer = await h.openPeer();
    const local: string[] = [];
    const remote: string[] = [];
    const fmt = (e: FlowEvent) => (e.type === 'SAVED' ? `SAVED ${e.record.id}@${e.record.revision}` : `DELETED ${e.id}`);
    h.stores.flows.watch((e) => local.push(fmt(e)));
    peer.flows.watch((e) => remote.push(fmt(e)));
    const flow = sampleFlow('company', 'w');
    await h.stores.flows.save(flow, flowSource(flow));
    await h.stores.flows.save(flow, flowSource(flow));
    await h.stores.flows.save(flow, flowSource(flow, '\ndescription: two'));
    await h.stores.flows.delete('company', 'w');
    const expected = ['SAVED w@1', 'SAVED w@2', 'DELETED w'];
    expect(local).toEqual(expected);
    await until(() => remote.length >= 3, 'the peer feed');
    expect(remote).toEqual(expected);
  });
});

const kubectlFlow = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name }, spec });
const helloSpec = (message = 'hi') => ({ id: 'applied', namespace: 'company.ops', tasks: [{ id: 'log', type: 'io.kestra.plugin.core.log.Log', message }] });

describe('kubectl-applied Flows', () => {
  it('a Flow deleted with kubectl disappears (DELETED), its revisions stay readable', async () => {
    const flows = h.stores.flows;
    const events: FlowEvent[] = [];
    flows.watch((e) => events.push(e));
    const flow = sampleFlow('company', 'gone');
    await flows.save(flow, flowSource(flow));
    await h.co.deleteNamespacedCustomObject({ ...crd('flows'), name: flowName('company', 'gone') });
    await until(() => events.some((e) => e.type === 'DELETED'), 'DELETED');
    expect(events.map((e) => e.type)).toEqual(['SAVED', 'DELETED']);
    expect(await flows.get('company', 'gone')).toBeUndefined();
    expect(await flows.get('company', 'gone', 1)).toMatchObject({ revision: 1, deleted: true });
  });

  it('get a revision and a Ready condition; an edit adds a revision; the same document adds none', async () => {
    const flows = h.stores.flows;
    const saved: FlowEvent[] = [];
    flows.watch((e) => saved.push(e));
    const created = (await h.co.createNamespacedCustomObject({ ...crd('flows'), body: kubectlFlow('my-flow', helloSpec()) })) as any;
    await until(() => flows.res.flows.get('my-flow'), 'the informer');
    expect(await flows.reconcile('my-flow')).toEqual({ status: 'ready', revision: 1, created: true });
    const rec = (await flows.get('company.ops', 'applied'))!;
    expect(rec.revision).toBe(1);
    expect(rec.flow.tasks[0]).toMatchObject({ id: 'log', type: 'ai.service.plugin.core.log.Log', message: 'hi' });
    expect(rec.source).toContain('message: hi');
    expect(saved.map((e) => e.type)).toEqual(['SAVED']);
    let obj = await rawFlow('my-flow');
    expect(obj.status).toMatchObject({ revision: 1, observedGeneration: created.metadata.generation });
    expect(obj.status.conditions).toMatchObject([{ type: 'Ready', status: 'True', reason: 'RevisionSaved' }]);
    expect(await flows.reconcile('my-flow')).toEqual({ status: 'skipped' });

    await h.co.replaceNamespacedCustomObject({ ...crd('flows'), name: 'my-flow', body: { ...obj, spec: helloSpec('changed') } });
    await until(() => (flows.res.flows.get('my-flow')?.metadata.generation ?? 0) > created.metadata.generation, 'the edit');
    expect(await flows.reconcile('my-flow')).toMatchObject({ status: 'ready', revision: 2, created: true });
    expect((await flows.get('company.ops', 'applied'))?.flow.tasks[0]).toMatchObject({ message: 'changed' });

    // The API saving the same flow updates the kubectl Flow (found by spec.namespace + spec.id), not a second one.
    const viaApi = { ...sampleFlow('company.ops', 'applied'), tasks: [{ id: 'log', type: 'ai.service.plugin.core.log.Log', message: 'api' }] };
    const apiSource = 'id: applied\nnamespace: company.ops\ntasks:\n  - id: log\n    type: ai.service.plugin.core.log.Log\n    message: api\n';
    expect((await flows.save(viaApi, apiSource)).record.revision).toBe(3);
    obj = await rawFlow('my-flow');
    expect(obj.spec.tasks[0].message).toBe('api');
    expect(obj.status.revision).toBe(3);
    await expect(rawFlow(flowName('company.ops', 'applied'))).rejects.toMatchObject({ code: 404 });
    // Its reconcile (triggered by the spec change) finds the API's revision and adds none.
    expect(await flows.reconcile('my-flow')).toEqual({ status: 'skipped' });
    expect((await flows.revisions('company.ops', 'applied')).map((r) => r.revision)).toEqual([1, 2, 3]);
  });

  it('an invalid Flow gets Ready False naming the field, and keeps its last good revision', async () => {
    const flows = h.stores.flows;
    const stop = flows.reconcileOnChange();
    await h.co.createNamespacedCustomObject({ ...crd('flows'), body: kubectlFlow('good-then-bad', helloSpec()) });
    await until(async () => (await flows.get('company.ops', 'applied'))?.revision === 1, 'revision 1');
    const obj = await until(async () => { const o = await rawFlow('good-then-bad'); return o.status?.revision === 1 ? o : undefined; }, 'status');
    const bad = { ...helloSpec(), tasks: [{ id: 'log', type: 'io.kestra.plugin.core.log.Log' }] };
    await h.co.replaceNamespacedCustomObject({ ...crd('flows'), name: 'good-then-bad', body: { ...obj, spec: bad } });
    const failed = await until(async () => {
      const o = await rawFlow('good-then-bad');
      return o.status?.conditions?.[0]?.status === 'False' ? o : undefined;
    }, 'Ready False');
    expect(failed.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'False', reason: 'InvalidFlow', observedGeneration: failed.metadata.generation });
    expect(failed.status.conditions[0].message).toMatch(/tasks\[0\]\.message/);
    expect(failed.status).toMatchObject({ revision: 1, observedGeneration: failed.metadata.generation });
    expect(failed.status.message).toMatch(/tasks\[0\]\.message/);
    expect((await flows.get('company.ops', 'applied'))?.revision).toBe(1);

    // A brand-new invalid Flow has no revision and is not a live flow.
    const unknownType = { id: 'other', namespace: 'x', tasks: [{ id: 't', type: 'io.kestra.plugin.core.log.Nope' }] };
    await h.co.createNamespacedCustomObject({ ...crd('flows'), body: kubectlFlow('unknown-type', unknownType) });
    const rejected = await until(async () => { const o = await rawFlow('unknown-type'); return o.status?.conditions ? o : undefined; }, 'Ready False');
    expect(rejected.status.conditions[0]).toMatchObject({ status: 'False' });
    expect(rejected.status.message).toMatch(/tasks\[0\]\.type/);
    expect(rejected.status.revision).toBeUndefined();
    expect(await flows.get('x', 'other')).toBeUndefined();
    stop();
    await flows.idle();
    expect((await flows.all()).map((r) => r.id)).toEqual(['applied']);
  });

  it('ensureRevisions reconciles Flows applied while no operator ran', async () => {
    await h.co.createNamespacedCustomObject({ ...crd('flows'), body: kubectlFlow('offline', helloSpec()) });
    const operator = await h.openPeer();
    expect(await operator.flows.ensureRevisions()).toBe(1);
    expect((await operator.flows.get('company.ops', 'applied'))?.revision).toBe(1);
    expect(await operator.flows.ensureRevisions()).toBe(0);
  });
});
