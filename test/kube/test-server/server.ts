// In-process Kubernetes API test server (plain HTTP on 127.0.0.1) for the test suite: custom resources from CRD files,
// a few built-in kinds, watch, garbage collection, schema validation and pruning, token auth and reviews.
//
// Known simplifications versus a real kube-apiserver (keep tests honest about them):
// - One process, in memory; no etcd. resourceVersion is a global counter; lists always read the latest state
//   (resourceVersion / resourceVersionMatch on lists are ignored) and `continue` pages show the current state, not a
//   snapshot (each reports the first page's resourceVersion); a continue token expires (410 Expired) once its
//   resourceVersion falls out of the type's `historyLimit` window, as a real one does after etcd compaction.
// - No controllers: no Job controller, no kubelet, no scheduler, no service-account token controller. The garbage
//   collector, finalizer handling (orphan / foregroundDeletion) and namespace termination do run (asynchronously).
// - Pods are deleted at once unless `gracefulPodDeletion` is set (then Pods with spec.nodeName get a deletionTimestamp
//   and stay until a DELETE with gracePeriodSeconds=0 or the end of the grace period; no kubelet kills anything).
// - batch/v1 Jobs deleted without a propagationPolicy orphan their Pods, like the real server (pass Background).
// - Strategic merge patch knows only a fixed set of list merge keys (containers, volumes, env, ...); custom resources
//   refuse it with 415 like the real server. Server-side apply is a plain merge patch (create when missing): no managed
//   fields computed (those a client sends are stored, and kept by an update that omits them), no conflicts, lists replaced. dryRun=All runs everything but the write (no garbage collection simulated).
//   fieldValidation applies to custom resources only (Strict: 400 on unknown fields; default Warn: pruned, Warning
//   header); unknown fields of built-in kinds are kept.
// - CRD schemas: structural check, pruning, defaults, types / formats / enum / pattern / bounds / required are enforced;
//   so are list-type set/map duplicates. CEL rules (x-kubernetes-validations), ratcheting and version conversion
//   (served versions share the storage version's data, apiVersion is rewritten) are not. Unknown metadata fields are
//   dropped; metadata is not otherwise checked beyond names, labels, annotations and owner references. The
//   structural check covers types, properties vs additionalProperties, array items, forbidden keywords and list-type
//   map keys, not every apiextensions rule.
// - Built-in kinds are not schema-validated beyond a few rules clients hit (pod containers, job restartPolicy and
//   immutable template / selector, secret stringData, labels / names syntax); unknown fields are kept.
// - Writes are counted (stats) per request, refused ones included.
// - Auth: bearer tokens from `tokens` (401 otherwise) and, only with `authorizeRequests`, `authorize` for every
//   request (403); no RBAC objects. No quotas, no audit, no protobuf, no table output.
// - Validating admission webhooks only as `validatingWebhooks` (admission.ts): http(s) URL, CREATE/UPDATE of the main
//   resource, called with the object as sent (before pruning and defaulting), failurePolicy Fail; no mutating webhooks.
//   The only built-in admission plugin is OwnerReferencesPermissionEnforcement (`ownerReferencesPermissionEnforcement`,
//   owner-references.ts, asking `authorize`).
// - Outages (`startOutage`): requests get 503 ServiceUnavailable with Retry-After, the way a kube-apiserver that is
//   restarting answers through its load balancer (or while its storage is not ready); open watches end when one starts.
//   Real outages also refuse connections or time out: use test/kube/fault-proxy.ts for those.
// - Watch bookmarks are sent every `bookmarkIntervalMs` when allowed; sendInitialEvents=true (watch-list) sends the
//   current objects then the initial-events-end bookmark, ignoring resourceVersionMatch. A watch from a
//   resourceVersion older than the last `historyLimit` events of its resource type gets ERROR 410 (reason Expired),
//   like the per-type watch cache of the real server.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { Api } from './api.js';
import { enforceOwnerReferencePermissions, type Requester } from './owner-references.js';
import { TokenTable, subjectAccessReview, tokenReview, type AuthzAttributes, type TokenUser } from './auth.js';
import { KUBE_VERSION, apiGroup, apiGroupList, apiVersions, resourceList } from './discovery.js';
import { ApiError, methodNotAllowed } from './errors.js';
import { DEFAULT_MAX_OBJECT_BYTES } from './meta.js';
import { routeRequest, type Route } from './routes.js';
import { builtinTypes, typeKey, type ResourceType } from './resources.js';
import { compileCrd, loadCrdFiles } from './schema.js';
import { Store } from './store.js';
import { serveWatch } from './watch.js';
import { admit, type ValidatingWebhook } from './admission.js';

