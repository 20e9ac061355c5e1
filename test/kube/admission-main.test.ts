// The Flow admission webhook as the cluster API process serves it: `api/kube-main.ts` started with the chart's
// ADMISSION_* environment (a certificate made with the openssl CLI) against the Kubernetes API test server, a real
// PostgreSQL log store and an S3 bucket. The webhook answers over HTTPS beside the plain API port, and its
// ownership rule reads the process's own Flow cache (a flow id already defined by another Flow resource is refused).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as apiMain } from '../../api/kube-main.js';
import { startPostgres, startS3rver, type Service } from '../support/services.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';

let openssl: string | undefined;
try { openssl = execFileSync('sh', ['-c', 'command -v openssl'], { encoding: 'utf8' }).trim() || undefined; } catch { openssl = undefined; }

const NS = 'flowpilot';
let server: KubeTestServer;
let services: Service[] = [];
let api: Awaited<ReturnType<typeof apiMain>>;
let tmp: string;
let ca: Buffer;

beforeAll(async () => {
  if (!openssl) return;
  tmp = mkdtempSync(join(tmpdir(), 'admission-main-'));
  execFileSync(openssl, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', join(tmp, 'tls.key'), '-out', join(tmp, 'tls.crt')], { stdio: 'ignore' });
  ca = readFileSync(join(tmp, 'tls.crt'));
  server = await startKubeTestServer({ namespaces: ['default', NS] });
  const [pg, s3] = await Promise.all([startPostgres(), startS3rver()]);
  services = [pg, s3];
  api = await apiMain({
    FLOWPILOT_MODE: 'cluster', WATCH_NAMESPACE: NS, POD_NAME: 'api-0', PORT: '0', HOST: '127.0.0.1', API_AUTH: 'false',
    STORAGE_S3_ENDPOINT: s3.url, STORAGE_S3_BUCKET: 'flowpilot', STORAGE_S3_ACCESS_KEY_ID: 'S3RVER', STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
    LOG_STORE_URL: pg.url, PATH: process.env.PATH,
    ADMISSION_PORT: '0', ADMISSION_TLS_CERT_FILE: join(tmp, 'tls.crt'), ADMISSION_TLS_KEY_FILE: join(tmp, 'tls.key'),
  }, server.kubeConfig());
}, 120_000);

afterAll(async () => {
  await api?.close();
  await server?.close();
  for (const s of services) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
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
      host: '127.0.0.1', port: api.admissionPort, path: '/admission/flows', method: 'POST', servername: 'localhost', ca,
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

describe.skipIf(!openssl)('api/kube-main.ts with ADMISSION_TLS_* set', () => {
  it('serves the webhook over HTTPS beside the API port', async () => {
    expect(api.admissionPort).toBeGreaterThan(0);
    expect(api.admissionPort).not.toBe(api.port);
    expect((await admit(flowObject('hello', 'hello'))).allowed).toBe(true);
    const bad = await admit({ ...flowObject('broken', 'broken'), spec: { ...spec('broken'), tasks: [{ id: 'a', type: 'nope.Nope' }] } });
    expect(bad).toMatchObject({ allowed: false, status: { code: 422 } });
    expect(bad.status!.message).toContain('spec.tasks[0].type: Unknown task type `nope.Nope`');
    // Only the admission route is served there (the API's routes stay on the plain port).
    const notFound = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: api.admissionPort, path: '/healthz', servername: 'localhost', ca }, (res) => { res.resume(); resolve(res.statusCode!); })
        .on('error', reject).end();
    });
    expect(notFound).toBe(404);
  });

  it('refuses a second Flow resource for a flow id another Flow resource defines (from the live cache)', async () => {
    await server.kubeConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'flowpilot.io', version: 'v1', namespace: NS, plural: 'flows', body: flowObject('owner', 'shared'),
    });
    let res = await admit(flowObject('intruder', 'shared'));
    for (let i = 0; i < 200 && res.allowed; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await admit(flowObject('intruder', 'shared'));
    }
    expect(res.allowed).toBe(false);
    expect(res.status!.message).toBe("Flow \"intruder\" is invalid: spec.id: Flow company.team.shared is already defined by Flow resource 'owner'");
    expect((await admit(flowObject('owner', 'shared'))).allowed).toBe(true);
  });
});
