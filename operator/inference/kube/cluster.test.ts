// Cluster-mode batch inference end to end: POST /v1/completions (real Koa server) creates an InferenceJob and its token
// Secret on the Kubernetes API test server; the reconciler creates the runner Job; the simulated kubelet runs the real
// runner (demo GGUF model) as a local process, which writes results to a real S3-protocol server (s3rver) and status
// into the resource; GET /get_result shows SUCCESS with counts. Also: a Pod killed mid-job resumes without redoing
// finished items, and a Job that fails for good marks the InferenceJob FAILED with a message. The API, the reconciler and
// the runner Pods each use their own token, authorized by exactly the rules of the chart's Roles (rbac.yaml).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BatchV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceRouter } from '../../../api/inference/router.js';
import { listKeys, postJson, readObject, s3Env, startS3, waitForResult, type S3Fixture } from '../../../test/inference/helpers.js';
import { chartRoles } from '../../../test/kube/chart-rbac.js';
import { startSimulatedKubelet, type SimulatedKubelet } from '../../../test/kube/kubelet.js';
import { startKubeTestServer, type AuthzAttributes, type KubeTestServer } from '../../../test/kube/test-server/index.js';
import { inferenceJobName, KINDS } from '../../kube/names.js';
import { KindApi } from '../../kube/store/kube-api.js';
import { loadInferenceConfig } from '../config.js';
import { startInferenceReconciler, type InferenceReconciler } from './reconciler.js';
import { buildInferenceJob, runnerJobName, tokenSecretName, type InferenceJobResource } from './resource.js';
import { ClusterInferenceService } from './service.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const NS = 'inference-test';
const BROKEN_NS = 'inference-broken';
const TOKEN = 'cluster-token-7f3a';

let s3: S3Fixture;
let server: KubeTestServer;
let kc: KubeConfig;
let dir: string;
let kubelets: SimulatedKubelet[] = [];
let reconcilers: InferenceReconciler[] = [];
let http: Server;
let base: string;

const ROLES = chartRoles();
const USERS: Record<string, string> = { 'api-token': 'api', 'operator-token': 'operator', 'runner-token': 'inference-runner' };
function authorize(a: AuthzAttributes): boolean {
  if (a.user === 'admin') return true; // the test itself and the simulated kubelet / Job controller
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return (ROLES[a.user] ?? []).some((r) => r.apiGroups.includes(a.group ?? '') && r.resources.includes(resource ?? '') && r.verbs.includes(a.verb));
}

