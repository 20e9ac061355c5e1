// Cluster-mode API authentication over real HTTP: the real Koa app (embedded stores) behind kubeAuth, which reviews
// tokens and permissions with the Kubernetes API test server (TokenReview, SubjectAccessReview).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStores, type EmbeddedStores } from '../operator/store/sqlite/index.js';
import { type AuthzAttributes, type KubeTestServer, startKubeTestServer } from '../test/kube/test-server/index.js';
import { createApp } from './app.js';
import { kubeAuth, type KubeAuthOptions } from './auth.js';
import { startServer } from './server.js';

const NS = 'flowpilot-system';
const TOKENS = {
  'api-server-token': { username: 'system:serviceaccount:flowpilot-system:api' },
  'alice-token-0123456789': { username: 'alice', groups: ['developers'] },
  'bob-token-0123456789': { username: 'bob' },
};
/** alice may do anything on flowpilot resources; bob may only read flows; nobody else may do anything. */
function policy(a: AuthzAttributes): boolean {
  if (a.path !== undefined) return a.user === 'alice' && a.path === '/metrics';
  if (a.group !== 'flowpilot.io' || a.namespace !== NS) return false;
  if (a.user === 'alice') return true;
  return a.user === 'bob' && a.resource === 'flows' && (a.verb === 'get' || a.verb === 'list');
}

let kube: KubeTestServer;
let dir: string;
let stores: EmbeddedStores;
const reviews: AuthzAttributes[] = [];
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  kube = await startKubeTestServer({ tokens: TOKENS, authorize: (a) => { reviews.push(a); return policy(a); } });
  dir = mkdtempSync(path.join(tmpdir(), 'auth-test-'));
  stores = openEmbeddedStores(dir);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await stores?.close();
  await kube?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The real API app with kubeAuth right after the error middleware (before every router). */
async function api(options: Partial<KubeAuthOptions> = {}): Promise<string> {
  const app: Koa = createApp({ stores });
  app.middleware.splice(1, 0, kubeAuth({ kc: kube.kubeConfig('api-server-token'), namespace: NS, ...options }));
  const server = await startServer(app, 0, '127.0.0.1');
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

async function call(url: string, token?: string, init: RequestInit = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text, headers: res.headers };
}

const FLOW = 'id: hello\nnamespace: company.team\ntasks:\n  - id: log\n    type: ai.service.plugin.core.log.Log\n    message: hi\n';
const yaml = (method: string, body: string): RequestInit => ({ method, headers: { 'content-type': 'application/x-yaml' }, body });
const reviewsCount = () => kube.stats.writes['POST tokenreviews'] ?? 0;

