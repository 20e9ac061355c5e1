// Cluster-mode batch inference end to end: POST /v1/completions (real Koa server) creates an InferenceJob and its token
// Secret on the Kubernetes API test server; the reconciler creates the report ConfigMap and the runner Job; the simulated
// kubelet runs the real runner (demo GGUF model) as a local process, which writes results (partial JSONL parts while it
// runs) to a real S3-protocol server (s3rver) and reports through its ConfigMap, which the reconciler folds into the
// status (the only status writer, asserted from the test server's authorization log); GET /get_result shows SUCCESS. Also: a Pod killed mid-job resumes without redoing
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
import { hashToken, JobSecrets } from '../auth.js';
import { SecretBox } from '../../secrets/sealed.js';
import { clusterInferenceService, patchInferenceJobStatus } from './store.js';
import { promptOf, startModelServer, type ModelServer } from '../../../test/inference/model-server.js';

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
/** A scripted OpenAI-compatible server (model id `held`): a prompt with "wait" is held until released. */
let model: ModelServer;

const ROLES = chartRoles();
const USERS: Record<string, string> = { 'api-token': 'api', 'operator-token': 'operator', 'runner-token': 'inference-runner' };
/** Who wrote InferenceJob status (user names), as the test server authorized the writes. */
const statusWriters = new Set<string>();
/** The job secrets of the API and the operator (both given the same ENCRYPTION_KEY in a deployment). */
const SECRETS = new JobSecrets(new SecretBox(Buffer.alloc(32, 9)));
function authorize(a: AuthzAttributes): boolean {
  if (a.resource === 'inferencejobs' && a.subresource === 'status' && a.verb !== 'get') statusWriters.add(a.user);
  if (a.user === 'admin') return true; // the test itself and the simulated kubelet / Job controller
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return (ROLES[a.user] ?? []).some((r) => r.apiGroups.includes(a.group ?? '') && r.resources.includes(resource ?? '') && r.verbs.includes(a.verb));
}

async function startApi(namespace: string): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  const svc = clusterInferenceService({ kc: server.kubeConfig('api-token'), namespace, config: loadInferenceConfig({ ...s3Env(s3, [TOKEN]), ...heldModel() }), secrets: SECRETS });
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
  model = await startModelServer();
  model.reply = (_n, b) => (promptOf(b).includes('wait') ? { kind: 'hold' } : { kind: 'ok', text: 'fine' });
  server = await startKubeTestServer({
    tokens: { 'admin-token': { username: 'admin' }, ...Object.fromEntries(Object.entries(USERS).map(([t, u]) => [t, { username: u }])) },
    authorize, authorizeRequests: true, ownerReferencesPermissionEnforcement: true,
  });
  kc = server.kubeConfig('admin-token');
  dir = mkdtempSync(join(tmpdir(), 'inference-kube-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig('runner-token').exportConfig());
  const env = { ...s3Env(s3, []), ...heldModel(), ACCESS_TOKENS: '', KUBECONFIG: kubeconfig, INFERENCE_THREADS: '1', INFERENCE_FLUSH_ITEMS: '4' };
  for (const [namespace, extra] of [[NS, {}], [BROKEN_NS, { KUBECONFIG: join(dir, 'missing-kubeconfig') }]] as const) {
    kubelets.push(await startSimulatedKubelet({ kc, namespace, pathMap: { '/app': ROOT } }));
    reconcilers.push(await startInferenceReconciler({
      kc: server.kubeConfig('operator-token'), namespace, launcherSettings: { runnerImage: 'flowpilot-runner:test', env: { ...env, ...extra }, backoffLimit: namespace === NS ? 2 : 1, terminationGracePeriodSeconds: 2 },
      secretWaitSeconds: namespace === NS ? 120 : 1, secrets: SECRETS,
      onError: (e, where) => console.warn(`[reconciler] ${where}`, (e as Error).message),
    }));
  }
  ({ url: base, server: http } = await startApi(NS));
}, 60_000);
const heldModel = () => ({ INFERENCE_MODEL_HELD: `openai:${model.url}#served` });

