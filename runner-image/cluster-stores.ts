// The stores of a task Pod in cluster mode: the internal storage bucket (S3), the PostgreSQL log store and the KVPair
// resources of the watched namespace (in-cluster credentials, or KUBECONFIG), from the environment the operator gives
// task Pods (STORAGE_S3_*, LOG_STORE_URL, WATCH_NAMESPACE; see docs/kubernetes.md). Flow secrets arrive as
// `FLOWPILOT_SECRET_<NAME>` variables (envFrom of the flow-secrets Secret), read by operator/secrets/env.ts.
import { KubeConfig } from '@kubernetes/client-node';
import { storageFromEnv } from '../operator/kube/config.js';
import { openClusterEdges } from '../operator/kube/edges.js';
import { KubeKVStore } from '../operator/kube/store/kv.js';
import type { RunnerStores } from './stores.js';

/** True when the environment describes cluster-mode stores. */
export const isClusterEnv = (env: NodeJS.ProcessEnv): boolean => !!env.STORAGE_S3_ENDPOINT;

export async function openClusterRunnerStores(env: NodeJS.ProcessEnv): Promise<RunnerStores> {
  if (!env.LOG_STORE_URL) throw new Error('LOG_STORE_URL is required in cluster mode');
  const edges = await openClusterEdges({ storage: storageFromEnv(env), logStoreUrl: env.LOG_STORE_URL, maxConnections: 2 });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const kv = new KubeKVStore(kc, env.WATCH_NAMESPACE || 'default');
  kv.cache.start(); // getSync (the kv() function) reads the cache: fill it before the task runs
  try {
    await kv.cache.ready();
  } catch (err) {
    await edges.close();
    throw err;
  }
  let closed = false;
  return {
    storage: edges.storage, kv, logs: edges.logs,
    async close() {
      if (closed) return;
      closed = true;
      try { await edges.close(); } finally { await kv.cache.stop(); }
    },
  };
}
