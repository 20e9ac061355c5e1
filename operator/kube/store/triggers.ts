// TriggerStateStore on TriggerState resources (`triggerStateName`): version = resourceVersion as a number,
// compare-and-set through create (version 0) or a PUT carrying the resourceVersion read. Done-once marks are
// ConfigMaps named from a hash of (scope, key): creating one is atomic, an existing one answers 409; they are removed
// when their work is done (unmark) or purged by age (labelled by scope, `data.created`).
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ConflictError, type TriggerStateRecord, type TriggerStateStore } from '../../store/types.js';
import { KINDS, LABELS, MANAGER, triggerStateName } from '../names.js';
import { type CacheOptions, KubeCache } from './cache.js';
import { inNamespace } from './executions.js';
import { KindApi, type KubeObject, isConflict, isNotFound, rvNumber } from './kube-api.js';
import { MARK_LABEL, labelValue, markName, namespaceHash } from './labels.js';

interface TriggerSpec { namespace: string; flowId: string; triggerId: string; disabled?: boolean; state?: Record<string, unknown>; updated?: string }
type TriggerObject = KubeObject<TriggerSpec>;

const toRecord = (obj: TriggerObject): TriggerStateRecord => ({
  namespace: obj.spec.namespace, flowId: obj.spec.flowId, triggerId: obj.spec.triggerId, disabled: obj.spec.disabled === true,
  state: structuredClone(obj.spec.state ?? {}), updated: obj.spec.updated ?? obj.metadata.creationTimestamp ?? '', version: rvNumber(obj),
});

const order = (a: TriggerStateRecord, b: TriggerStateRecord): number =>
  cmp(a.namespace, b.namespace) || cmp(a.flowId, b.flowId) || cmp(a.triggerId, b.triggerId);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class KubeTriggerStateStore implements TriggerStateStore {
  readonly cache: KubeCache<TriggerObject>;
  private readonly api: KindApi<TriggerObject>;
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly namespace: string, opts: CacheOptions = {}) {
    this.api = new KindApi<TriggerObject>(kc, KINDS.TriggerState, namespace);
    this.cache = new KubeCache(kc, this.api, opts);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async get(namespace: string, flowId: string, triggerId: string): Promise<TriggerStateRecord | undefined> {
    await this.cache.ready();
    const obj = this.cache.get(triggerStateName(namespace, flowId, triggerId));
    return obj && this.matches(obj, namespace, flowId, triggerId) ? toRecord(obj) : undefined;
  }

  async list(query: { namespace?: string; flowId?: string } = {}): Promise<TriggerStateRecord[]> {
    await this.cache.ready();
    return this.cache.list()
      .filter((o) => (!query.namespace || (query.flowId ? o.spec.namespace === query.namespace : inNamespace(o.spec.namespace, query.namespace)))
        && (!query.flowId || o.spec.flowId === query.flowId))
      .map(toRecord).sort(order);
  }

  async put(rec: { namespace: string; flowId: string; triggerId: string; disabled?: boolean; state: Record<string, unknown> }, expected: number): Promise<TriggerStateRecord> {
    await this.cache.ready();
    const name = triggerStateName(rec.namespace, rec.flowId, rec.triggerId);
    const spec: TriggerSpec = {
      namespace: rec.namespace, flowId: rec.flowId, triggerId: rec.triggerId, disabled: rec.disabled === true,
      state: JSON.parse(JSON.stringify(rec.state ?? {})) as Record<string, unknown>, updated: new Date().toISOString(),
    };
    const conflict = () => new ConflictError(`Trigger ${rec.namespace}.${rec.flowId}.${rec.triggerId} changed since version ${expected}`);
    let written: TriggerObject;
    try {
      if (expected === 0) {
        written = await this.api.create(this.api.body({
          metadata: { name, labels: { [LABELS.managedBy]: MANAGER, [LABELS.flowId]: labelValue(rec.flowId), [LABELS.flowNamespaceHash]: namespaceHash(rec.namespace) } },
          spec,
        }));
      } else {
        const current = this.cache.get(name);
        const metadata = { ...(current?.metadata ?? { name }), name, resourceVersion: String(expected) };
        written = await this.api.replace(this.api.body({ metadata, spec }));
      }
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) {
        await this.cache.refresh(name).catch(() => undefined);
        throw conflict();
      }
      throw err;
    }
    this.cache.observe(written);
    return toRecord(written);
  }

  async delete(namespace: string, flowId: string, triggerId: string): Promise<boolean> {
    await this.cache.ready();
    const name = triggerStateName(namespace, flowId, triggerId);
    const current = this.cache.get(name);
    const res = await this.api.delete(name);
    if (res && 'metadata' in res) this.cache.observeDeleted(res);
    else if (current) this.cache.observeDeleted(current);
    return res !== undefined;
  }

  async mark(scope: string, key: string): Promise<boolean> {
    try {
      await this.core.createNamespacedConfigMap({
        namespace: this.namespace,
        body: {
          metadata: { name: markName(scope, key), labels: { [LABELS.managedBy]: MANAGER, [MARK_LABEL]: labelValue(scope) } },
          data: { scope, key, created: new Date().toISOString() },
        },
      });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  async isMarked(scope: string, key: string): Promise<boolean> {
    try {
      await this.core.readNamespacedConfigMap({ namespace: this.namespace, name: markName(scope, key) });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async unmark(scope: string, key: string): Promise<void> {
    try {
      await this.core.deleteNamespacedConfigMap({ namespace: this.namespace, name: markName(scope, key) });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async purgeMarks(scope: string, before: string, limit = 1000): Promise<number> {
    let removed = 0;
    let cont: string | undefined;
    do { // pages of the scope's marks, until `limit` old ones are deleted
      const page = await this.core.listNamespacedConfigMap({
        namespace: this.namespace, labelSelector: `${MARK_LABEL}=${labelValue(scope)}`, limit: 500, ...(cont ? { _continue: cont } : {}),
      });
      for (const cm of page.items) {
        if (removed >= limit) return removed;
        if (cm.data?.scope !== scope || (cm.data?.created ?? '') >= before) continue;
        try {
          await this.core.deleteNamespacedConfigMap({ namespace: this.namespace, name: cm.metadata!.name! });
          removed++;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      cont = page.metadata?._continue;
    } while (cont);
    return removed;
  }

  private matches(obj: TriggerObject, namespace: string, flowId: string, triggerId: string): boolean {
    return obj.spec.namespace === namespace && obj.spec.flowId === flowId && obj.spec.triggerId === triggerId;
  }
}
