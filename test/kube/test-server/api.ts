// The verbs of the test server on stored objects: get, list, create, update (main and /status), patch, delete,
// deletecollection; plus the type registry. HTTP parsing lives in server.ts, deletion and garbage collection in gc.ts.
import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { ApiError, alreadyExists, badRequest, conflict, invalid, notFound, type StatusCause } from './errors.js';
import type { AdmissionRequest } from './owner-references.js';
import { Collector, type Propagation } from './gc.js';
import { checkSize, generateName, now, pruneMeta, sameObject, specPart, validateMeta } from './meta.js';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { apiVersionOf, typeKey, type KubeObject, type ResourceType } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { Store } from './store.js';

export interface ApiOptions { maxObjectBytes: number; requireNamespaces: boolean; gracefulPods: boolean }
export interface ListQuery { labelSelector?: string; fieldSelector?: string; limit?: number; continue?: string }
export interface DeleteOptions { propagationPolicy?: string; orphanDependents?: boolean; preconditions?: { uid?: string; resourceVersion?: string }; gracePeriodSeconds?: number }

const clone = <T>(v: T): T => structuredClone(v);

export class Api {
  readonly gc: Collector;
  /** Set by the server around one request with dryRun=All: everything runs (defaults, validation, conflicts) but nothing is stored. */
  dryRun = false;
  /** Set by the server around one request: fieldValidation (Strict refuses unknown fields, Warn / Ignore prune them). */
  fieldValidation = '';
  /** Unknown fields pruned by the last write (the server answers them as Warning headers). */
  pruned: string[] = [];
  /** Set by the server around one request when admission plugins run: sees each create / update before it is stored. */
  admitOwnerRefs?: (req: Omit<AdmissionRequest, 'who'>) => void;

  private applyDefaults(t: ResourceType, o: KubeObject, old?: KubeObject): void {
    const pruned = t.defaults?.(o, old) ?? [];
    if (pruned.length && this.fieldValidation === 'Strict') {
      throw badRequest(`strict decoding error: ${pruned.map((p) => `unknown field "${p.slice(1)}"`).join(', ')}`);
    }
    this.pruned = pruned;
  }
  constructor(readonly store: Store, private readonly types: Map<string, ResourceType>, private readonly opts: ApiOptions) {
    this.gc = new Collector(store, types, opts.gracefulPods);
  }

  /** The object as served at `version` (custom resources may be served at several versions without conversion). */
  present(t: ResourceType, obj: KubeObject, version = t.versions[0]): KubeObject {
    return { ...obj, apiVersion: apiVersionOf(t.group, version), kind: t.kind };
  }

  get(t: ResourceType, ns: string | undefined, name: string): KubeObject {
    const o = this.store.get(typeKey(t.group, t.plural), ns, name);
    if (!o) throw notFound(t.group, t.plural, name);
    return o;
  }

