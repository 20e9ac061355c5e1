// Informers for the built-in kinds the operator watches (task Jobs and Pods, flow-secret Secrets, inference runner
// Jobs): client-node's ListWatch over a paged list (store/kube-api.ts listPages), keeping a lean copy of each object
// (`transform`, applied to listed and watched objects alike) so a cache of thousands of finished Jobs holds only what
// the operator reads, not their Pod templates and managedFields.
import {
  ListWatch, Watch, type Informer, type KubeConfig, type KubernetesObject, type ObjectCache, type V1Job, type V1Pod, type V1Secret,
} from '@kubernetes/client-node';
import { listPages, type ListPage, type PageReader, LIST_PAGE } from './store/kube-api.js';

export type Cache<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface LeanInformerOptions<T> {
  labelSelector?: string;
  fieldSelector?: string;
  /** The copy kept in the cache and given to listeners (default: the object as served). */
  transform?: (obj: T) => T;
  pageSize?: number;
}

/** Hands watched objects through `transform` before the ListWatch caches them (ERROR and BOOKMARK events pass as they are). */
class TransformingWatch<T> extends Watch {
  constructor(kc: KubeConfig, private readonly transform: (obj: T) => T) { super(kc); }

  override watch(path: string, query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: any, watchObj?: any) => void, done: (err: any) => void): Promise<AbortController> {
    return super.watch(path, query, (phase, obj, raw) => {
      const lean = phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? this.transform(obj as T) : obj;
      callback(phase, lean, raw);
    }, done);
  }
}

/**
 * An informer (not started) on `path` whose list is `read` page by page and whose watch carries the same selectors
 * (a real server then watches only the matching objects).
 */
export function makeLeanInformer<T extends KubernetesObject>(kc: KubeConfig, path: string, read: PageReader<T>, o: LeanInformerOptions<T> = {}): Cache<T> {
  const transform = o.transform ?? ((x: T) => x);
  const list = async () => {
    const all = await listPages(read, o.pageSize ?? LIST_PAGE);
    return { ...all, items: all.items.map(transform) } as ListPage<T> & { items: T[] };
  };
  return new ListWatch<T>(path, new TransformingWatch<T>(kc, transform), list as never, false, o.labelSelector, o.fieldSelector);
}

/**
 * The object without `metadata.managedFields` (a real server lists there every field path each writer set: for an
 * Execution with its record in status, about as many keys as the record). Safe for objects written back: a PUT or
 * patch without managedFields leaves the server's unchanged.
 */
export function withoutManagedFields<T extends { metadata?: object }>(obj: T): T {
  const meta = obj.metadata as { managedFields?: unknown } | undefined;
  if (!meta || !('managedFields' in meta)) return obj;
  const { managedFields: _managed, ...metadata } = meta;
  return { ...obj, metadata };
}

/** Metadata without managedFields and kubectl's last-applied copy (both can outweigh the object itself). */
function leanMeta<M extends { managedFields?: unknown; annotations?: Record<string, string> }>(m: M | undefined): M | undefined {
  if (!m) return m;
  const { managedFields: _managed, ...rest } = m;
  const annotations = rest.annotations;
  if (annotations && 'kubectl.kubernetes.io/last-applied-configuration' in annotations) {
    const { 'kubectl.kubernetes.io/last-applied-configuration': _applied, ...kept } = annotations;
    return { ...rest, annotations: kept } as M;
  }
  return rest as M;
}

/** A Job as its readers use it: metadata, status and the spec's scalars (deadline, TTL...), without the Pod template. */
export function leanJob(job: V1Job): V1Job {
  const { template: _template, ...spec } = job.spec ?? ({} as NonNullable<V1Job['spec']>);
  return { apiVersion: job.apiVersion, kind: job.kind, metadata: leanMeta(job.metadata), ...(job.spec ? { spec: spec as V1Job['spec'] } : {}), ...(job.status ? { status: job.status } : {}) };
}

/** A Pod as the launcher reads it (its phase and container states): metadata and status, no spec. */
export function leanPod(pod: V1Pod): V1Pod {
  return { apiVersion: pod.apiVersion, kind: pod.kind, metadata: leanMeta(pod.metadata), ...(pod.status ? { status: pod.status } : {}) };
}

/** A Secret without managedFields nor the last-applied annotation (which repeats the data in clear for `kubectl apply`). */
export function leanSecret(secret: V1Secret): V1Secret {
  return { ...secret, metadata: leanMeta(secret.metadata) };
}