export interface KubeTestServerOptions {
  /** Directory of CRD YAML files (default: the repository's `crds/` when it exists). */
  crdDir?: string;
  /** CRD objects to serve in addition to those of crdDir. */
  crds?: object[];
  /** token → user. When set, requests without a known bearer token get 401. */
  tokens?: Record<string, TokenUser>;
  /** Answers SubjectAccessReviews (default: allow), and every request when `authorizeRequests` is true. */
  authorize?: (attrs: AuthzAttributes) => boolean;
  authorizeRequests?: boolean;
  /** Watch events kept per resource type for resuming watches (default 1000), like the watch cache. */
  historyLimit?: number;
  bookmarkIntervalMs?: number;
  /** Server-side cap of a watch (default 1800 s). */
  watchTimeoutSeconds?: number;
  /** Deliver watch events this many ms late, as a loaded real server does (default 0). Writes and reads are not delayed. */
  watchDelayMs?: number;
  /**
   * End a watch that reached its timeout by dropping the connection instead of ending the chunked response cleanly:
   * client-node (node-fetch) then reports "Premature close", as seen against real clusters. Default false.
   */
  watchAbruptEnd?: boolean;
  maxObjectBytes?: number;
  /** Refuse namespaced writes in namespaces that do not exist (default false: any namespace works). */
  requireNamespaces?: boolean;
  /**
   * Delete Pods bound to a node (spec.nodeName) gracefully, like a real server with a kubelet: DELETE sets
   * deletionTimestamp (now + grace) and the Pod stays until a DELETE with gracePeriodSeconds=0 (the kubelet's) or the
   * grace period ends. Default false: Pods go at once.
   */
  gracefulPodDeletion?: boolean;
  /** Validating admission webhooks called on create and update of matching resources (admission.ts). */
  validatingWebhooks?: ValidatingWebhook[];
  /** Namespaces created at start (default default, kube-system, kube-public). */
  namespaces?: string[];
  /**
   * Run the OwnerReferencesPermissionEnforcement admission plugin (default on in OpenShift; admission.ts) on every
   * create and update, asking `authorize` (needs it): changing ownerReferences needs `delete` on the object, setting
   * blockOwnerDeletion needs `update` on the owner's `<resource>/finalizers`. Default false, like upstream.
   */
  ownerReferencesPermissionEnforcement?: boolean;
}

export interface KubeTestServerStats {
  /** `POST jobs`, `PATCH executions/status`, `DELETE pods`: requests by verb and resource (/subresource). */
  writes: Record<string, number>;
  /** `GET flows`, `LIST flows`, `WATCH flows`. */
  reads: Record<string, number>;
  totalWrites: number;
}