afterAll(async () => {
  for (const r of reconcilers) await r.stop();
  for (const k of kubelets) await k.stop();
  await new Promise((r) => http?.close(r));
  await server?.close();
  await s3?.close();
  model?.release();
  await model?.close();
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
    // The owner is a keyed hash (HMAC under ENCRYPTION_KEY), as in embedded mode: not the token's plain SHA-256.
    expect(ij!.spec.tokenHash).toBe(SECRETS.tokenHash(TOKEN));
    expect(ij!.spec.tokenHash).not.toBe(hashToken(TOKEN));
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
    // The status names the result file, never its full key (which begins with the token).
    const final = await new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, NS).get(inferenceJobName(taskId));
    expect(final?.status).toMatchObject({ status: 'SUCCESS', resultFile: view.result_file });
    expect(JSON.stringify(final)).not.toContain(TOKEN);
    // Without the owner's token there is no result_key (it begins with the token).
    const anon = await (await fetch(`${base}/get_result/${taskId}`)).json() as Record<string, unknown>;
    expect(anon).toMatchObject({ status: 'SUCCESS', result_file: view.result_file });
    expect(anon.result_key).toBeUndefined();
    expect((await fetch(`${base}/get_result/${'0'.repeat(32)}`)).status).toBe(404);
    // Once the job ended nothing needs the token: the operator deletes its Secret (within a resync); results still read.
    await until('the token Secret deleted', async () => kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: tokenSecretName(taskId), namespace: NS })
      .then(() => false, (e: { code?: number }) => e.code === 404), 200);
    expect((await waitForResult(base, taskId, TOKEN)).outputs).toHaveLength(3);
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

  it("GET /v1/batches lists the caller's InferenceJobs", async () => {
    const r = await postJson(`${base}/v1/completions`, body({ session: 'listed' }), auth);
    const taskId = r.body.task_id as string;
    const list = await (await fetch(`${base}/v1/batches?limit=100`, { headers: auth })).json() as { data: { task_id: string; state: string }[]; has_more: boolean };
    expect(list.data.map((j) => j.task_id)).toContain(taskId);
    expect(list.data.every((j) => typeof j.state === 'string')).toBe(true);
    expect((await fetch(`${base}/v1/batches`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    await waitForResult(base, taskId, TOKEN);
  }, 120_000);

  it('cancel stops a running job: its runner ends it CANCELLED with the finished items in the result files', async () => {
    const inputs = Array.from({ length: 200 }, (_, i) => `input number ${i}`);
    const r = await postJson(`${base}/v1/completions`, body({ session: 'cancelled', list_inputs: inputs, max_tokens: 48, return_output: false }), auth);
    const taskId = r.body.task_id as string;
    await until('a few items done', async () => ((await (await fetch(`${base}/get_result/${taskId}`)).json()) as { progress: { done: number } }).progress.done >= 2, 1200);
    // Partial JSONL parts appear while the job runs (every INFERENCE_FLUSH_ITEMS=4 items), one line per finished item.
    const folder = `${TOKEN}/cancelled/`;
    const part = await until('a partial output part', async () => (await listKeys(s3.client, 'bucket', folder)).find((k) => /-partial\/output-\d{6}\.jsonl$/.test(k)), 1200);
    const partLines = (await readObject(s3.client, 'bucket', part)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(partLines.length).toBeGreaterThanOrEqual(1);
    expect(partLines.every((l: { custom_id: string; index: number }) => l.custom_id === String(l.index))).toBe(true);
    expect(((await (await fetch(`${base}/get_result/${taskId}`)).json()) as { state: string }).state).toBe('IN_PROGRESS');
    const c = await postJson(`${base}/v1/batches/${taskId}/cancel`, {}, auth);
    expect(c.status).toBe(200);
    expect(c.body.state).toBe('CANCELLING');
    expect((await postJson(`${base}/v1/batches/${taskId}/cancel`, {}, { authorization: 'Bearer wrong' })).status).toBe(401);
    const v = await waitForResult(base, taskId, TOKEN);
    expect(v).toMatchObject({ status: 'FAILED', state: 'CANCELLED', error: expect.stringContaining('cancelled by its owner') });
    expect(v.progress.done).toBeLessThan(200);
    // Once the final files are written the partial parts are removed.
    expect((await listKeys(s3.client, 'bucket', folder)).some((k) => k.includes('-partial/'))).toBe(false);
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
  it('completion_window: the runner stops at the end of the window; the job ends EXPIRED with the finished items kept', async () => {
    // The scripted server answers "ok" items and holds "wait" ones: the window ends with one item done, two in flight.
    const inputs = ['ok-first', 'wait-second', 'wait-third'];
    const r = await postJson(`${base}/v1/completions`, body({ model: 'held', session: 'expiring', list_inputs: inputs, return_output: false, completion_window: 4 }), auth);
    expect(r.status).toBe(202);
    const v = await waitForResult(base, r.body.task_id, TOKEN);
    model.release();
    expect(v).toMatchObject({ status: 'FAILED', state: 'EXPIRED', error: expect.stringContaining('the completion window ended'), progress: { total: 3, done: 1 } });
    expect(Date.parse(v.expires_at) - Date.parse(v.created)).toBeGreaterThanOrEqual(3_000); // creationTimestamp: to the second
    const folder = `${TOKEN}/expiring/`;
    const lines = async (f: string) => (await readObject(s3.client, 'bucket', folder + f)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect((await lines(v.files.output)).map((l: { custom_id: string; output: string }) => [l.custom_id, l.output])).toEqual([['0', 'fine']]);
    expect((await lines(v.files.errors)).map((e: { custom_id: string; error: { code: string } }) => [e.custom_id, e.error.code])).toEqual([['1', 'expired'], ['2', 'expired']]);
  }, 120_000);

  it('a job whose window ends before any runner reports is ended EXPIRED by the reconciler, without a runner', async () => {
    const taskId = 'c'.repeat(32);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, BROKEN_NS);
    await api.create(buildInferenceJob(taskId, { ...body(), storage_provider: 's3', return_output: false } as never,
      { tokenHash: 'x', requestHash: 'y', expiresAt: new Date(Date.now() - 1000).toISOString() }));
    const st = await until('EXPIRED', async () => {
      const x = (await api.get(inferenceJobName(taskId)))?.status;
      return x?.status === 'EXPIRED' ? x : undefined;
    });
    expect(st.error).toBe('the completion window ended before the job started; nothing was generated');
    await expect(kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: runnerJobName(taskId), namespace: BROKEN_NS })).rejects.toMatchObject({ code: 404 });
  }, 60_000);

  it('a cancel right after the submission ends the job CANCELLED once: no item generated, no status after it', async () => {
    const r = await postJson(`${base}/v1/completions`, body({ session: 'cancel-race', list_inputs: ['a', 'b', 'c', 'd'] }), auth);
    const taskId = r.body.task_id as string;
    const c = await postJson(`${base}/v1/batches/${taskId}/cancel`, {}, auth);
    expect(c.status).toBe(200);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, NS);
    const seen: string[] = [];
    const final = await until('CANCELLED', async () => {
      const st = (await api.get(inferenceJobName(taskId)))?.status?.status ?? 'none';
      if (seen.at(-1) !== st) seen.push(st);
      return st === 'CANCELLED' ? st : undefined;
    }, 1200);
    expect(final).toBe('CANCELLED');
    // A runner Job may have been created before the cancel landed: it must end without generating or reporting more.
    const job = await kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: runnerJobName(taskId), namespace: NS }).catch(() => undefined);
    if (job) await until('the runner Job to end', async () => (await kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: runnerJobName(taskId), namespace: NS })).status?.succeeded === 1);
    const after = (await api.get(inferenceJobName(taskId)))!.status!;
    expect(after).toMatchObject({ status: 'CANCELLED', error: 'cancelled by its owner before it started' });
    expect(after.done ?? 0).toBe(0);
    expect(seen.indexOf('CANCELLED')).toBe(seen.length - 1);
    expect(seen.filter((x) => !['none', 'QUEUED', 'CANCELLED'].includes(x))).toEqual([]); // nothing ran in between
    expect((await listKeys(s3.client, 'bucket', `${TOKEN}/cancel-race/`)).filter((k) => !k.includes('.flowpilot-inference/'))).toEqual([]);
  }, 120_000);

  it('an InferenceJob of an earlier version (unkeyed SHA-256 tokenHash) still runs and stays its owner\'s; a hash of another token fails it', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, NS);
    const run = async (taskId: string, tokenHash: string) => {
      const ij = await api.create(buildInferenceJob(taskId, { ...body({ session: `legacy-${taskId.slice(0, 4)}` }), storage_provider: 's3', return_output: false } as never, { tokenHash, requestHash: 'y' }));
      await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: tokenSecretName(taskId), annotations: { 'flowpilot.io/inference-job-uid': ij.metadata.uid! } }, stringData: { token: TOKEN } } });
      return waitForResult(base, taskId, TOKEN);
    };
    const legacy = await run('a'.repeat(32), hashToken(TOKEN));
    expect(legacy).toMatchObject({ status: 'SUCCESS', result_key: expect.stringMatching(new RegExp(`^${TOKEN}/legacy-aaaa/`)) });
    const list = await (await fetch(`${base}/v1/batches?limit=100`, { headers: auth })).json() as { data: { task_id: string }[] };
    expect(list.data.map((j) => j.task_id)).toContain('a'.repeat(32));
    const other = await run('b'.repeat(32), SECRETS.tokenHash('someone-else'));
    expect(other).toMatchObject({ status: 'FAILED', error: expect.stringContaining('does not match the job\'s tokenHash') });
  }, 120_000);

  it('only the operator wrote InferenceJob status: runners report through their ConfigMap', () => {
    expect([...statusWriters]).toEqual(['operator']);
  });

  // Last: its statuses are written by the test itself (admin), which the test above counts.
  it('ended jobs are deleted INFERENCE_RETENTION_HOURS after they ended; a job still kept loses its token Secret', async () => {
    const ns = 'inference-retention';
    const api = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, ns);
    const core = kc.makeApiClient(CoreV1Api);
    const ended = async (taskId: string, hoursAgo: number) => {
      const created = await api.create(buildInferenceJob(taskId, { ...body(), storage_provider: 's3', return_output: false } as never, { tokenHash: 'x', requestHash: 'y' }));
      await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: tokenSecretName(taskId) }, stringData: { token: TOKEN } } });
      await patchInferenceJobStatus(kc, ns, created.metadata.name, { status: 'SUCCESS', finished: new Date(Date.now() - hoursAgo * 3_600_000).toISOString() });
    };
    await ended('d'.repeat(32), 3);
    await ended('e'.repeat(32), 0);
    const r = await startInferenceReconciler({
      kc: server.kubeConfig('operator-token'), namespace: ns, launcherSettings: { runnerImage: 'flowpilot-runner:test', env: {} },
      secrets: SECRETS, retentionHours: 2, resyncSeconds: 1,
    });
    try {
      await until('the old job deleted', async () => (await api.get(inferenceJobName('d'.repeat(32)))) === undefined, 200);
      await until('the kept job\'s token Secret deleted', async () => core.readNamespacedSecret({ name: tokenSecretName('e'.repeat(32)), namespace: ns })
        .then(() => false, (e: { code?: number }) => e.code === 404), 200);
      expect((await api.get(inferenceJobName('e'.repeat(32))))?.status?.status).toBe('SUCCESS');
    } finally {
      await r.stop();
    }
  }, 60_000);
});
