// Typed access to one flowpilot.io/v1 custom resource kind in one Kubernetes namespace through client-node's
// CustomObjectsApi (get, list, create, replace, replace status, JSON patch, delete), and the error helpers the stores share.
import { CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { backoff, sleep } from '../../faults.js';
import { GROUP, type KindInfo, VERSION } from '../names.js';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  /** etcd revision as a decimal string on real servers (opaque per the API; we compare it numerically). */
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface KubeObject<S = Record<string, unknown>, T = Record<string, unknown>> {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: S;
  status?: T;
}

/** Any resource (the constraint of the generic helpers). */
export interface AnyKubeObject { apiVersion?: string; kind?: string; metadata: ObjectMeta; spec?: unknown; status?: unknown }

export interface KubeList<O> { items: O[]; metadata?: { resourceVersion?: string; continue?: string } }

/** Objects per list request: a namespace with 100,000 Executions is read in pages, not one huge response. */
export const LIST_PAGE = 500;

/** One page of a list: custom objects carry the token as `metadata.continue`, client-node's typed lists as `_continue`. */
export interface ListPage<O> { items: O[]; metadata?: { resourceVersion?: string; continue?: string; _continue?: string } }
/** Reads one page: `limit` objects from `_continue` (absent for the first page), as the list calls of client-node take them. */
export type PageReader<O> = (page: { limit: number; _continue?: string }) => Promise<ListPage<O>>;

/**
 * Every object of a list, read in pages of `pageSize` (limit/continue). A real server serves all pages from the first
 * page's snapshot, whose resourceVersion the result carries (a watch resumes from it); an expired continue token
 * (410 Gone) starts the list over. The one paged list of the operator: custom-resource caches and the Job, Pod and
 * Secret informers use it.
 */
export async function listPages<O>(read: PageReader<O>, pageSize = LIST_PAGE): Promise<KubeList<O>> {
  const token = (p: ListPage<O>) => p.metadata?._continue ?? p.metadata?.continue;
  for (let attempt = 0; ; attempt++) {
    try {
      let page = await read({ limit: pageSize });
      const items = [...(page.items ?? [])];
      const resourceVersion = page.metadata?.resourceVersion;
      for (let cont = token(page); cont; cont = token(page)) {
        page = await read({ limit: pageSize, _continue: cont });
        items.push(...(page.items ?? []));
      }
      return { ...page, items, metadata: { resourceVersion } };
    } catch (err) {
      if (statusCode(err) !== 410 || attempt >= 2) throw err;
    }
  }
}

export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** HTTP status of a failed API call (client-node's ApiException has `code`), undefined for other errors. */
export function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown; statusCode?: unknown } | null)?.code ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The server's message of a failed call (its Status body), else the error message. */
export function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown } | null)?.body;
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  if (typeof body === 'string' && body) {
    try { return String((JSON.parse(body) as { message?: unknown }).message ?? body); } catch { return body; }
  }
  return err instanceof Error ? err.message : String(err);
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;

/** resourceVersion as a number (real servers use the etcd revision, a decimal integer). 0 when absent. */
export function rvNumber(obj: { metadata: ObjectMeta } | undefined): number {
  const n = Number(obj?.metadata.resourceVersion ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** One kind's endpoints in one namespace. Every method returns the object as the server stored it. */
export class KindApi<O extends AnyKubeObject = KubeObject> {
  private readonly api: CustomObjectsApi;
  readonly path: string;

  constructor(kc: KubeConfig, readonly kind: KindInfo, readonly namespace: string) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.path = `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`;
  }

  private base() {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: this.kind.plural };
  }

  /** A body with apiVersion and kind set. */
  body(obj: Omit<O, 'apiVersion' | 'kind'>): O {
    return { apiVersion: `${GROUP}/${VERSION}`, kind: this.kind.kind, ...obj } as O;
  }

  async get(name: string): Promise<O | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...this.base(), name })) as O;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Every object (paged: `listPages`). */
  async list(labelSelector?: string, pageSize = LIST_PAGE): Promise<KubeList<O>> {
    return listPages((page) => this.page(labelSelector, page.limit, page._continue), pageSize);
  }

  private async page(labelSelector: string | undefined, limit: number, cont?: string): Promise<KubeList<O>> {
    return (await this.api.listNamespacedCustomObject({
      ...this.base(), limit, ...(labelSelector ? { labelSelector } : {}), ...(cont ? { _continue: cont } : {}),
    })) as KubeList<O>;
  }

  async create(obj: O): Promise<O> {
    return (await this.api.createNamespacedCustomObject({ ...this.base(), body: obj })) as O;
  }

  /** PUT; `metadata.resourceVersion` in the body makes it conditional (409 when stale). */
  async replace(obj: O): Promise<O> {
    return (await this.api.replaceNamespacedCustomObject({ ...this.base(), name: obj.metadata.name, body: obj })) as O;
  }

  /** PUT on /status: only the status stanza changes; `metadata.resourceVersion` makes it conditional. */
  async replaceStatus(obj: O): Promise<O> {
    return (await this.api.replaceNamespacedCustomObjectStatus({ ...this.base(), name: obj.metadata.name, body: obj })) as O;
  }

  /** RFC 6902 JSON patch (a failed `test` op answers 422 on real servers). */
  async jsonPatch(name: string, ops: JsonPatchOp[]): Promise<O> {
    return (await this.api.patchNamespacedCustomObject({ ...this.base(), name, body: ops },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch))) as O;
  }

  /**
   * Deletes; with `resourceVersion` (and/or `uid`) only that version (409 otherwise). Returns the deleted object as the
   * server answered it (custom resources answer the object), or undefined when it did not exist.
   */
  async delete(name: string, precondition?: string | { uid?: string; resourceVersion?: string }): Promise<O | { status: 'gone' } | undefined> {
    const pre = typeof precondition === 'string' ? { resourceVersion: precondition } : precondition;
    const preconditions = pre && Object.fromEntries(Object.entries(pre).filter(([, v]) => v));
    try {
      const res = (await this.api.deleteNamespacedCustomObject({
        ...this.base(), name,
        body: preconditions && Object.keys(preconditions).length ? { preconditions } : {},
      })) as O | { kind?: string };
      return res && (res as O).metadata?.name ? (res as O) : { status: 'gone' };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/** Retries `fn` while it throws an error `retryable` accepts, up to `attempts` times, with a short growing pause. */
export async function retrying<R>(attempts: number, retryable: (err: unknown) => boolean, fn: (attempt: number) => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt + 1 >= attempts || !retryable(err)) throw err;
      await sleep(backoff(attempt, { baseMs: 10, maxMs: 200 }));
    }
  }
}