export interface KubeTestServer {
  url: string;
  /** A client-node KubeConfig pointing here with token auth (the first configured token unless one is given). */
  kubeConfig(token?: string): KubeConfig;
  close(): Promise<void>;
  stats: KubeTestServerStats;
  resetStats(): void;
  /** End every open watch stream (clients re-watch from their last resourceVersion). */
  closeWatches(): void;
  /** Hold new watch requests (and end open ones) until resumeWatches(): lets tests make a watch fall out of the history. */
  suspendWatches(): void;
  resumeWatches(): void;
  /**
   * Like a restarting API server: answer 503 (Retry-After: 1) to every request, or only to those of the given resource
   * plurals (`['kvpairs']`), until endOutage(); open watches end now (clients re-watch and meet the outage).
   */
  startOutage(o?: { resources?: string[] }): void;
  endOutage(): void;
  /** Requests answered 503 by outages so far. */
  readonly outageRefused: number;
  /** Resolves when the garbage collector has no pending work. */
  gcIdle(): Promise<void>;
  /** Serve one more CRD (throws when it is not structural). */
  addCrd(crd: object): void;
  readonly resourceVersion: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const DEFAULT_CRD_DIR = resolve(here, '../../../crds');
const MAX_BODY = 3 * 1024 * 1024;

function send(res: ServerResponse, code: number, body: unknown, warnings: string[] = []): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number | string[]> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  if (warnings.length) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { fail(new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728')); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

export async function startKubeTestServer(opts: KubeTestServerOptions = {}): Promise<KubeTestServer> {
  const types = new Map<string, ResourceType>();
  for (const t of builtinTypes()) types.set(typeKey(t.group, t.plural), t);
  const addCrd = (crd: object): void => {
    const t = compileCrd(crd as Record<string, unknown>);
    types.set(typeKey(t.group, t.plural), t);
  };
  const dir = opts.crdDir ?? (existsSync(DEFAULT_CRD_DIR) ? DEFAULT_CRD_DIR : undefined);
  if (dir) for (const crd of loadCrdFiles(dir)) addCrd(crd);
  for (const crd of opts.crds ?? []) addCrd(crd);

  if (opts.ownerReferencesPermissionEnforcement && !opts.authorize) throw new Error('ownerReferencesPermissionEnforcement needs authorize');
  const authorizeAll = (a: AuthzAttributes): boolean => opts.authorize?.(a) === true;
  const store = new Store(opts.historyLimit ?? 1000);
  const api = new Api(store, types, {
    maxObjectBytes: opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES, requireNamespaces: opts.requireNamespaces ?? false, gracefulPods: opts.gracefulPodDeletion ?? false,
  });
  const nsType = types.get('/namespaces')!;
  for (const ns of opts.namespaces ?? ['default', 'kube-system', 'kube-public']) api.create(nsType, undefined, { metadata: { name: ns } }, 'v1');
  const tokens = new TokenTable(opts.tokens);
  const stats: KubeTestServerStats = { writes: {}, reads: {}, totalWrites: 0 };
  const watchEnds = new Set<() => void>();
  let suspended: (() => void)[] | undefined;
  let outage: { resources?: string[] } | undefined;
  let outageRefused = 0;
  let address = '';

  const count = (bucket: Record<string, number>, key: string): void => { bucket[key] = (bucket[key] ?? 0) + 1; };

  const nonResource = (path: string): unknown => {
    if (path === '/api' || path === '/api/') return apiVersions(address);
    if (path === '/apis' || path === '/apis/') return apiGroupList([...types.values()]);
    if (path === '/version' || path === '/version/') return KUBE_VERSION;
    const g = /^\/apis\/([^/]+)\/?$/.exec(path);
    if (g) return apiGroup([...types.values()], g[1]) ?? new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const rl = /^\/api\/(v1)\/?$/.exec(path) ?? /^\/apis\/([^/]+\/[^/]+)\/?$/.exec(path);
    if (rl) {
      const [group, version] = rl[1].includes('/') ? rl[1].split('/') : ['', rl[1]];
      return resourceList([...types.values()], group, version) ?? new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    return undefined;
  };

  /** Whether a request meets the outage: all of them, or those of the outage's resources. */
  function inOutage(path: string, method: string, q: URLSearchParams): boolean {
    if (!outage?.resources) return true;
    try {
      return outage.resources.includes(routeRequest(path, method, q, types).t.plural);
    } catch {
      return false; // not a resource path (discovery, /version): served
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (/^\/(healthz|livez|readyz)(\/.*)?$/.test(path)) { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.end('ok'); return; }
    if (outage && inOutage(path, (req.method ?? 'GET').toUpperCase(), url.searchParams)) {
      outageRefused++;
      req.resume();
      const status = new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', { retryAfterSeconds: 1 }).toStatus();
      const text = JSON.stringify(status);
      res.writeHead(503, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Retry-After': '1' });
      res.end(text);
      return;
    }
    const user = tokens.fromHeader(req.headers.authorization);
    if (tokens.enabled && !user && path !== '/version') throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const method = (req.method ?? 'GET').toUpperCase();
    const who: Requester = { user: user?.username ?? 'system:anonymous', groups: user ? [...(user.groups ?? []), 'system:authenticated'] : ['system:unauthenticated'] };
    const doc = nonResource(path);
    if (doc !== undefined) {
      if (opts.authorizeRequests && opts.authorize && !opts.authorize({ ...who, verb: 'get', path })) throw new ApiError(403, 'Forbidden', `forbidden: User "${who.user}" cannot get path "${path}"`);
      if (doc instanceof ApiError) throw doc;
      send(res, 200, doc);
      return;
    }
    const route: Route = routeRequest(path, method, url.searchParams, types);
    const { t, ns, name, sub, verb, version } = route;
    if (opts.authorizeRequests && opts.authorize && !opts.authorize({ ...who, verb, group: t.group, version, resource: t.plural, subresource: sub, namespace: ns, name })) {
      throw new ApiError(403, 'Forbidden', `${t.plural}${t.group ? `.${t.group}` : ''}${name ? ` "${name}"` : ''} is forbidden: User "${who.user}" cannot ${verb} resource "${t.plural}" in API group "${t.group}"${ns ? ` in the namespace "${ns}"` : ''}`);
    }
    if (!t.verbs.includes(verb)) throw methodNotAllowed(verb);
    const resName = `${t.plural}${sub ? `/${sub}` : ''}`;
    if (method === 'GET') {
      count(stats.reads, `${verb.toUpperCase()} ${resName}`);
      if (verb === 'get') { send(res, 200, api.present(t, api.get(t, ns, name!), version)); return; }
      const q = url.searchParams;
      if (verb === 'watch') {
        const start = (): void => {
          if (res.destroyed) return;
          let end: () => void = () => {};
          end = serveWatch(res, store, t, {
            namespace: ns, version, resourceVersion: q.get('resourceVersion') ?? undefined, labelSelector: q.get('labelSelector') ?? undefined,
            fieldSelector: q.get('fieldSelector') ?? undefined, allowWatchBookmarks: q.get('allowWatchBookmarks') === 'true',
            timeoutSeconds: q.get('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined, sendInitialEvents: q.get('sendInitialEvents') === 'true',
          }, { maxTimeoutSeconds: opts.watchTimeoutSeconds ?? 1800, bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 5000, delayMs: opts.watchDelayMs, abruptEnd: opts.watchAbruptEnd }, () => watchEnds.delete(end));
          watchEnds.add(end);
        };
        if (suspended) suspended.push(start);
        else start();
        return;
      }
      const limit = q.get('limit') ? Number(q.get('limit')) : undefined;
      const page = api.list(t, ns, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined, limit, continue: q.get('continue') ?? undefined });
      send(res, 200, {
        kind: t.listKind, apiVersion: t.group ? `${t.group}/${version}` : version,
        metadata: { resourceVersion: page.rv, ...(page.continue ? { continue: page.continue, remainingItemCount: page.remaining } : {}) },
        items: page.items.map((o) => api.present(t, o, version)),
      });
      return;
    }
    count(stats.writes, `${method} ${resName}`);
    stats.totalWrites++;
    const raw = await readBody(req);
    const dry = url.searchParams.getAll('dryRun');
    if (dry.some((d) => d !== 'All')) throw new ApiError(400, 'BadRequest', `Unsupported value: "${dry.find((d) => d !== 'All')}": supported values: "All"`);
    const fv = url.searchParams.get('fieldValidation') ?? '';
    if (fv && !['Strict', 'Warn', 'Ignore'].includes(fv)) throw new ApiError(400, 'BadRequest', `fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`);
    if (opts.validatingWebhooks && !sub && (verb === 'create' || verb === 'update') && raw.trim()) {
      let object: { metadata?: { name?: string } } | undefined;
      try { object = JSON.parse(raw); } catch { object = undefined; } // write() answers the decoding error
      if (object) {
        let oldObject: unknown;
        if (verb === 'update') { try { oldObject = api.get(t, ns, name!); } catch { oldObject = undefined; } }
        await admit(opts.validatingWebhooks, {
          kind: t.kind, group: t.group, version, plural: t.plural, namespace: ns, name: name ?? object.metadata?.name,
          operation: verb === 'create' ? 'CREATE' : 'UPDATE', object, oldObject, dryRun: dry.length > 0,
        });
      }
    }
    api.dryRun = dry.length > 0;
    api.fieldValidation = fv;
    api.pruned = [];
    if (opts.ownerReferencesPermissionEnforcement) api.admitOwnerRefs = (r) => enforceOwnerReferencePermissions({ ...r, who }, authorizeAll, types.values());
    try { write(raw, url, req, res, route); } finally { api.dryRun = false; api.fieldValidation = ''; api.pruned = []; api.admitOwnerRefs = undefined; }
  }

  /** The write verbs, run synchronously once the body is read (so dryRun cannot leak into another request). */
  function write(raw: string, url: URL, req: IncomingMessage, res: ServerResponse, route: Route): void {
    const { t, ns, name, sub, verb, version } = route;
    const warn = (): string[] => (api.fieldValidation === 'Ignore' ? [] : api.pruned.map((p) => `unknown field "${p.slice(1)}"`));
    const parse = (): any => {
      if (!raw.trim()) return undefined;
      try { return JSON.parse(raw); } catch (e) { throw new ApiError(400, 'BadRequest', `error decoding body: ${(e as Error).message}`); }
    };
    if (verb === 'create') {
      if (t.review === 'token') { send(res, 201, tokenReview(tokens, parse())); return; }
      if (t.review === 'access') { send(res, 201, subjectAccessReview(opts.authorize, parse())); return; }
      const created = api.present(t, api.create(t, ns, parse(), version), version);
      send(res, 201, created, warn());
      return;
    }
    if (verb === 'update') { const u = api.present(t, api.update(t, ns, name!, parse(), version, sub), version); send(res, 200, u, warn()); return; }
    if (verb === 'patch') {
      if (!raw.trim()) throw new ApiError(400, 'BadRequest', 'the body of the request was empty');
      const p = api.present(t, api.patch(t, ns, name!, String(req.headers['content-type'] ?? ''), raw, version, sub, url.searchParams.get('fieldManager') ?? undefined), version);
      send(res, 200, p, warn());
      return;
    }
    const body = parse() ?? {};
    const q = url.searchParams;
    const delOpts = {
      propagationPolicy: body.propagationPolicy ?? q.get('propagationPolicy') ?? undefined,
      orphanDependents: body.orphanDependents ?? (q.has('orphanDependents') ? q.get('orphanDependents') === 'true' : undefined),
      preconditions: body.preconditions,
      gracePeriodSeconds: body.gracePeriodSeconds ?? (q.has('gracePeriodSeconds') ? Number(q.get('gracePeriodSeconds')) : undefined),
    };
    if (verb === 'delete') { send(res, 200, api.present(t, api.delete(t, ns, name!, delOpts), version)); return; }
    const deleted = api.deleteCollection(t, ns, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }, delOpts);
    send(res, 200, { kind: t.listKind, apiVersion: t.group ? `${t.group}/${version}` : version, metadata: { resourceVersion: String(store.resourceVersion) }, items: deleted.map((o) => api.present(t, o, version)) });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const err = e instanceof ApiError ? e : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error)?.message ?? String(e)}`);
      if (res.headersSent) { res.end(); return; }
      send(res, err.code, err.toStatus());
    });
  });
  // Longer than clients' idle-socket timeouts (Node's agent: 5 s), so a client never reuses a socket the server is closing.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 70_000;
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const port = (server.address() as AddressInfo).port;
  address = `127.0.0.1:${port}`;
  const url = `http://${address}`;
  const firstToken = Object.keys(opts.tokens ?? {})[0];

  const closeWatches = (): void => { for (const end of [...watchEnds]) end(); };
  return {
    url,
    kubeConfig(token?: string): KubeConfig {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'test', server: url, skipTLSVerify: true }],
        users: [{ name: 'test', token: token ?? firstToken ?? 'test-token' }],
        contexts: [{ name: 'test', cluster: 'test', user: 'test', namespace: 'default' }],
        currentContext: 'test',
      });
      return kc;
    },
    async close() {
      api.gc.stop();
      closeWatches();
      suspended = undefined;
      await new Promise<void>((ok) => { server.close(() => ok()); server.closeAllConnections(); });
    },
    stats,
    resetStats() {
      for (const k of Object.keys(stats.writes)) delete stats.writes[k];
      for (const k of Object.keys(stats.reads)) delete stats.reads[k];
      stats.totalWrites = 0;
    },
    closeWatches,
    suspendWatches() { suspended ??= []; closeWatches(); },
    resumeWatches() { const held = suspended ?? []; suspended = undefined; for (const s of held) s(); },
    startOutage(o = {}) { outage = { ...(o.resources ? { resources: [...o.resources] } : {}) }; closeWatches(); },
    endOutage() { outage = undefined; },
    get outageRefused() { return outageRefused; },
    gcIdle: () => api.gc.idle(),
    addCrd,
    get resourceVersion() { return String(store.resourceVersion); },
  };
}
