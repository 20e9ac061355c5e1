// The cluster-mode entry points as deployed: `operator/kube/main.ts` and `api/kube-main.ts` started from the chart's
// environment against the Kubernetes API test server, a real PostgreSQL log store and an S3 bucket. Callers of
// /api/v1 are authenticated by TokenReview and authorized by SubjectAccessReview; webhooks keep their key; both
// processes serve /healthz and /metrics.
import { CoreV1Api } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as apiMain } from '../../api/kube-main.js';
import { main as operatorMain } from '../../operator/kube/main.js';
import { startPostgres, startS3rver, type Service } from '../support/services.js';
import { chartAuthorizer, COMPONENT_ROLES } from './chart-rbac.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'flowpilot';
let server: KubeTestServer;
let kubelet: SimulatedKubelet;
let services: Service[] = [];
let op: Awaited<ReturnType<typeof operatorMain>>;
let api: Awaited<ReturnType<typeof apiMain>>;
let tmp: string;
const denied: string[] = [];

beforeAll(async () => {
  const chart = chartAuthorizer(denied);
  const tokens = Object.fromEntries(['admin', ...Object.keys(COMPONENT_ROLES), 'alice', 'bob'].map((u) => [`${u}-token`, { username: u }]));
  // alice may use flowpilot resources; bob is authenticated but allowed nothing.
  server = await startKubeTestServer({
    tokens, authorizeRequests: true,
    authorize: (a) => (a.user === 'alice' ? a.group === 'flowpilot.io' : a.user === 'bob' ? false : chart(a)),
  });
  const admin = server.kubeConfig('admin-token');
  await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const [pg, s3] = await Promise.all([startPostgres(), startS3rver()]);
  services = [pg, s3];
  tmp = mkdtempSync(join(tmpdir(), 'entry-'));
  writeFileSync(join(tmp, 'kubeconfig'), server.kubeConfig('task-token').exportConfig());
  kubelet = await startSimulatedKubelet({ kc: admin, namespace: NS, pathMap: { '/app': ROOT } });
  const env = {
    FLOWPILOT_MODE: 'cluster', WATCH_NAMESPACE: NS, POD_NAME: 'operator-0', METRICS_PORT: '0', PORT: '0', HOST: '127.0.0.1',
    LEADER_ELECTION_LEASE_NAME: 'flowpilot-operator', RUNNER_IMAGE: 'flowpilot-runner:test',
    STORAGE_S3_ENDPOINT: s3.url, STORAGE_S3_BUCKET: 'flowpilot', STORAGE_S3_ACCESS_KEY_ID: 'S3RVER', STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
    LOG_STORE_URL: pg.url, PATH: process.env.PATH, KUBECONFIG: join(tmp, 'kubeconfig'),
  };
  op = await operatorMain(env, server.kubeConfig('operator-token'));
  api = await apiMain(env, server.kubeConfig('api-token'));
}, 120_000);

afterAll(async () => {
  await api?.close();
  await op?.close();
  await kubelet?.stop();
  await server?.close();
  for (const s of services) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const url = (path: string) => `http://127.0.0.1:${api.port}${path}`;
const as = (user: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${user}-token` } });

const FLOW = `id: hello
namespace: company.team
tasks:
  - id: greet
    type: ai.service.plugin.core.log.Log
    message: "hello from the cluster"
triggers:
  - id: hook
    type: ai.service.plugin.core.trigger.Webhook
    key: a-long-random-webhook-key
`;

describe('cluster entry points', () => {
  it('serves health and metrics on both processes', async () => {
    expect((await fetch(url('/healthz'))).status).toBe(200);
    const health = await (await fetch(`http://127.0.0.1:${op.metricsPort}/healthz`)).json() as { status: string };
    expect(health.status).toBe('UP');
    expect(await (await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`)).text()).toContain('flowpilot_executions');
  });

  it('rejects callers without a valid token (401) or without permission (403)', async () => {
    expect((await fetch(url('/api/v1/flows/search'))).status).toBe(401);
    expect((await fetch(url('/api/v1/flows/search'), as('nobody'))).status).toBe(401);
    expect((await fetch(url('/api/v1/flows/search'), as('bob'))).status).toBe(403);
  });

  it('runs a flow created through the authenticated API as Jobs, and starts it by webhook key without a token', async () => {
    const created = await fetch(url('/api/v1/flows'), as('alice', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: FLOW }));
    expect(created.status, await created.clone().text()).toBe(200);
    const hook = await fetch(url('/api/v1/executions/webhook/company.team/hello/a-long-random-webhook-key'), { method: 'POST' });
    expect(hook.status, await hook.clone().text()).toBe(200);
    const { id } = await hook.json() as { id: string };
    let state = '';
    for (let i = 0; i < 600 && !['SUCCESS', 'FAILED'].includes(state); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const r = await fetch(url(`/api/v1/executions/${id}`), as('alice'));
      if (r.status === 200) state = ((await r.json()) as { state: { current: string } }).state.current;
    }
    expect(state).toBe('SUCCESS');
    const logs = await (await fetch(url(`/api/v1/logs/${id}`), as('alice'))).json() as { message: string }[];
    expect(logs.map((l) => l.message).join('\n')).toContain('hello from the cluster');
    // The operator's metrics: the executions gauge by state and the task run's duration (observed when it ended).
    let text = '';
    for (let i = 0; i < 100 && !text.includes('task_type="ai.service.plugin.core.log.Log"'); i++) {
      text = await (await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`)).text();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(text).toMatch(/flowpilot_task_run_duration_seconds_count\{task_type="ai\.service\.plugin\.core\.log\.Log",state="SUCCESS"\} 1/);
    expect(text).toMatch(/flowpilot_executions\{state="SUCCESS"\} 1/);
    expect(text).toMatch(/flowpilot_reconcile_duration_seconds_count\{kind="execution"\} [1-9]/);
    expect(text).toMatch(/flowpilot_queue_depth\{queue="executions"\} \d/);
    // The API's /metrics is a non-resource URL checked like the rest (a Prometheus token needs `get` on it).
    expect((await fetch(url('/metrics'))).status).toBe(401);
    const metrics = await fetch(url('/metrics'), as('admin'));
    expect(await metrics.text()).toContain('flowpilot_http_requests_total');
    expect([...new Set(denied)]).toEqual([]);
  }, 90_000);
});