async function startApi(namespace: string): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  const svc = new ClusterInferenceService({ kc: server.kubeConfig('api-token'), namespace, config: loadInferenceConfig(s3Env(s3, [TOKEN])) });
  app.use(createInferenceRouter(svc).routes());
  const srv: Server = await new Promise((ok) => { const s = app.listen(0, '127.0.0.1', () => ok(s)); });
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, server: srv };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, polls = 600): Promise<T> {
  for (let i = 0; i < polls; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  s3 = await startS3(['bucket']);
  server = await startKubeTestServer({
    tokens: { 'admin-token': { username: 'admin' }, ...Object.fromEntries(Object.entries(USERS).map(([t, u]) => [t, { username: u }])) },
    authorize, authorizeRequests: true, ownerReferencesPermissionEnforcement: true,
  });
  kc = server.kubeConfig('admin-token');
  dir = mkdtempSync(join(tmpdir(), 'inference-kube-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig('runner-token').exportConfig());
  const env = { ...s3Env(s3, []), ACCESS_TOKENS: '', KUBECONFIG: kubeconfig, INFERENCE_THREADS: '1' };
  for (const [namespace, extra] of [[NS, {}], [BROKEN_NS, { KUBECONFIG: join(dir, 'missing-kubeconfig') }]] as const) {
    kubelets.push(await startSimulatedKubelet({ kc, namespace, pathMap: { '/app': ROOT } }));
    reconcilers.push(await startInferenceReconciler({
      kc: server.kubeConfig('operator-token'), namespace, launcherSettings: { runnerImage: 'flowpilot-runner:test', env: { ...env, ...extra }, backoffLimit: namespace === NS ? 2 : 1, terminationGracePeriodSeconds: 2 },
      secretWaitSeconds: namespace === NS ? 120 : 1,
      onError: (e, where) => console.warn(`[reconciler] ${where}`, (e as Error).message),
    }));
  }
  ({ url: base, server: http } = await startApi(NS));
}, 60_000);

afterAll(async () => {
  for (const r of reconcilers) await r.stop();
  for (const k of kubelets) await k.stop();
  await new Promise((r) => http?.close(r));
  await server?.close();
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (over: Record<string, unknown> = {}) => ({
  model: 'llama2_7b', question: 'Summarise:', list_inputs: ['alpha beta', 'gamma delta', 'epsilon'], bucket_name: 'bucket',
  session: 'sess-1', max_tokens: 8, return_output: true, ...over,
});
const auth = { authorization: `Bearer ${TOKEN}` };

describe('cluster-mode batch inference', () => {
  it('POST creates an InferenceJob (no token in it) and a Secret it owns; the runner Job writes results; get_result shows SUCCESS', async () => {
    const r = await postJson(`${base}/v1/completions`, body(), { ...auth, 'idempotency-key': 'k-1' });
    expect(r.status).toBe(202);
    const taskId = r.body.task_id as string;
    expect(taskId).toMatch(/^[0-9a-f]{32}$/);

    const ij = await new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, NS).get(inferenceJobName(taskId));
    expect(ij?.spec).toMatchObject({ model: 'llama2_7b', session: 'sess-1', tokenSecretRef: { name: tokenSecretName(taskId), key: 'token' } });
    expect(JSON.stringify(ij)).not.toContain(TOKEN);
    const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: tokenSecretName(taskId), namespace: NS });
    expect(Buffer.from(secret.data!.token!, 'base64').toString()).toBe(TOKEN);
    // Made by the API without an owner (it may not delete Secrets, which an ownerReference needs under the admission
    // plugin); the operator adopts it before starting the runner Job.
    const adopted = await until('the operator to adopt the token Secret', async () =>
      (await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: tokenSecretName(taskId), namespace: NS })).metadata?.ownerReferences?.[0]);
    expect(adopted).toEqual({ apiVersion: 'flowpilot.io/v1', kind: 'InferenceJob', name: ij!.metadata.name, uid: ij!.metadata.uid, controller: true, blockOwnerDeletion: true });
    // The API's identity may create that Secret but not read it back (the chart's Role, enforced by the test server).
    await expect(server.kubeConfig('api-token').makeApiClient(CoreV1Api).readNamespacedSecret({ name: tokenSecretName(taskId), namespace: NS }))
      .rejects.toMatchObject({ code: 403 });

    // Idempotency-Key: same key and body → same job (200); same key, other body → 409.
    const again = await postJson(`${base}/v1/completions`, body(), { ...auth, 'idempotency-key': 'k-1' });
    expect(again).toMatchObject({ status: 200, body: { task_id: taskId } });
    const conflict = await postJson(`${base}/v1/completions`, body({ max_tokens: 9 }), { ...auth, 'idempotency-key': 'k-1' });
    expect(conflict.status).toBe(409);
    expect((await postJson(`${base}/v1/completions`, body(), { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await postJson(`${base}/v1/completions`, body({ session: '../x' }), auth)).body.field).toBe('session');

    const view = await waitForResult(base, taskId, TOKEN);
    expect(view).toMatchObject({ task_id: taskId, status: 'SUCCESS', progress: { total: 3, done: 3, failed: 0 }, backend: expect.stringContaining('demo-random-weights') });
    expect(view.tokens.completion).toBeGreaterThan(0);
    expect(view.outputs).toHaveLength(3);
    expect(view.result_key).toBe(`${TOKEN}/sess-1/${view.result_file}`);
    const doc = JSON.parse(await readObject(s3.client, 'bucket', view.result_key));
    expect(doc).toMatchObject({ task_id: taskId, status: 'SUCCESS', counts: { total: 3, done: 3, failed: 0 } });
    expect(doc.results.map((x: { input: string }) => x.input)).toEqual(['alpha beta', 'gamma delta', 'epsilon']);
    // The same result files as the embedded service (results.ts): output and error JSONL, manifest, then the document.
    const folder = `${TOKEN}/sess-1/`;
    const output = (await readObject(s3.client, 'bucket', folder + view.files.output)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(output.map((l: { custom_id: string }) => l.custom_id)).toEqual(['0', '1', '2']);
    expect(await readObject(s3.client, 'bucket', folder + view.files.errors)).toBe('');
    expect(JSON.parse(await readObject(s3.client, 'bucket', folder + view.files.manifest))).toMatchObject({ task_id: taskId, state: 'SUCCESS', counts: { total: 3, done: 3, failed: 0, not_generated: 0 } });
    // Only the result files remain in the folder: the checkpoint is removed just after the final status is written.
    await until('the checkpoint removal', async () => (await listKeys(s3.client, 'bucket', folder)).length === 4);
    expect((await listKeys(s3.client, 'bucket', folder)).sort()).toEqual([view.files.errors, view.files.manifest, view.files.output, view.result_file].map((f) => folder + f).sort());
    expect((await listKeys(s3.client, 'bucket', folder)).sort().at(-1)).toBe(view.result_key);
    // Without the owner's token there is no result_key (it begins with the token).
    const anon = await (await fetch(`${base}/get_result/${taskId}`)).json() as Record<string, unknown>;
    expect(anon).toMatchObject({ status: 'SUCCESS', result_file: view.result_file });
    expect(anon.result_key).toBeUndefined();
    expect((await fetch(`${base}/get_result/${'0'.repeat(32)}`)).status).toBe(404);
  }, 120_000);

  it('a Pod killed mid-job is retried by its Job and resumes without redoing finished items', async () => {
    // Long enough that progress is seen mid-job even on a fast machine (progress is written at most every 500 ms).
    const N = 240;
    const inputs = Array.from({ length: N }, (_, i) => `input number ${i}`);
    const r = await postJson(`${base}/v1/completions`, body({ list_inputs: inputs, session: 'sess-crash', max_tokens: 24, return_output: false }), auth);
    expect(r.status).toBe(202);
    const taskId = r.body.task_id as string;
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, NS);
    const atKill = await until('first items', async () => {
      const s = (await api.get(inferenceJobName(taskId)))?.status;
      return (s?.done ?? 0) >= 2 ? s : undefined;
    });
    expect(atKill.done).toBeLessThan(N); // the kill lands in the middle of the job
    const proc = kubelets[0]!.processes().find((p) => p.pod.startsWith(runnerJobName(taskId)) && p.alive)!;
    process.kill(proc.pid, 'SIGKILL');

    const view = await waitForResult(base, taskId, TOKEN);
    expect(view).toMatchObject({ status: 'SUCCESS', progress: { total: N, done: N, failed: 0 } });
    const pods = [...new Set(kubelets[0]!.processes().filter((p) => p.pod.startsWith(runnerJobName(taskId))).map((p) => p.pod))];
    expect(pods).toHaveLength(2);
    const resumed = new RegExp(`resuming: (\\d+) of ${N} items already finished`).exec(kubelets[0]!.output(pods[1]!));
    expect(Number(resumed?.[1])).toBeGreaterThanOrEqual(atKill.done!);
    const batch = kc.makeApiClient(BatchV1Api);
    const job = await until('the Job to complete', async () => {
      const j = await batch.readNamespacedJob({ name: runnerJobName(taskId), namespace: NS });
      return j.status?.succeeded ? j : undefined;
    });
    expect(job.status).toMatchObject({ failed: 1, succeeded: 1 });
    const doc = JSON.parse(await readObject(s3.client, 'bucket', view.result_key));
    expect(doc.results.map((x: { index: number }) => x.index)).toEqual(inputs.map((_, i) => i));
  }, 240_000);

  it('a bucket that does not exist fails the job with a message for the caller', async () => {
    const r = await postJson(`${base}/v1/completions`, body({ bucket_name: 'no-such-bucket' }), auth);
    const view = await waitForResult(base, r.body.task_id, TOKEN);
    expect(view).toMatchObject({ status: 'FAILED', error: expect.stringContaining("bucket 'no-such-bucket' does not exist") });
  }, 120_000);

  it('an InferenceJob whose token Secret never appears fails without a Job', async () => {
    const taskId = 'f'.repeat(32);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, BROKEN_NS);
    await api.create({ ...buildInferenceJob(taskId, { ...body(), storage_provider: 's3', return_output: false } as never, { tokenHash: 'x', requestHash: 'y' }) });
    const s = await until('FAILED', async () => {
      const st = (await api.get(inferenceJobName(taskId)))?.status;
      return st?.status === 'FAILED' ? st : undefined;
    });
    expect(s.error).toBe(`the access token Secret '${tokenSecretName(taskId)}' does not exist`);
    await expect(kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: runnerJobName(taskId), namespace: BROKEN_NS })).rejects.toMatchObject({ code: 404 });
  }, 60_000);

  it('a job deleted before the operator adopted its token Secret takes that Secret with it (and no other)', async () => {
    const taskId = 'e'.repeat(32);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, BROKEN_NS);
    const ij = await api.create({ ...buildInferenceJob(taskId, { ...body(), storage_provider: 's3', return_output: false } as never, { tokenHash: 'x', requestHash: 'y' }) });
    await until('FAILED', async () => (await api.get(inferenceJobName(taskId)))?.status?.status === 'FAILED'); // no Secret in time: never adopted
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace: BROKEN_NS, body: { metadata: { name: tokenSecretName(taskId), annotations: { 'flowpilot.io/inference-job-uid': ij.metadata.uid! } }, stringData: { token: TOKEN } } });
    await core.createNamespacedSecret({ namespace: BROKEN_NS, body: { metadata: { name: 'unrelated', annotations: { 'flowpilot.io/inference-job-uid': 'another-uid' } }, stringData: { token: TOKEN } } });
    await api.delete(ij.metadata.name);
    await until('the orphan token Secret to go', async () => !(await core.readNamespacedSecret({ name: tokenSecretName(taskId), namespace: BROKEN_NS }).catch(() => undefined)));
    expect((await core.readNamespacedSecret({ name: 'unrelated', namespace: BROKEN_NS })).metadata?.name).toBe('unrelated');
  }, 60_000);

  it('a runner Job that fails for good marks the InferenceJob FAILED with a message', async () => {
    const broken = await startApi(BROKEN_NS);
    try {
      const r = await postJson(`${broken.url}/v1/completions`, body({ session: 'sess-broken' }), auth);
      expect(r.status).toBe(202);
      const view = await waitForResult(broken.url, r.body.task_id, TOKEN);
      expect(view.status).toBe('FAILED');
      expect(view.error).toMatch(/runner Job failed \(BackoffLimitExceeded/);
      expect(view.error).toMatch(/last Pod: Error \(exit 1\)/);
    } finally {
      await new Promise((ok) => broken.server.close(ok));
    }
  }, 120_000);

  it("GET /v1/batches lists the caller's InferenceJobs; completion_window is refused as not offered here", async () => {
    const r = await postJson(`${base}/v1/completions`, body({ session: 'listed' }), auth);
    const taskId = r.body.task_id as string;
    const list = await (await fetch(`${base}/v1/batches?limit=100`, { headers: auth })).json() as { data: { task_id: string; state: string }[]; has_more: boolean };
    expect(list.data.map((j) => j.task_id)).toContain(taskId);
    expect(list.data.every((j) => typeof j.state === 'string')).toBe(true);
    expect((await fetch(`${base}/v1/batches`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const window = await postJson(`${base}/v1/completions`, body({ completion_window: '1h' }), auth);
    expect(window).toMatchObject({ status: 400, body: { field: 'completion_window' } });
    await waitForResult(base, taskId, TOKEN);
  }, 120_000);

  it('cancel stops a running job: its runner ends it CANCELLED with the finished items in the result files', async () => {
    const inputs = Array.from({ length: 200 }, (_, i) => `input number ${i}`);
    const r = await postJson(`${base}/v1/completions`, body({ session: 'cancelled', list_inputs: inputs, max_tokens: 48, return_output: false }), auth);
    const taskId = r.body.task_id as string;
    await until('a few items done', async () => ((await (await fetch(`${base}/get_result/${taskId}`)).json()) as { progress: { done: number } }).progress.done >= 2, 1200);
    const c = await postJson(`${base}/v1/batches/${taskId}/cancel`, {}, auth);
    expect(c.status).toBe(200);
    expect(c.body.state).toBe('CANCELLING');
    expect((await postJson(`${base}/v1/batches/${taskId}/cancel`, {}, { authorization: 'Bearer wrong' })).status).toBe(401);
    const v = await waitForResult(base, taskId, TOKEN);
    expect(v).toMatchObject({ status: 'FAILED', state: 'CANCELLED', error: expect.stringContaining('cancelled by its owner') });
    expect(v.progress.done).toBeLessThan(200);
    const folder = `${TOKEN}/cancelled/`;
    const lines = async (f: string) => (await readObject(s3.client, 'bucket', folder + f)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const output = await lines(v.files.output);
    const errors = await lines(v.files.errors);
    expect(output.length).toBe(v.progress.done);
    expect(output.length + errors.length).toBe(200);
    expect(errors.every((e: { error: { code: string } }) => e.error.code === 'cancelled')).toBe(true);
  }, 240_000);

  it('a job cancelled before its runner Job exists is ended CANCELLED by the reconciler', async () => {
    const taskId = 'd'.repeat(32);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, BROKEN_NS);
    const ij = buildInferenceJob(taskId, { ...body(), storage_provider: 's3', return_output: false } as never, { tokenHash: 'x', requestHash: 'y' });
    await api.create({ ...ij, spec: { ...ij.spec, cancelRequested: true } });
    const st = await until('CANCELLED', async () => {
      const x = (await api.get(inferenceJobName(taskId)))?.status;
      return x?.status === 'CANCELLED' ? x : undefined;
    });
    expect(st.error).toBe('cancelled by its owner before it started');
    await expect(kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: runnerJobName(taskId), namespace: BROKEN_NS })).rejects.toMatchObject({ code: 404 });
  }, 60_000);
});
