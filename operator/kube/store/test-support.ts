// Test support for the cluster store tests: the in-process Kubernetes API test server with the repository's CRDs,
// cluster stores on it (embedded SQLite logs and local storage, which are real), raw CustomObjectsApi access, polling.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer, type KubeTestServerOptions } from '../../../test/kube/test-server/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import { GROUP, VERSION } from '../names.js';
import { type KubeStores, openKubeStores } from './index.js';

export const K8S_NAMESPACE = 'flowpilot-test';

export interface StoreHarness {
  srv: KubeTestServer;
  stores: KubeStores;
  /** Raw API access, as kubectl or another process would do it. */
  co: CustomObjectsApi;
  /** Another set of stores on the same server (another process: the API beside the operator). */
  openPeer(): Promise<KubeStores>;
  close(): Promise<void>;
}

export async function startStoreHarness(server: KubeTestServerOptions = {}): Promise<StoreHarness> {
  const srv = await startKubeTestServer(server);
  const dirs: ReturnType<typeof tempDir>[] = [];
  const embedded: EmbeddedStores[] = [];
  const opened: KubeStores[] = [];
  const open = async (): Promise<KubeStores> => {
    const tmp = tempDir('kube-store-');
    dirs.push(tmp);
    const local = openEmbeddedStores(tmp.dir);
    embedded.push(local);
    const stores = await openKubeStores({ kc: srv.kubeConfig(), namespace: K8S_NAMESPACE, logs: local.logs, storage: local.storage, resyncMs: 0 });
    opened.push(stores);
    await stores.ready();
    return stores;
  };
  const stores = await open();
  return {
    srv, stores, co: srv.kubeConfig().makeApiClient(CustomObjectsApi), openPeer: open,
    async close() {
      for (const s of opened) await s.close();
      for (const e of embedded) await e.close();
      await srv.close();
      for (const d of dirs) d.remove();
    },
  };
}

/** Parameters of CustomObjectsApi calls for one plural in the test namespace. */
export const crd = (plural: string) => ({ group: GROUP, version: VERSION, namespace: K8S_NAMESPACE, plural });

/** Polls `fn` until it returns a truthy value (generous timeout; never asserts on timing). */
export async function until<T>(fn: () => T | Promise<T>, what = 'condition', timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
