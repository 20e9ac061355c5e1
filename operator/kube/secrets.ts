// Kubernetes Secrets as the source of `secret('NAME')` in cluster mode: informer-backed caches over the operator's
// namespace (one Secret named by a setting, default `flowpilot-secrets`, and Secrets labelled `flowpilot.io/secret=true`),
// whose data keys are the secret names. `lookup` is synchronous, as the template renderer needs.
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { type Cache, leanSecret, makeLeanInformer } from './informer.js';
import { GROUP } from './names.js';
import type { PageReader } from './store/kube-api.js';
import { restartOnWatchError } from './watch-restart.js';

export const DEFAULT_SECRET_NAME = 'flowpilot-secrets';
export const SECRET_LABEL = `${GROUP}/secret`;

export interface KubeSecretsOptions {
  kc: KubeConfig;
  namespace: string;
  /** The Secret whose keys are secret names (default `flowpilot-secrets`); null to use labelled Secrets only. */
  secretName?: string | null;
  /** Also read every Secret labelled `flowpilot.io/secret=true` (default true). */
  labelled?: boolean;
  /** Delay before a failed list/watch is restarted (default 1 s). */
  retryMs?: number;
  onError?: (err: Error) => void;
}

export interface KubeSecretSource {
  /** The decoded value of a secret, or undefined. The named Secret wins; among labelled ones, the first by name. */
  lookup(name: string): string | undefined;
  /** Secret names currently known. */
  names(): string[];
  /** Every secret value currently known, for the masker only (refreshed through `onChange`). */
  values(): string[];
  /** Called after each change of the cached Secrets. */
  onChange(listener: () => void): () => void;
  stop(): Promise<void>;
}

function decode(secret: V1Secret): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(secret.data ?? {})) out.set(key, Buffer.from(value, 'base64').toString('utf8'));
  return out;
}

/** Starts the informers and resolves once their first list is in the cache; rejects when the Secrets cannot be listed. */
export async function startKubeSecrets(options: KubeSecretsOptions): Promise<KubeSecretSource> {
  const { kc, namespace } = options;
  const secretName = options.secretName === undefined ? DEFAULT_SECRET_NAME : options.secretName;
  const retryMs = options.retryMs ?? 1000;
  const onError = options.onError ?? ((err: Error) => console.warn(`secrets informer (${namespace}): ${err.message ?? err}`));
  const core = kc.makeApiClient(CoreV1Api);
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const informers: Cache<V1Secret>[] = [];
  const listeners = new Set<() => void>();
  let stopped = false;
  let values = new Map<string, string>();

  const rebuild = () => {
    const next = new Map<string, string>();
    const labelled = informers.slice(secretName ? 1 : 0).flatMap((i) => i.list(namespace));
    labelled.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    const named = secretName ? informers[0]!.list(namespace).filter((s) => s.metadata?.name === secretName) : [];
    // Later writes win: labelled Secrets in reverse name order, then the named Secret.
    for (const s of [...labelled.reverse(), ...named]) for (const [k, v] of decode(s)) next.set(k, v);
    values = next;
    for (const l of listeners) { try { l(); } catch (err) { onError(err as Error); } }
  };

  const lists: (() => Promise<unknown>)[] = [];
  const add = (selectors: { labelSelector?: string; fieldSelector?: string }) => {
    const read: PageReader<V1Secret> = (page) => core.listNamespacedSecret({ namespace, ...selectors, ...page });
    lists.push(() => read({ limit: 1 }));
    const informer = makeLeanInformer<V1Secret>(kc, path, read, { ...selectors, transform: leanSecret });
    informer.on('change', rebuild);
    // Routine watch ends restart quietly at once; failures back off (from retryMs) and are reported once per streak.
    restartOnWatchError(informer as never, {
      report: (err) => onError(err instanceof Error ? err : new Error(String((err as { message?: string })?.message ?? err))),
      stopped: () => stopped,
    }, retryMs);
    informers.push(informer);
  };

  // Only the Secrets needed, on the server's side: the named one (field selector) and the labelled ones.
  if (secretName) add({ fieldSelector: `metadata.name=${secretName}` });
  if (options.labelled ?? true) add({ labelSelector: `${SECRET_LABEL}=true` });
  // One direct list first, so that a missing permission or an unreachable API fails the start instead of leaving an
  // empty cache behind (the informers retry on their own afterwards).
  await Promise.all(lists.map((list) => list()));
  await Promise.all(informers.map((i) => i.start()));
  rebuild();

  return {
    lookup: (name) => values.get(name),
    names: () => [...values.keys()].sort(),
    values: () => [...values.values()],
    onChange(listener) { listeners.add(listener); return () => listeners.delete(listener); },
    async stop() {
      stopped = true;
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}
