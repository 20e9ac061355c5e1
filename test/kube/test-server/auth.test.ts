// Authentication and reviews on the test server: 401 without a known token, TokenReview and SubjectAccessReview
// answers, and per-request authorization (403) when enabled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationV1Api, AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startKubeTestServer, type AuthzAttributes, type KubeTestServer } from './index.js';

let srv: KubeTestServer;
const asked: AuthzAttributes[] = [];
beforeAll(async () => {
  srv = await startKubeTestServer({
    crdDir: undefined,
    tokens: { 'admin-token': { username: 'admin', groups: ['system:masters'] }, 'runner-token': { username: 'system:serviceaccount:default:runner' } },
    authorize: (a) => { asked.push(a); return a.user === 'admin' || (a.verb === 'get' && a.resource === 'configmaps'); },
    authorizeRequests: true,
  });
});
afterAll(async () => { await srv.close(); });

describe('authentication', () => {
  it('refuses unknown tokens with 401', async () => {
    const res = await fetch(`${srv.url}/api/v1/namespaces/default/configmaps`, { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    expect((await fetch(`${srv.url}/api/v1/namespaces`)).status).toBe(401);
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
  });

  it('answers TokenReviews from the token table', async () => {
    const api = srv.kubeConfig('admin-token').makeApiClient(AuthenticationV1Api);
    const ok = await api.createTokenReview({ body: { spec: { token: 'runner-token' } } });
    expect(ok.status?.authenticated).toBe(true);
    expect(ok.status?.user?.username).toBe('system:serviceaccount:default:runner');
    const bad = await api.createTokenReview({ body: { spec: { token: 'forged' } } });
    expect(bad.status?.authenticated).toBe(false);
  });

  it('answers SubjectAccessReviews from authorize', async () => {
    const api = srv.kubeConfig('admin-token').makeApiClient(AuthorizationV1Api);
    const yes = await api.createSubjectAccessReview({ body: { spec: { user: 'bob', resourceAttributes: { verb: 'get', resource: 'configmaps', namespace: 'x' } } } });
    expect(yes.status?.allowed).toBe(true);
    const no = await api.createSubjectAccessReview({ body: { spec: { user: 'bob', resourceAttributes: { verb: 'delete', group: 'flowpilot.io', resource: 'executions', namespace: 'x' } } } });
    expect(no.status?.allowed).toBe(false);
    expect(asked.some((a) => a.user === 'bob' && a.verb === 'delete' && a.group === 'flowpilot.io' && a.resource === 'executions' && a.namespace === 'x')).toBe(true);
  });

  it('authorizes each request when asked to (403 Forbidden)', async () => {
    const runner = srv.kubeConfig('runner-token').makeApiClient(CoreV1Api);
    const admin = srv.kubeConfig('admin-token').makeApiClient(CoreV1Api);
    await admin.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' } } });
    expect((await runner.readNamespacedConfigMap({ namespace: 'default', name: 'c' })).metadata?.name).toBe('c');
    const denied = await runner.deleteNamespacedConfigMap({ namespace: 'default', name: 'c' }).catch((e) => e);
    expect(denied.code).toBe(403);
    expect(JSON.parse(denied.body).reason).toBe('Forbidden');
  });
});
