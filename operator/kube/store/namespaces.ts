// NamespaceStore on FlowNamespace resources (`flowNamespaceName(id)`): version = resourceVersion as a number. `chain`
// (read for every execution step) answers from the informer cache only; `get` reads through on a miss (a namespace
// another process just wrote), bounded like the other stores' misses.
import type { KubeConfig } from '@kubernetes/client-node';
import { safeData } from '../../core/keyed.js';
import type { PluginDefault } from '../../core/types.js';
import { namespaceChain } from '../../model/namespaces.js';
import { ConflictError, type NamespaceRecord, type NamespaceSpec, type NamespaceStore } from '../../store/types.js';
import { KINDS, LABELS, MANAGER, flowNamespaceName } from '../names.js';
import { type CacheOptions, KubeCache } from './cache.js';
import { KindApi, type KubeObject, isConflict, isNotFound, retrying, rvNumber } from './kube-api.js';
import { MissReads } from './read-through.js';

interface NsSpec { id: string; description?: string; variables?: Record<string, unknown>; pluginDefaults?: PluginDefault[]; updated?: string }
type NsObject = KubeObject<NsSpec>;

function toRecord(obj: NsObject): NamespaceRecord {
  const s = obj.spec;
  const rec: NamespaceRecord = {
    id: s.id, variables: safeData(s.variables ?? {}), pluginDefaults: safeData(s.pluginDefaults ?? []),
    updated: s.updated ?? obj.metadata.creationTimestamp ?? '', version: rvNumber(obj),
  };
  if (s.description !== undefined) rec.description = s.description;
  return rec;
}

export class KubeNamespaceStore implements NamespaceStore {
  readonly cache: KubeCache<NsObject>;
  private readonly api: KindApi<NsObject>;
  /** Records `chain` made from cached objects (a new object per resourceVersion, so no stale entry is reused). */
  private readonly converted = new WeakMap<NsObject, NamespaceRecord>();

  constructor(kc: KubeConfig, namespace: string, opts: CacheOptions = {}, readonly misses = new MissReads()) {
    this.api = new KindApi<NsObject>(kc, KINDS.FlowNamespace, namespace);
    this.cache = new KubeCache(kc, this.api, opts);
    this.cache.on((e) => { if (e.type !== 'deleted') this.misses.forget(e.obj.metadata.name); });
  }

  async get(id: string): Promise<NamespaceRecord | undefined> {
    await this.cache.ready();
    const name = flowNamespaceName(id);
    if (!this.find(id)) await this.misses.read(name, () => this.cache.refresh(name));
    const obj = this.find(id);
    return obj && toRecord(obj);
  }

  async list(): Promise<NamespaceRecord[]> {
    await this.cache.ready();
    return this.cache.list().filter((o) => typeof o.spec?.id === 'string').map(toRecord)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async put(spec: NamespaceSpec, opts: { create?: boolean } = {}): Promise<NamespaceRecord> {
    await this.cache.ready();
    const name = flowNamespaceName(spec.id);
    const body: NsSpec = { id: spec.id, variables: spec.variables, pluginDefaults: spec.pluginDefaults, updated: new Date().toISOString() };
    if (spec.description !== undefined) body.description = spec.description;
    const written = await retrying(10, (err) => isConflict(err) || isNotFound(err), async (attempt) => {
      const current = attempt > 0 ? await this.cache.refresh(name) : this.cache.get(name) ?? (await this.cache.refresh(name));
      if (current && opts.create) throw new ConflictError(`Namespace '${spec.id}' already exists`);
      if (!current) {
        try {
          return await this.api.create(this.api.body({ metadata: { name, labels: { [LABELS.managedBy]: MANAGER } }, spec: body }));
        } catch (err) {
          if (isConflict(err)) await this.cache.refresh(name);
          throw err;
        }
      }
      return this.api.replace(this.api.body({ metadata: current.metadata, spec: body }));
    });
    this.cache.observe(written);
    return toRecord(written);
  }

  async delete(id: string): Promise<boolean> {
    await this.cache.ready();
    const name = flowNamespaceName(id);
    const current = this.find(id) ?? (await this.cache.refresh(name));
    if (!current) return false;
    const res = await this.api.delete(name);
    this.cache.observeDeleted(res && 'metadata' in res ? res : current);
    return res !== undefined;
  }

  async chain(namespace: string): Promise<NamespaceRecord[]> {
    await this.cache.ready();
    return this.chainSync(namespace);
  }

  /** `chain` from the cache as it is (the admission webhook answers synchronously). */
  chainSync(namespace: string): NamespaceRecord[] {
    return namespaceChain(namespace).flatMap((id) => {
      const obj = this.find(id);
      if (!obj) return [];
      // The copy of a cached resource is made once per resourceVersion (variables may be large; chain runs every step).
      const known = this.converted.get(obj);
      if (known) return [known];
      const rec = toRecord(obj);
      this.converted.set(obj, rec);
      return [rec];
    });
  }

  private find(id: string): NsObject | undefined {
    const obj = this.cache.get(flowNamespaceName(id));
    return obj && obj.spec?.id === id ? obj : undefined;
  }
}
