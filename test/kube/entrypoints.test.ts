// The cluster-mode entry points as deployed: `operator/kube/main.ts` and `api/kube-main.ts` started from the chart's
// environment against the Kubernetes API test server, a real PostgreSQL log store and an S3 bucket. Callers of
// /api/v1 are authenticated by TokenReview and authorized by SubjectAccessReview; webhooks keep their key; both
// processes serve /healthz and /metrics. With ADMISSION_TLS_* set (a certificate made with the openssl CLI) the API
// process also serves the Flow admission webhook over HTTPS, its ownership rule reading the process's own Flow cache.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { metricsHost } from '../../operator/kube/main.js';
import { ENTRY_NS as NS, startEntrypointCluster, type EntrypointCluster } from './entrypoint-cluster.js';

let cluster: EntrypointCluster;
let server: EntrypointCluster['server'];
let op: EntrypointCluster['op'];
let api: EntrypointCluster['api'];
let denied: string[];
let ca: Buffer | undefined;

let openssl: string | undefined;
try { openssl = execFileSync('sh', ['-c', 'command -v openssl'], { encoding: 'utf8' }).trim() || undefined; } catch { openssl = undefined; }

/** A self-signed certificate for the webhook (the chart makes one with genCA/genSignedCert). */
function webhookCertificate(dir: string): Record<string, string> {
  if (!openssl) return {};
  execFileSync(openssl, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', join(dir, 'tls.key'), '-out', join(dir, 'tls.crt')], { stdio: 'ignore' });
  ca = readFileSync(join(dir, 'tls.crt'));
  return { ADMISSION_PORT: '0', ADMISSION_TLS_CERT_FILE: join(dir, 'tls.crt'), ADMISSION_TLS_KEY_FILE: join(dir, 'tls.key') };
}

beforeAll(async () => {
  // alice may use flowpilot resources; bob is authenticated but allowed nothing.
  cluster = await startEntrypointCluster({
    users: ['alice', 'bob'],
    authorize: (a) => (a.user === 'alice' ? a.group === 'flowpilot.io' : a.user === 'bob' ? false : undefined),
    apiEnv: webhookCertificate,
  });
  ({ server, op, api, denied } = cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
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
    // The only replica holds every partition (OPERATOR_PARTITIONS default 16), listed by its health endpoint.
    await until(async () => ((await (await fetch(`http://127.0.0.1:${op.metricsPort}/healthz`)).json()) as { partitions: number[] }).partitions.length === 16, 'the replica to hold the 16 partitions');
    expect(await (await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`)).text()).toContain('flowpilot_executions');
    // METRICS_HOST=127.0.0.1: bound to that address only (another loopback address of the machine is refused).
    expect(op.metricsHost).toBe('127.0.0.1');
    await expect(fetch(`http://127.0.0.2:${op.metricsPort}/healthz`)).rejects.toThrow();
  });

  it('reads METRICS_HOST (default 0.0.0.0) and refuses a malformed one naming it', () => {
    expect(metricsHost({})).toBe('0.0.0.0');
    expect(metricsHost({ METRICS_HOST: '::' })).toBe('::');
    expect(metricsHost({ METRICS_HOST: 'localhost' })).toBe('localhost');
    expect(() => metricsHost({ METRICS_HOST: 'http://0.0.0.0:9090' })).toThrow(/METRICS_HOST/);
  });

  it('rejects callers without a valid token (401) or without permission (403)', async () => {
    expect((await fetch(url('/api/v1/flows/search'))).status).toBe(401);
    expect((await fetch(url('/api/v1/flows/search'), as('nobody'))).status).toBe(401);
    expect((await fetch(url('/api/v1/flows/search'), as('bob'))).status).toBe(403);
  });

  it('serves the web UI\'s files without a token, while the data it fetches needs one (the sign-in form\'s bearer token)', async () => {
    const root = await fetch(url('/'), { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui');
    const page = await fetch(url('/ui/flows/edit/company.team/hello/overview'));
    expect(page.status).toBe(200); // npm install built ui/dist (postinstall)
    expect(await page.text()).toContain('<div id="root"></div>');
    const data = await fetch(url('/api/v1/flows/search'), { headers: { 'X-Requested-With': 'XMLHttpRequest' } });
    expect(data.status).toBe(401);
    expect((await fetch(url('/api/v1/flows/search'), as('alice', { headers: { 'X-Requested-With': 'XMLHttpRequest' } }))).status).toBe(200);
  });

  it('serves namespace files from the bucket to a caller allowed `namespacefiles`, 403 to others', async () => {
    const form = new FormData();
    form.append('fileContent', new Blob(['print("cluster")']), 'main.py');
    const files = url('/api/v1/namespaces/company.team/files');
    expect((await fetch(`${files}?path=/src/main.py`, as('alice', { method: 'POST', body: form }))).status).toBe(204);
    expect(await (await fetch(`${files}?path=/src/main.py`, as('alice'))).text()).toBe('print("cluster")');
    const listing = await (await fetch(`${files}/directory?path=/src`, as('alice'))).json() as { fileName: string; type: string }[];
    expect(listing.map((f) => `${f.fileName}:${f.type}`)).toEqual(['main.py:File']);
    const refused = await fetch(`${files}/directory`, as('bob'));
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain('namespacefiles.flowpilot.io');
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
    // They come from the operator's own informer cache, which may lag the API's: poll until every expected series is
    // there (a slow machine can take seconds), then assert each one so a failure names the missing series.
    const expected = [
      /flowpilot_task_run_duration_seconds_count\{task_type="ai\.service\.plugin\.core\.log\.Log",state="SUCCESS"\} 1/,
      /flowpilot_executions\{state="SUCCESS"\} 1/,
      /flowpilot_reconcile_duration_seconds_count\{kind="execution"\} [1-9]/,
      /flowpilot_queue_depth\{queue="executions"\} \d/,
    ];
    let text = '';
    for (const giveUp = Date.now() + 60_000; Date.now() < giveUp;) {
      text = await (await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`)).text();
      if (expected.every((re) => re.test(text))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const re of expected) expect(text).toMatch(re);
    // The API's /metrics is a non-resource URL checked like the rest (a Prometheus token needs `get` on it).
    expect((await fetch(url('/metrics'))).status).toBe(401);
    const metrics = await fetch(url('/metrics'), as('admin'));
    expect(await metrics.text()).toContain('flowpilot_http_requests_total');
    expect([...new Set(denied)]).toEqual([]);
  }, 240_000);
});

const spec = (id: string) => ({ id, namespace: 'company.team', tasks: [{ id: 'greet', type: 'ai.service.plugin.core.log.Log', message: 'hi' }] });
const flowObject = (name: string, id: string) => ({ apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name, namespace: NS }, spec: spec(id) });

/** POSTs a CREATE AdmissionReview of `object` to the webhook over HTTPS, trusting only the test certificate. */
function admit(object: { metadata: { name: string }; spec?: unknown }): Promise<{ allowed: boolean; status?: { code: number; message: string } }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: 'u1', kind: { group: 'flowpilot.io', version: 'v1', kind: 'Flow' }, resource: { group: 'flowpilot.io', version: 'v1', resource: 'flows' },
      operation: 'CREATE', name: object.metadata.name, namespace: NS, object,
    },
  });
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port: api.admissionPort, path: '/admission/flows', method: 'POST', servername: 'localhost', ca: ca!,
      headers: { 'content-type': 'application/json' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')).response));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe.skipIf(!openssl)('the Flow admission webhook of api/kube-main.ts (ADMISSION_TLS_* set)', () => {
  it('serves the webhook over HTTPS beside the API port', async () => {
    expect(api.admissionPort).toBeGreaterThan(0);
    expect(api.admissionPort).not.toBe(api.port);
    expect((await admit(flowObject('adm-hello', 'adm-hello'))).allowed).toBe(true);
    const bad = await admit({ ...flowObject('adm-broken', 'adm-broken'), spec: { ...spec('adm-broken'), tasks: [{ id: 'a', type: 'nope.Nope' }] } });
    expect(bad).toMatchObject({ allowed: false, status: { code: 400, reason: 'BadRequest' } });
    expect(bad.status!.message).toContain('spec.tasks[0].type: Unknown task type `nope.Nope`');
    // Only the admission route is served there (the API's routes stay on the plain port).
    const notFound = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: api.admissionPort, path: '/healthz', servername: 'localhost', ca: ca! }, (res) => { res.resume(); resolve(res.statusCode!); })
        .on('error', reject).end();
    });
    expect(notFound).toBe(404);
  });

  it('refuses a second Flow resource for a flow id another Flow resource defines (from the live cache)', async () => {
    await server.kubeConfig('admin-token').makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'flowpilot.io', version: 'v1', namespace: NS, plural: 'flows', body: flowObject('adm-owner', 'adm-shared'),
    });
    let res = await admit(flowObject('adm-intruder', 'adm-shared'));
    // The webhook reads the API process's Flow informer cache, which sees the new resource a moment later.
    for (const giveUp = Date.now() + 60_000; res.allowed && Date.now() < giveUp;) {
      await new Promise((r) => setTimeout(r, 50));
      res = await admit(flowObject('adm-intruder', 'adm-shared'));
    }
    expect(res.allowed).toBe(false);
    expect(res.status!.message).toBe("Flow company.team/adm-shared is invalid: spec.id: Flow company.team.adm-shared is already defined by Flow resource 'adm-owner'");
    expect((await admit(flowObject('adm-owner', 'adm-shared'))).allowed).toBe(true);
  }, 120_000);
});
