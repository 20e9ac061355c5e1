// Informer cache resilience against the Kubernetes API test server: watches the server ends are resumed from the last
// resourceVersion, and a watch that fell out of the server's history (410 Expired) re-lists, dropping deleted objects;
// lists are read in pages.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { sampleExecution } from '../../store/sqlite/test-fixtures.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import type { WatchEvent } from '../../store/types.js';
import { KINDS } from '../names.js';
import { KindApi, type KubeObject } from './kube-api.js';
import { K8S_NAMESPACE, type StoreHarness, startStoreHarness, until } from './test-support.js';

let h: StoreHarness;
beforeEach(async () => { h = await startStoreHarness({ historyLimit: 5 }); });
afterEach(async () => { await h.close(); });

it('resumes after the server ends its watches', async () => {
  const peer = await h.openPeer();
  await peer.kv.set({ namespace: 'ns', key: 'before', value: 1 });
  await until(() => h.stores.kv.getSync('ns', 'before'), 'the first pair');
  h.srv.closeWatches();
  await peer.kv.set({ namespace: 'ns', key: 'after', value: 2 });
  await until(() => h.stores.kv.getSync('ns', 'after'), 'a pair written after the watch ended');
  expect(h.stores.kv.getSync('ns', 'before')?.value).toBe(1);
});

it('re-lists when its resourceVersion expired, removing what was deleted meanwhile and announcing what is new', async () => {
  const peer = await h.openPeer();
  await peer.kv.set({ namespace: 'ns', key: 'doomed', value: 1 });
  await until(() => h.stores.kv.getSync('ns', 'doomed'), 'the pair');
  const events: WatchEvent[] = [];
  h.stores.executions.watch((e) => events.push(e));
  const lists = h.srv.stats.reads['LIST kvpairs'] ?? 0;
  h.srv.suspendWatches();
  await peer.kv.delete('ns', 'doomed');
  for (let i = 0; i < 8; i++) await peer.kv.set({ namespace: 'ns', key: `k${i}`, value: i });
  await peer.executions.create(sampleExecution('while-away'));
  h.srv.resumeWatches();
  await until(() => h.stores.kv.getSync('ns', 'k7'), 'the re-list');
  await until(() => h.stores.kv.getSync('ns', 'doomed') === undefined, 'the deleted pair to go');
  expect(h.srv.stats.reads['LIST kvpairs']).toBeGreaterThan(lists);
  expect((await h.stores.kv.list('ns')).map((e) => e.key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
  await until(() => events.length > 0, 'the execution created while the watch was away');
  expect(events[0]).toMatchObject({ type: 'ADDED', execution: { id: 'while-away' } });
});

it('resync() heals the cache without a watch', async () => {
  const peer = await h.openPeer();
  await peer.kv.set({ namespace: 'ns', key: 'old', value: 1 });
  await until(() => h.stores.kv.getSync('ns', 'old'), 'the pair');
  h.srv.suspendWatches();
  await peer.kv.delete('ns', 'old');
  await peer.kv.set({ namespace: 'ns', key: 'new', value: 2 });
  await h.stores.kv.cache.resync();
  expect(h.stores.kv.getSync('ns', 'old')).toBeUndefined();
  expect(h.stores.kv.getSync('ns', 'new')?.value).toBe(2);
  h.srv.resumeWatches();
});

it('ready(timeout) names the kinds that cannot be listed and why', async () => {
  const { startKubeTestServer } = await import('../../../test/kube/test-server/index.js');
  const { openKubeStores } = await import('./index.js');
  const empty = tempDir('no-crds-');
  const bare = await startKubeTestServer({ crdDir: empty.dir });
  const local = h.stores;
  const stores = await openKubeStores({ kc: bare.kubeConfig(), namespace: 'x', logs: local.logs, storage: local.storage, resyncMs: 0, onWatchError: () => {} });
  try {
    await expect(stores.ready(1_000)).rejects.toThrow(/not synced.*flows \(404/);
  } finally {
    await stores.close();
    await bare.close();
    empty.remove();
  }
});

it('a re-list drops an object only our own write had put in the cache', async () => {
  const peer = await h.openPeer();
  h.srv.suspendWatches();
  await h.stores.kv.set({ namespace: 'ns', key: 'mine', value: 1 }); // known from the write response only
  await peer.kv.delete('ns', 'mine');
  for (let i = 0; i < 8; i++) await peer.kv.set({ namespace: 'ns', key: `k${i}`, value: i });
  expect(h.stores.kv.getSync('ns', 'mine')?.value).toBe(1);
  h.srv.resumeWatches();
  await until(() => h.stores.kv.getSync('ns', 'k7'), 'the re-list');
  expect(h.stores.kv.getSync('ns', 'mine')).toBeUndefined();
});

it('lists in pages (limit + continue) and keeps the first page\'s resourceVersion', async () => {
  for (let i = 0; i < 12; i++) await h.stores.kv.set({ namespace: 'paged', key: `p${String(i).padStart(2, '0')}`, value: i });
  const api = new KindApi<KubeObject>(h.srv.kubeConfig(), KINDS.KVPair, K8S_NAMESPACE);
  const lists = h.srv.stats.reads['LIST kvpairs'] ?? 0;
  const list = await api.list(undefined, 5);
  expect(h.srv.stats.reads['LIST kvpairs']! - lists).toBe(3);
  expect(list.items.map((o) => o.metadata.name).sort()).toEqual((await api.list()).items.map((o) => o.metadata.name).sort());
  expect(list.items).toHaveLength(12);
  expect(list.metadata?.continue).toBeUndefined();
  expect(Number(list.metadata?.resourceVersion)).toBeGreaterThan(0);
});

it('keeps managedFields out of the cache; a write from the cached copy leaves the server\'s unchanged', async () => {
  const managedFields = [{ manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'flowpilot.io/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:value': {} } } }];
  const api = new KindApi<KubeObject>(h.srv.kubeConfig(), KINDS.KVPair, K8S_NAMESPACE);
  await h.stores.kv.set({ namespace: 'mf', key: 'k', value: 1 });
  const name = h.stores.kv.cache.list().find((o) => (o.spec as { key?: string }).key === 'k')!.metadata.name;
  const stored = (await api.get(name))!;
  await api.replace({ ...stored, metadata: { ...stored.metadata, managedFields } }); // another writer, e.g. kubectl
  await until(() => h.stores.kv.cache.get(name) && h.stores.kv.cache.get(name)!.metadata.resourceVersion !== stored.metadata.resourceVersion, 'the watched change');
  expect(h.stores.kv.cache.get(name)!.metadata.managedFields).toBeUndefined();
  await h.stores.kv.set({ namespace: 'mf', key: 'k', value: 2 }); // a PUT built from the cached copy
  const after = (await api.get(name))!;
  expect((after.spec as { value?: unknown }).value).toBe(2);
  expect(after.metadata.managedFields).toEqual(managedFields);
  expect(h.stores.kv.cache.get(name)!.metadata.managedFields).toBeUndefined();
});
