// Cluster trigger state store against the Kubernetes API test server: compare-and-set on resourceVersion, listing by
// namespace prefix, durability across a new process, and done-once marks (ConfigMaps) that are atomic.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../store/types.js';
import { triggerStateName } from '../names.js';
import { K8S_NAMESPACE, type StoreHarness, crd, startStoreHarness } from './test-support.js';

let h: StoreHarness;
beforeEach(async () => { h = await startStoreHarness(); });
afterEach(async () => { await h.close(); });

describe('KubeTriggerStateStore', () => {
  it('creates with version 0, updates with the version read, rejects stale writes', async () => {
    const t = h.stores.triggers;
    const a = await t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: { last: '2026-01-01T00:00:00Z' } }, 0);
    expect(a.version).toBeGreaterThan(0);
    await expect(t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: {} }, 0)).rejects.toBeInstanceOf(ConflictError);
    const b = await t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: { last: 'x' }, disabled: true }, a.version);
    expect(b).toMatchObject({ disabled: true, state: { last: 'x' } });
    expect(b.version).toBeGreaterThan(a.version);
    await expect(t.put({ namespace: 'co.sales', flowId: 'f', triggerId: 's', state: {} }, a.version)).rejects.toBeInstanceOf(ConflictError);
    expect(await t.get('co.sales', 'f', 's')).toEqual(b);
    const raw = (await h.co.getNamespacedCustomObject({ ...crd('triggerstates'), name: triggerStateName('co.sales', 'f', 's') })) as any;
    expect(raw.spec).toMatchObject({ namespace: 'co.sales', flowId: 'f', triggerId: 's', disabled: true, state: { last: 'x' } });
    expect(raw.metadata.resourceVersion).toBe(String(b.version));
  });

  it('two processes racing on the same version: exactly one wins', async () => {
    const peer = await h.openPeer();
    const a = await h.stores.triggers.put({ namespace: 'n', flowId: 'f', triggerId: 't', state: { n: 0 } }, 0);
    const results = await Promise.allSettled([
      h.stores.triggers.put({ namespace: 'n', flowId: 'f', triggerId: 't', state: { n: 1 } }, a.version),
      peer.triggers.put({ namespace: 'n', flowId: 'f', triggerId: 't', state: { n: 2 } }, a.version),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
  });

  it('lists by flow and by namespace including child namespaces only', async () => {
    const t = h.stores.triggers;
    for (const [ns, f] of [['co', 'a'], ['co.sales', 'b'], ['cox', 'c'], ['co_x', 'd']]) await t.put({ namespace: ns!, flowId: f!, triggerId: 't', state: {} }, 0);
    expect((await t.list({ namespace: 'co' })).map((r) => r.flowId)).toEqual(['a', 'b']);
    expect((await t.list({ namespace: 'co.sales', flowId: 'b' })).map((r) => r.flowId)).toEqual(['b']);
    expect(await t.list()).toHaveLength(4);
  });

  it('is durable across processes; marks are recorded once, atomically', async () => {
    await h.stores.triggers.put({ namespace: 'n', flowId: 'f', triggerId: 't', state: { n: 1 } }, 0);
    expect(await h.stores.triggers.mark('flow-trigger', 'exec1')).toBe(true);
    expect(await h.stores.triggers.mark('flow-trigger', 'exec1')).toBe(false);
    const other = await h.openPeer();
    expect((await other.triggers.get('n', 'f', 't'))?.state).toEqual({ n: 1 });
    expect(await other.triggers.isMarked('flow-trigger', 'exec1')).toBe(true);
    expect(await other.triggers.isMarked('flow-trigger', 'exec2')).toBe(false);
    expect(await other.triggers.isMarked('other-scope', 'exec1')).toBe(false);
    const racing = await Promise.all([h.stores.triggers.mark('s', 'k'), other.triggers.mark('s', 'k'), other.triggers.mark('s', 'k')]);
    expect(racing.filter(Boolean)).toHaveLength(1);
    expect(await other.triggers.delete('n', 'f', 't')).toBe(true);
    expect(await other.triggers.delete('n', 'f', 't')).toBe(false);
    expect(await other.triggers.get('n', 'f', 't')).toBeUndefined();
  });

  it('unmark deletes the mark\'s ConfigMap; purgeMarks deletes those of one scope made before a date', async () => {
    const t = h.stores.triggers;
    for (const k of ['a', 'b', 'c']) await t.mark('s3:co/f/t', k);
    await t.mark('flow-trigger', 'a');
    await t.unmark('s3:co/f/t', 'b');
    await t.unmark('s3:co/f/t', 'never');
    expect(await t.isMarked('s3:co/f/t', 'b')).toBe(false);
    expect(await t.purgeMarks('s3:co/f/t', '2000-01-01T00:00:00.000Z')).toBe(0);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(await t.purgeMarks('s3:co/f/t', later, 1)).toBe(1);
    expect(await t.purgeMarks('s3:co/f/t', later)).toBe(1);
    const core = h.srv.kubeConfig().makeApiClient(CoreV1Api);
    const left = await core.listNamespacedConfigMap({ namespace: K8S_NAMESPACE });
    expect(left.items.map((cm) => cm.data)).toEqual([expect.objectContaining({ scope: 'flow-trigger', key: 'a' })]);
  });
});
