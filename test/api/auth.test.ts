// API tests of embedded authentication over the real app and stores: every /api/v1 route (tenant path and unknown
// routes included) is 401 without valid credentials, 200 with basic auth (as Kestra's Python library sends it) or a
// bearer token; /healthz and the webhook (authenticated by its key) stay open; no credential is echoed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedAuthFromEnv, embeddedAuthMiddleware } from '../../api/embedded-auth.js';
import { call, LOG_TYPE, startTestApi, type TestApi, yamlInit } from './helpers.js';

const USER = 'admin';
const PASSWORD = 'correct horse: battery staple';
const TOKEN = 'tok-7f3c9b1e2d4a';
const KEY = 'webhook-key-Qm9vX2J5X3dlYmhvb2s';

let api: TestApi;

const FLOW = `id: hooked
namespace: auth.team
tasks:
  - id: t
    type: ${LOG_TYPE}
    message: hi
triggers:
  - id: hook
    type: ai.service.plugin.core.trigger.Webhook
    key: ${KEY}
`;

const basic = (user: string, pass: string): Record<string, string> =>
  ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}` });
const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` });
const url = (path: string): string => `${api.url}${path}`;

beforeAll(async () => {
  const auth = embeddedAuthFromEnv({ BASIC_AUTH_USERNAME: USER, BASIC_AUTH_PASSWORD: PASSWORD, API_TOKENS: TOKEN })!;
  api = await startTestApi({ before: [embeddedAuthMiddleware(auth)] });
  const created = await call(url('/api/v1/flows'), { ...yamlInit('POST', FLOW), headers: { 'Content-Type': 'application/x-yaml', ...bearer(TOKEN) } });
  expect(created.status).toBe(200);
});
afterAll(async () => { await api.close(); });

describe('embedded API authentication', () => {
  it.each([
    ['no credentials', {}],
    ['a wrong password', basic(USER, 'correct horse: battery stapler')],
    ['a wrong username', basic('root', PASSWORD)],
    ['a wrong bearer token', bearer('tok-7f3c9b1e2d4b')],
    ['a malformed header', { Authorization: 'Basic !!!' }],
  ])('answers 401 with both challenges to %s, echoing no credential', async (_what, headers) => {
    const res = await call(url('/api/v1/flows/search'), { headers });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="flowpilot", charset="UTF-8", Bearer realm="flowpilot"');
    expect(res.body).toEqual({ message: 'Unauthorized: valid credentials are required (basic auth or a bearer token)' });
  });

  it('sends a script\'s request (the web UI\'s X-Requested-With) no Basic challenge, so no browser password prompt', async () => {
    const res = await call(url('/api/v1/flows/search'), { headers: { 'X-Requested-With': 'XMLHttpRequest' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flowpilot"');
    const ok = await call(url('/api/v1/flows/search'), { headers: { 'X-Requested-With': 'XMLHttpRequest', ...basic(USER, PASSWORD) } });
    expect(ok.status).toBe(200);
  });

  it('serves the web UI\'s files without credentials (they hold no data)', async () => {
    const res = await fetch(url('/'), { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/ui');
    expect((await fetch(url('/ui/flows'))).status).not.toBe(401);
  });

  it.each([
    ['GET', '/api/v1/flows/auth.team/hooked'],
    ['GET', '/api/v1/main/flows/auth.team/hooked'],
    ['DELETE', '/api/v1/flows/auth.team/hooked'],
    ['POST', '/api/v1/executions/auth.team/hooked'],
    ['GET', '/api/v1/logs/some-execution'],
    ['PUT', '/api/v1/namespaces/auth.team/kv/k'],
    ['GET', '/API/V1/flows/search'],
    ['GET', '/api/v1/no-such-route'],
    ['GET', '/api/v1/%66lows/search'],
  ])('refuses %s %s without credentials and changes nothing', async (method, path) => {
    const res = await call(url(path), { method, headers: { 'Content-Type': 'application/json' }, body: method === 'GET' ? undefined : '1' });
    expect(res.status).toBe(401);
    expect((await call(url('/api/v1/flows/auth.team/hooked'), { headers: bearer(TOKEN) })).status).toBe(200);
    expect((await call(url('/api/v1/namespaces/auth.team/kv/k'), { headers: bearer(TOKEN) })).status).toBe(404);
  });

  it('serves a caller with basic auth, as fetch and Kestra\'s Python library send it', async () => {
    const res = await call(url('/api/v1/flows/search?namespace=auth.team'), { headers: basic(USER, PASSWORD) });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(1);
    const kv = await call(url('/api/v1/namespaces/auth.team/kv/from-basic'), { method: 'PUT', headers: { ...basic(USER, PASSWORD), 'Content-Type': 'application/json' }, body: '1' });
    expect(kv.status).toBe(200);
  });

  it('serves a caller with a bearer token, under both path forms', async () => {
    expect((await call(url('/api/v1/flows/auth.team/hooked'), { headers: bearer(TOKEN) })).body.id).toBe('hooked');
    expect((await call(url('/api/v1/main/flows/auth.team/hooked'), { headers: bearer(TOKEN) })).status).toBe(200);
  });

  it('leaves /healthz open and the webhook to its key', async () => {
    expect((await call(url('/healthz'))).body).toEqual({ status: 'UP' });
    const hooked = await call(url(`/api/v1/executions/webhook/auth.team/hooked/${KEY}`), { method: 'POST' });
    expect(hooked.status).toBe(200);
    expect(hooked.body.flowId).toBe('hooked');
    expect((await call(url('/api/v1/executions/webhook/auth.team/hooked/wrong-key'), { method: 'POST' })).status).toBe(404);
  });
});