describe('kubeAuth', () => {
  it('answers 401 without a token or with an invalid one', async () => {
    const base = await api();
    const none = await call(`${base}/api/v1/flows/search`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(none.body.message).toMatch(/bearer token is required/);
    const bad = await call(`${base}/api/v1/flows/search`, 'not-a-known-token');
    expect(bad.status).toBe(401);
    expect(bad.body.message).toMatch(/invalid bearer token/);
    expect((await call(`${base}/api/v1/flows/search`, undefined, { headers: { authorization: 'Basic YWxpY2U6eA==' } })).status).toBe(401);
  });

  it('lets a user through when the SubjectAccessReview allows the route, and answers 403 with its reason otherwise', async () => {
    const base = await api();
    expect((await call(`${base}/api/v1/flows`, 'alice-token-0123456789', yaml('POST', FLOW))).status).toBe(200);
    expect((await call(`${base}/api/v1/flows/company.team/hello`, 'bob-token-0123456789')).body.id).toBe('hello');
    const denied = await call(`${base}/api/v1/flows/company.team/hello`, 'bob-token-0123456789', yaml('PUT', FLOW.replace('hi', 'changed')));
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('Forbidden: user "bob" cannot update resource "flows.flowpilot.io" in namespace "flowpilot-system": denied by test server policy');
    expect((await call(`${base}/api/v1/flows/company.team/hello`, 'bob-token-0123456789')).body.revision).toBe(1);
    const created = await call(`${base}/api/v1/executions/company.team/hello`, 'bob-token-0123456789', { method: 'POST' });
    expect(created.status).toBe(403);
    expect(created.body.message).toContain('cannot create resource "executions.flowpilot.io"');
    expect((await call(`${base}/api/v1/executions/search`, 'alice-token-0123456789')).status).toBe(200);
  });

  it('asks for the verb and resource of each route, with the user and groups of the TokenReview', async () => {
    const base = await api({ cacheTtlMs: 0 });
    reviews.length = 0;
    await call(`${base}/api/v1/namespaces/company/kv`, 'alice-token-0123456789');
    await call(`${base}/api/v1/main/logs/some-execution`, 'alice-token-0123456789');
    await call(`${base}/api/v1/namespaces/company/kv/key1`, 'alice-token-0123456789', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '"v"' });
    expect(reviews.map((r) => `${r.verb} ${r.resource} ${r.namespace}`)).toEqual([
      `list kvpairs ${NS}`, `get executions ${NS}`, `create kvpairs ${NS}`, `update kvpairs ${NS}`,
    ]);
    expect(reviews[0]).toMatchObject({ user: 'alice', groups: ['developers', 'system:authenticated'], group: 'flowpilot.io' });
  });

  it('leaves webhooks and /healthz to themselves, and denies unknown API routes', async () => {
    const base = await api();
    expect((await call(`${base}/healthz`)).status).toBe(200);
    const hook = await call(`${base}/api/v1/executions/webhook/company.team/hello/some-key`, undefined, { method: 'POST' });
    expect(hook.status).toBe(404); // the webhook route itself answered: no such webhook trigger
    expect((await call(`${base}/api/v1/no-such-route`)).status).toBe(401);
    const unknown = await call(`${base}/api/v1/no-such-route`, 'alice-token-0123456789');
    expect(unknown.status).toBe(403);
    expect(unknown.body.message).toMatch(/no access rule/);
  });

  it('reuses positive reviews for the TTL, keyed by the token', async () => {
    const base = await api({ cacheTtlMs: 60_000 });
    const before = reviewsCount();
    for (let i = 0; i < 3; i++) expect((await call(`${base}/api/v1/flows/search`, 'alice-token-0123456789')).status).toBe(200);
    expect(reviewsCount() - before).toBe(1);
    // A different token is a different entry; rejected tokens are never cached.
    await call(`${base}/api/v1/flows/search`, 'bob-token-0123456789');
    await call(`${base}/api/v1/flows/search`, 'wrong-token');
    await call(`${base}/api/v1/flows/search`, 'wrong-token');
    expect(reviewsCount() - before).toBe(4);

    const uncached = await api({ cacheTtlMs: 0 });
    const start = reviewsCount();
    for (let i = 0; i < 2; i++) await call(`${uncached}/api/v1/flows/search`, 'alice-token-0123456789');
    expect(reviewsCount() - start).toBe(2);
  });

  it('answers 503 when Kubernetes cannot be reached, without logging the token', async () => {
    const gone = await startKubeTestServer({ tokens: TOKENS });
    const kc = gone.kubeConfig('api-server-token');
    await gone.close();
    const logged: string[] = [];
    const app: Koa = createApp({ stores });
    app.middleware.splice(1, 0, kubeAuth({ kc, namespace: NS, log: (m) => logged.push(m) }));
    const server = await startServer(app, 0, '127.0.0.1');
    servers.push(server);
    const res = await call(`http://127.0.0.1:${server.port}/api/v1/flows/search`, 'alice-token-0123456789');
    expect(res.status).toBe(503);
    expect(logged.length).toBe(1);
    expect(logged.join('\n')).not.toContain('alice-token');
  });

  it('guards /metrics with a non-resource review', async () => {
    const base = await api();
    expect((await call(`${base}/metrics`, 'bob-token-0123456789')).status).toBe(403);
    expect((await call(`${base}/metrics`, 'alice-token-0123456789')).status).toBe(404); // allowed; this app mounts no /metrics
  });
});
