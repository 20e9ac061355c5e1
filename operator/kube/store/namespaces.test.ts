// The cluster namespace store (FlowNamespace resources) against the NamespaceStore contract on the Kubernetes API test
// server, and a namespace written by another process (or kubectl) reaching this one's chain through the informer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceStoreContract } from '../../../test/support/namespace-store-contract.js';
import { flowNamespaceName } from '../names.js';
import { type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

let h: StoreHarness;
beforeAll(async () => { h = await startStoreHarness(); });
afterAll(async () => { await h.close(); });

namespaceStoreContract('FlowNamespace resources', () => h.stores.namespaces);

describe('KubeNamespaceStore', () => {
  it('stores a namespace as a FlowNamespace resource named from its id', async () => {
    await h.stores.namespaces.put({ id: 'raw.team', variables: { a: 1 }, pluginDefaults: [] });
    const raw = (await h.co.getNamespacedCustomObject({ ...crd('flownamespaces'), name: flowNamespaceName('raw.team') })) as any;
    expect(raw.spec).toMatchObject({ id: 'raw.team', variables: { a: 1 }, pluginDefaults: [] });
  });

  it('sees a namespace another process writes: get reads through, chain once the informer has it', async () => {
    const peer = await h.openPeer();
    await peer.namespaces.put({ id: 'peer.ns', variables: { from: 'peer' }, pluginDefaults: [] });
    expect((await h.stores.namespaces.get('peer.ns'))?.variables).toEqual({ from: 'peer' });
    await until(async () => (await h.stores.namespaces.chain('peer.ns.child')).length === 1, 'the informer');
    await peer.namespaces.delete('peer.ns');
    await until(async () => (await h.stores.namespaces.chain('peer.ns.child')).length === 0, 'the deletion');
  });

  it('refuses a kubectl-made FlowNamespace whose id breaks the namespace pattern (CRD schema)', async () => {
    const body = { apiVersion: 'flowpilot.io/v1', kind: 'FlowNamespace', metadata: { name: 'bad' }, spec: { id: 'Not Valid' } };
    await expect(h.co.createNamespacedCustomObject({ ...crd('flownamespaces'), body })).rejects.toBeDefined();
  });

  it('reconciles a kubectl-applied Flow that relies on its namespace\'s plugin defaults as Ready', async () => {
    await h.stores.namespaces.put({ id: 'applied', variables: {}, pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { message: 'x' } }] });
    const spec = (ns: string) => ({ id: 'relies', namespace: ns, tasks: [{ id: 'log', type: 'io.kestra.plugin.core.log.Log' }] });
    for (const [name, ns] of [['relies-ok', 'applied.team'], ['relies-bad', 'unrelated']]) {
      await h.co.createNamespacedCustomObject({ ...crd('flows'), body: { apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name }, spec: spec(ns) } });
      await until(() => h.stores.flows.res.flows.get(name), 'the informer');
    }
    expect(await h.stores.flows.reconcile('relies-ok')).toMatchObject({ status: 'ready', revision: 1 });
    expect(await h.stores.flows.reconcile('relies-bad')).toMatchObject({ status: 'invalid', message: expect.stringContaining('message') });
  });
});
