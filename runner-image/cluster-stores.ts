// The stores of a task Pod in cluster mode: the internal storage bucket (S3), the PostgreSQL log store and the KVPair
// resources of the watched namespace (in-cluster credentials, or KUBECONFIG), from the environment the operator gives
// task Pods (STORAGE_S3_*, LOG_STORE_URL, WATCH_NAMESPACE; see docs/kubernetes.md). Flow secrets arrive as
// `FLOWPILOT_SECRET_<NAME>` variables (envFrom of the flow-secrets Secret), read by operator/secrets/env.ts.
// ready() waits for the KV cache's first list under the start deadline: an API server that answers 503 or is
// unreachable for a while (restarting, overloaded) only delays the task; a permanent refusal (403) fails at once.
import { KubeConfig } from '@kubernetes/client-node';
import { isTransient } from '../operator/faults.js';
import { storageFromEnv } from '../operator/kube/config.js';
import { openClusterEdges } from '../operator/kube/edges.js';
import { apiMessage, statusCode } from '../operator/kube/store/kube-api.js';
import { KubeKVStore } from '../operator/kube/store/kv.js';
import type { Deadline } from './deadline.js';
import type { RunnerStores } from './stores.js';

/** True when the environment describes cluster-mode stores. */
export const isClusterEnv = (env: NodeJS.ProcessEnv): boolean => !!env.STORAGE_S3_ENDPOINT;

/** A list/watch failure in words: the API's own message and its status (or 'network'). */
const described = (err: unknown): Error => new Error(`${statusCode(err) ?? 'network error'}: ${apiMessage(err)}`);

/** The stores, at once (no I/O yet): call `ready()` before the task runs, it waits for the KV cache's first list. */
export async function openClusterRunnerStores(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<RunnerStores> {
  if (!env.LOG_STORE_URL) throw new Error('LOG_STORE_URL is required in cluster mode');
  const edges = await openClusterEdges({ storage: storageFromEnv(env), logStoreUrl: env.LOG_STORE_URL, maxConnections: 2 });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  let refuse!: (err: Error) => void;
  const refused = new Promise<never>((_, reject) => { refuse = reject; });
  refused.catch(() => {});
  let last: Error | undefined;
  const kv = new KubeKVStore(kc, env.WATCH_NAMESPACE || 'default', {
    onError: (err) => {
      last = described(err);
      if (!kv.cache.isSynced && !isTransient(err)) refuse(last);
      else log(`listing KV pairs failed (${last.message}); retrying`);
    },
  });
  let closed = false;
  return {
    storage: edges.storage, kv, logs: edges.logs,
    async ready(start: Deadline) {
      kv.cache.start(); // getSync (the kv() function) reads the cache: fill it before the task runs
      await start.wait('listing KV pairs', kv.cache.ready(), refused, () => last);
    },
    async close() {
      if (closed) return;
      closed = true;
      try { await edges.close(); } finally { await kv.cache.stop(); }
    },
  };
}
