// Cluster stores: flows, executions, KV, namespaces and trigger state on flowpilot.io/v1 custom resources in one Kubernetes
// namespace (informer caches + conditional writes), composed with a LogStore and an InternalStorage given by the caller.
import type { KubeConfig } from '@kubernetes/client-node';
import { namespaceContextOf } from '../../model/namespaces.js';
import type { InternalStorage, LogStore, Stores } from '../../store/types.js';
import type { ExecutionArchive } from '../archive/types.js';
import type { CacheOptions } from './cache.js';
import { apiMessage, statusCode } from './kube-api.js';
import { KubeExecutionStore } from './executions.js';
import { KubeFlowStore } from './flows.js';
import { KubeKVStore } from './kv.js';
import { KubeNamespaceStore } from './namespaces.js';
import { MissReads, readMissTtlMs } from './read-through.js';
import { KubeTriggerStateStore } from './triggers.js';

export { KubeExecutionStore } from './executions.js';
export { KubeFlowStore, type ReconcileResult } from './flows.js';
export { KubeKVStore } from './kv.js';
export { KubeNamespaceStore } from './namespaces.js';
export { KubeTriggerStateStore } from './triggers.js';
export { RECORD_GZ_THRESHOLD } from './execution-codec.js';

export interface KubeStores extends Stores {
  flows: KubeFlowStore;
  executions: KubeExecutionStore;
  kv: KubeKVStore;
  namespaces: KubeNamespaceStore;
  triggers: KubeTriggerStateStore;
  /**
   * Resolves when every informer cache holds its first list (store reads also wait for it). With `timeoutMs`,
   * rejects after that long naming the kinds not synced and their last error (CRDs missing, RBAC, unreachable server).
   */
  ready(timeoutMs?: number): Promise<void>;
  /** Stops the informers, then runs `onClose` (closing the log store / storage the caller owns, if it says so). */
  close(): Promise<void>;
}

export interface KubeStoresOptions {
  kc: KubeConfig;
  /** Kubernetes namespace the resources live in (not a flow namespace). */
  namespace: string;
  logs: LogStore;
  storage: InternalStorage;
  /** Period of the full re-list that heals missed watch events (default 30 min; 0 disables). */
  resyncMs?: number;
  /** List/watch failures (default: a console warning per failure streak; the watch restarts with backoff). */
  onWatchError?: (err: unknown) => void;
  /** Execution history (finished executions whose resources may be deleted): reads fall back to it. */
  archive?: ExecutionArchive;
  /**
   * How long a name confirmed missing by a direct read is answered from memory (default KUBE_READ_MISS_TTL_MS from the
   * environment, else 1000 ms): reads of names the caches do not hold go to the API server, bounded by this.
   */
  readMissTtlMs?: number;
  /** Run by close() after the informers stopped, e.g. to close the log store. */
  onClose?: () => Promise<void> | void;
}

/** Creates the stores and starts their informers (not waiting for them: call `ready()`). */
export async function openKubeStores(opts: KubeStoresOptions): Promise<KubeStores> {
  const cacheOpts: CacheOptions = { resyncMs: opts.resyncMs, onError: opts.onWatchError };
  const ttl = opts.readMissTtlMs ?? readMissTtlMs();
  const namespaces = new KubeNamespaceStore(opts.kc, opts.namespace, cacheOpts, new MissReads(ttl));
  const inherited = async (ns: string) => namespaceContextOf(await namespaces.chain(ns))?.pluginDefaults ?? [];
  const flows = new KubeFlowStore(opts.kc, opts.namespace, cacheOpts, new MissReads(ttl), inherited);
  const executions = new KubeExecutionStore(opts.kc, opts.namespace, cacheOpts, opts.archive, new MissReads(ttl));
  const kv = new KubeKVStore(opts.kc, opts.namespace, cacheOpts, new MissReads(ttl));
  const triggers = new KubeTriggerStateStore(opts.kc, opts.namespace, cacheOpts);
  const caches = [flows.res.flows, flows.res.revisions, executions.cache, kv.cache, namespaces.cache, triggers.cache];
  for (const cache of caches) cache.start();
  let closed = false;
  return {
    flows, executions, kv, namespaces, triggers, logs: opts.logs, storage: opts.storage,
    async ready(timeoutMs?: number) {
      const all = Promise.all(caches.map((c) => c.ready()));
      if (timeoutMs === undefined) { await all; return; }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const pending = caches.filter((c) => !c.isSynced)
            .map((c) => `${c.api.kind.plural}${c.lastError ? ` (${statusCode(c.lastError) ?? 'network'}: ${apiMessage(c.lastError)})` : ''}`);
          reject(new Error(`Kubernetes caches not synced after ${timeoutMs} ms: ${pending.join(', ')}`));
        }, timeoutMs);
      });
      try { await Promise.race([all, timeout]); } finally { clearTimeout(timer); }
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(caches.map((c) => c.stop()));
      await opts.logs.flush();
      await opts.onClose?.();
    },
  };
}