  /**
   * Matching objects; `continue` is the last returned key plus the resourceVersion of the first page, which every
   * later page reports as its own (pages show the current state, not that snapshot). Like the real server once etcd
   * compacted that revision, a token whose resourceVersion fell out of the type's history window answers 410 Expired.
   */
  list(t: ResourceType, ns: string | undefined, q: ListQuery): { items: KubeObject[]; continue?: string; remaining?: number; rv: string } {
    const key = typeKey(t.group, t.plural);
    const byLabel = parseLabelSelector(q.labelSelector);
    const byField = parseFieldSelector(q.fieldSelector, t.fieldSelectors);
    let items = this.store.list(key, ns).filter((o) => byLabel(o.metadata.labels) && byField(o));
    let rv = String(this.store.resourceVersion);
    if (q.continue) {
      let token: { after?: unknown; rv?: unknown };
      try { token = JSON.parse(Buffer.from(q.continue, 'base64url').toString()); } catch { throw badRequest('invalid continue token'); }
      if (typeof token?.after !== 'string') throw badRequest('invalid continue token');
      const after = token.after;
      if (typeof token.rv === 'string') {
        if (Number(token.rv) < this.store.oldestResumable(key)) {
          throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
        }
        rv = token.rv;
      }
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` > after);
    }
    if (q.limit && q.limit > 0 && items.length > q.limit) {
      const page = items.slice(0, q.limit);
      const last = page[page.length - 1];
      const token = Buffer.from(JSON.stringify({ after: `${last.metadata.namespace ?? ''}/${last.metadata.name}`, rv })).toString('base64url');
      return { items: page, continue: token, remaining: items.length - q.limit, rv };
    }
    return { items, rv };
  }

  private checkBody(t: ResourceType, body: unknown, version: string): KubeObject {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request was not a JSON object');
    const o = body as KubeObject;
    if (o.kind !== undefined && o.kind !== t.kind) throw badRequest(`the kind in the data (${o.kind}) does not match the expected kind (${t.kind})`);
    const want = apiVersionOf(t.group, version);
    if (o.apiVersion !== undefined && o.apiVersion !== want) throw badRequest(`the API version in the data (${o.apiVersion}) does not match the expected API version (${want})`);
    if (o.metadata !== undefined && (typeof o.metadata !== 'object' || o.metadata === null)) throw badRequest('metadata must be an object');
    return o;
  }

  private checkNamespace(t: ResourceType, o: KubeObject, ns: string | undefined): void {
    if (!t.namespaced) { delete o.metadata.namespace; return; }
    if (o.metadata.namespace && o.metadata.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    o.metadata.namespace = ns;
  }

  private validate(t: ResourceType, o: KubeObject, old: KubeObject | undefined, version: string): void {
    const causes: StatusCause[] = [...validateMeta(t, o), ...(t.validate?.(o, old, version) ?? [])];
    if (causes.length) throw invalid(t.kind, t.group, o.metadata.name ?? '', causes);
  }

  create(t: ResourceType, ns: string | undefined, body: unknown, version: string): KubeObject {
    const o = clone(this.checkBody(t, body, version));
    o.metadata = pruneMeta({ ...(o.metadata ?? {}) });
    this.checkNamespace(t, o, ns);
    if (t.namespaced) this.checkNamespaceUsable(ns!);
    this.admitOwnerRefs?.({ t, version, ns, name: String(o.metadata.name ?? ''), obj: o });
    const m = o.metadata;
    if (!m.name && m.generateName) m.name = generateName(String(m.generateName));
    for (const k of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) delete m[k];
    m.uid = randomUUID();
    m.creationTimestamp = now();
    m.generation = 1;
    o.apiVersion = apiVersionOf(t.group, version);
    o.kind = t.kind;
    if (t.status) delete o.status;
    if (Array.isArray(m.finalizers) && m.finalizers.length === 0) delete m.finalizers;
    this.applyDefaults(t, o);
    this.validate(t, o, undefined, version);
    const key = typeKey(t.group, t.plural);
    if (this.store.get(key, m.namespace, m.name)) throw alreadyExists(t.group, t.plural, m.name);
    o.apiVersion = apiVersionOf(t.group, t.versions[0]);
    checkSize(o, this.opts.maxObjectBytes);
    if (this.dryRun) return o;
    const stored = this.store.write(key, o);
    this.gc.objectChanged(key, stored);
    return stored;
  }

  private checkNamespaceUsable(ns: string): void {
    const nsObj = this.store.get('/namespaces', undefined, ns);
    if (!nsObj) {
      if (this.opts.requireNamespaces) throw notFound('', 'namespaces', ns);
      return;
    }
    if (nsObj.metadata.deletionTimestamp) {
      throw new ApiError(403, 'Forbidden', `unable to create new content in namespace ${ns} because it is being terminated`, { name: ns, kind: 'namespaces' });
    }
  }

  /** PUT (and the end of PATCH): `sub` 'status' changes only status; the main endpoint keeps status when it is a subresource. */
  update(t: ResourceType, ns: string | undefined, name: string, body: unknown, version: string, sub?: string): KubeObject {
    const key = typeKey(t.group, t.plural);
    const old = this.get(t, ns, name);
    const given = this.checkBody(t, body, version);
    const gm = (given.metadata ?? {}) as Record<string, any>;
    if (gm.name !== undefined && gm.name !== name) throw badRequest(`the name of the object (${gm.name}) does not match the name on the URL (${name})`);
    if (t.namespaced && gm.namespace !== undefined && gm.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (gm.uid !== undefined && gm.uid !== '' && gm.uid !== old.metadata.uid) {
      throw conflict(t.group, t.plural, name, `Precondition failed: UID in precondition: ${gm.uid}, UID in object meta: ${old.metadata.uid}`);
    }
    if (gm.resourceVersion !== undefined && gm.resourceVersion !== '' && String(gm.resourceVersion) !== old.metadata.resourceVersion) {
      throw conflict(t.group, t.plural, name);
    }
    let next: KubeObject;
    if (sub === 'status') {
      next = clone(old);
      if (given.status === undefined) delete next.status;
      else next.status = clone(given.status);
    } else {
      next = clone(given);
      next.metadata = pruneMeta({ ...clone(gm) });
      const om = old.metadata;
      for (const k of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'name', 'namespace']) {
        if (om[k] === undefined) delete next.metadata[k];
        else next.metadata[k] = om[k];
      }
      // A write without managedFields (or with an empty list) leaves the stored ones unchanged, as on a real server.
      if (!Array.isArray(gm.managedFields) || gm.managedFields.length === 0) {
        if (om.managedFields === undefined) delete next.metadata.managedFields;
        else next.metadata.managedFields = clone(om.managedFields);
      }
      if (t.status) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    // Admission sees the object as sent (a status write's own metadata too, before the status strategy drops it).
    this.admitOwnerRefs?.({ t, version, ns, name, sub, obj: sub === 'status' ? { ...given, metadata: gm } : next, old });
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    next.apiVersion = apiVersionOf(t.group, version);
    next.kind = t.kind;
    if (old.metadata.deletionTimestamp) {
      const before = new Set<string>(old.metadata.finalizers ?? []);
      if ((next.metadata.finalizers ?? []).some((f: string) => !before.has(f))) {
        throw invalid(t.kind, t.group, name, [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: 'Forbidden: no new finalizers can be added if the object is being deleted' }]);
      }
    }
    this.applyDefaults(t, next, old);
    this.validate(t, next, old, version);
    next.apiVersion = apiVersionOf(t.group, t.versions[0]);
    if (specPart(t, next) !== specPart(t, old)) next.metadata.generation = (old.metadata.generation ?? 0) + 1;
    if (Array.isArray(next.metadata.finalizers) && next.metadata.finalizers.length === 0) delete next.metadata.finalizers;
    if (sameObject(next, old)) return old;
    checkSize(next, this.opts.maxObjectBytes);
    if (this.dryRun) return next;
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length) && !this.gc.gracePending(key, next)) {
      const gone = this.store.remove(key, next);
      this.gc.objectRemoved(key, gone);
      return { ...next, metadata: { ...next.metadata, resourceVersion: gone.metadata.resourceVersion } };
    }
    const stored = this.store.write(key, next);
    this.gc.objectChanged(key, stored);
    return stored;
  }

  patch(t: ResourceType, ns: string | undefined, name: string, contentType: string, raw: string, version: string, sub?: string, fieldManager?: string): KubeObject {
    const type = contentType.split(';')[0].trim().toLowerCase();
    if (type === 'application/apply-patch+yaml' || type === 'application/apply-patch+cbor') {
      if (!fieldManager) throw invalid('PatchOptions', 'meta.k8s.io', '', [{ reason: 'FieldValueRequired', field: 'fieldManager', message: 'Required value: is required for apply patch' }]);
      let applied: unknown;
      try { applied = parseYaml(raw); } catch (e) { throw badRequest(`error decoding YAML: ${(e as Error).message}`); }
      if (!this.store.get(typeKey(t.group, t.plural), ns, name)) {
        if (sub) throw notFound(t.group, t.plural, name);
        const body = clone(applied) as KubeObject;
        body.metadata = { ...(body?.metadata ?? {}), name };
        return this.create(t, ns, body, version);
      }
      return this.update(t, ns, name, mergePatch(this.present(t, this.get(t, ns, name), version), applied), version, sub);
    }
    let body: unknown;
    try { body = JSON.parse(raw); } catch (e) { throw badRequest(`error decoding patch: ${(e as Error).message}`); }
    const current = clone(this.present(t, this.get(t, ns, name), version));
    let patched: unknown;
    if (type === 'application/merge-patch+json') patched = mergePatch(current, body);
    else if (type === 'application/json-patch+json') patched = jsonPatch(current, body);
    else if (type === 'application/strategic-merge-patch+json') {
      if (t.customResource) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
      patched = strategicMergePatch(current, body);
    } else throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
    if (!patched || typeof patched !== 'object') throw badRequest('the patch did not produce an object');
    const p = patched as KubeObject;
    // A patch only conflicts when it names another resourceVersion itself (otherwise it applies to the latest object).
    if (p.metadata && typeof p.metadata === 'object' && p.metadata.resourceVersion === current.metadata.resourceVersion) delete p.metadata.resourceVersion;
    return this.update(t, ns, name, p, version, sub);
  }

  delete(t: ResourceType, ns: string | undefined, name: string, opts: DeleteOptions): KubeObject {
    const obj = this.get(t, ns, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== obj.metadata.uid) {
      throw conflict(t.group, t.plural, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
      throw conflict(t.group, t.plural, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion}`);
    }
    const policy = (opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : opts.orphanDependents === false ? 'Background' : t.defaultPropagation ?? 'Background'));
    if (!['Orphan', 'Background', 'Foreground'].includes(policy)) {
      throw invalid('DeleteOptions', '', '', [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"` }]);
    }
    if (this.dryRun) return obj;
    return this.gc.requestDeletion(typeKey(t.group, t.plural), obj, policy as Propagation, opts.gracePeriodSeconds);
  }

  deleteCollection(t: ResourceType, ns: string | undefined, q: ListQuery, opts: DeleteOptions): KubeObject[] {
    return this.list(t, ns, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector }).items
      .map((o) => this.delete(t, ns, o.metadata.name, { ...opts, preconditions: undefined }));
  }

  typeOf(key: string): ResourceType | undefined { return this.types.get(key); }
}
