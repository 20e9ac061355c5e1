// KVStore on KVPair resources (`kvName(ns, key)`): typed values and TTLs as in the embedded store (kv-types.ts);
// reads (including the synchronous getSync of the kv() template function) come from the informer cache.
// Expired pairs are invisible and deleted lazily (conditionally on their resourceVersion, so a fresh write survives).
import type { KubeConfig } from '@kubernetes/client-node';
import { safeData } from '../../core/keyed.js';
import { expirationFromTtl, kvInputError, typedKVValue } from '../../store/sqlite/kv-types.js';
import type { KVEntry, KVStore, KVType } from '../../store/types.js';
import { KINDS, LABELS, MANAGER, kvName } from '../names.js';
import { type CacheOptions, KubeCache } from './cache.js';
import { KindApi, type KubeObject, isConflict, isNotFound, retrying } from './kube-api.js';
import { MissReads } from './read-through.js';

interface KVSpec { namespace: string; key: string; type?: KVType; value?: unknown; expirationDate?: string; updated?: string }
type KVObject = KubeObject<KVSpec>;

function toEntry(obj: KVObject): KVEntry {
  const s = obj.spec;
  const entry: KVEntry = {
    namespace: s.namespace, key: s.key, type: s.type ?? 'JSON', value: safeData(s.value ?? null),
    updated: s.updated ?? obj.metadata.creationTimestamp ?? '',
  };
  if (s.expirationDate) entry.expirationDate = s.expirationDate;
  return entry;
}

const expired = (obj: KVObject, nowMs = Date.now()): boolean =>
  obj.spec.expirationDate !== undefined && Date.parse(obj.spec.expirationDate) <= nowMs;

export class KubeKVStore implements KVStore {
  readonly cache: KubeCache<KVObject>;
  private readonly api: KindApi<KVObject>;

  /** Direct reads behind cache misses of `get` (a pair written by another process, not yet watched), bounded. */
  readonly misses: MissReads;

  constructor(kc: KubeConfig, namespace: string, opts: CacheOptions = {}, misses = new MissReads()) {
    this.misses = misses;
    this.api = new KindApi<KVObject>(kc, KINDS.KVPair, namespace);
    this.cache = new KubeCache(kc, this.api, opts);
    this.cache.addIndex('namespace', (o) => (typeof o.spec?.namespace === 'string' ? [o.spec.namespace] : []));
    this.cache.on((e) => { if (e.type !== 'deleted') this.misses.forget(e.obj.metadata.name); });
  }

  /** From the cache; a pair the cache does not hold is read from the server (getSync, for kv(), never waits). */
  async get(namespace: string, key: string): Promise<KVEntry | undefined> {
    await this.cache.ready();
    if (!this.find(namespace, key)) {
      const name = kvName(namespace, key);
      await this.misses.read(name, () => this.cache.refresh(name));
    }
    return this.getSync(namespace, key);
  }

  getSync(namespace: string, key: string): KVEntry | undefined {
    const obj = this.find(namespace, key);
    if (!obj) return undefined;
    if (expired(obj)) {
      this.purge(obj);
      return undefined;
    }
    return toEntry(obj);
  }

  async set(entry: { namespace: string; key: string; value: unknown; type?: KVType; ttl?: string; overwrite?: boolean }): Promise<KVEntry> {
    if (!entry.namespace || !entry.key) throw kvInputError('KV namespace and key are required');
    const typed = typedKVValue(entry.value, entry.type);
    const now = new Date();
    const spec: KVSpec = { namespace: entry.namespace, key: entry.key, type: typed.type, value: typed.value ?? null, updated: now.toISOString() };
    if (entry.ttl) spec.expirationDate = expirationFromTtl(entry.ttl, now);
    await this.cache.ready();
    const name = kvName(entry.namespace, entry.key);
    const written = await retrying(10, (err) => isConflict(err) || isNotFound(err), async (attempt) => {
      const current = attempt > 0 ? await this.cache.refresh(name) : this.cache.get(name);
      if (current && entry.overwrite === false && !expired(current)) {
        const err = kvInputError(`KV key '${entry.key}' already exists in namespace '${entry.namespace}' and overwrite is false`);
        err.status = 409;
        throw err;
      }
      if (!current) {
        try {
          return await this.api.create(this.api.body({ metadata: { name, labels: { [LABELS.managedBy]: MANAGER } }, spec }));
        } catch (err) {
          if (isConflict(err)) await this.cache.refresh(name);
          throw err;
        }
      }
      return this.api.replace(this.api.body({ metadata: current.metadata, spec }));
    });
    this.cache.observe(written);
    return toEntry(written);
  }

  async delete(namespace: string, key: string): Promise<boolean> {
    await this.cache.ready();
    const name = kvName(namespace, key);
    const current = this.cache.get(name) ?? (await this.cache.refresh(name));
    if (!current) return false;
    const res = await this.api.delete(name);
    this.cache.observeDeleted(res && 'metadata' in res ? res : current);
    return res !== undefined && !expired(current);
  }

  async list(namespace: string): Promise<KVEntry[]> {
    await this.cache.ready();
    const now = Date.now();
    const out: KVEntry[] = [];
    for (const obj of this.cache.byIndex('namespace', namespace)) {
      if (expired(obj, now)) this.purge(obj);
      else out.push(toEntry(obj));
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  private find(namespace: string, key: string): KVObject | undefined {
    const obj = this.cache.get(kvName(namespace, key));
    return obj && obj.spec.namespace === namespace && obj.spec.key === key ? obj : undefined;
  }

  /** Deletes an expired pair unless it was rewritten since (precondition on its resourceVersion); best effort. */
  private purge(obj: KVObject): void {
    this.api.delete(obj.metadata.name, obj.metadata.resourceVersion)
      .then((res) => { if (res) this.cache.observeDeleted(res && 'metadata' in res ? res : obj); })
      .catch(() => undefined);
  }
}
