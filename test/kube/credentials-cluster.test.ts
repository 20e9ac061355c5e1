// No credential is ever a literal in a Job or Pod the operator creates. The entry points (operator/kube/main.ts,
// api/kube-main.ts) run with the environment the Helm chart gives them: every credential (bucket keys, a log store URL
// with a password, the encryption key, the inference bucket keys and a model API key) resolved from Secrets, and
// RUNNER_ENV_FROM_SECRETS naming those Secrets. A flow writes a file to the bucket and logs to PostgreSQL from its task
// Pod, a batch inference job writes its results from its runner Pod; then every Job and Pod stored in the Kubernetes
// API test server is searched for the literal credential strings (none may appear; references to the Secrets must).
// RBAC is the chart's, with the OwnerReferencesPermissionEnforcement admission plugin on.
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as apiMain } from '../../api/kube-main.js';
import { main as operatorMain } from '../../operator/kube/main.js';
import { MODELS_DIR, postJson, S3_KEY, startS3, waitForResult, type S3Fixture } from '../inference/helpers.js';
import { startPostgres, type Service } from '../support/services.js';
import { until } from '../support/wait.js';
import { chartAuthorizer, COMPONENT_ROLES } from './chart-rbac.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'flowpilot';
const TOKEN = `inference-token-${randomBytes(6).toString('hex')}`;
const PG_PASSWORD = `pg-pa55-${randomBytes(6).toString('hex')}`;
const MODEL_KEY = `sk-model-${randomBytes(8).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
let server: KubeTestServer;
let kubelet: SimulatedKubelet;
let pg: Service;
let s3: S3Fixture;
let op: Awaited<ReturnType<typeof operatorMain>>;
let api: Awaited<ReturnType<typeof apiMain>>;
let tmp: string;
const denied: string[] = [];

/** A Secret of the release, as an installer creates it (`kubectl create secret generic ...`). */
const secrets: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  const tokens = Object.fromEntries(['admin', ...Object.keys(COMPONENT_ROLES)].map((u) => [`${u}-token`, { username: u }]));
  server = await startKubeTestServer({ tokens, authorize: chartAuthorizer(denied), authorizeRequests: true, ownerReferencesPermissionEnforcement: true });
  const admin = server.kubeConfig('admin-token');
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  [pg, s3] = await Promise.all([startPostgres(), startS3(['bucket'])]);
  const logStoreUrl = pg.url.replace('postgres://postgres@', `postgres://postgres:${PG_PASSWORD}@`); // trust auth: any password works
  Object.assign(secrets, {
    'flowpilot-s3': { AWS_ACCESS_KEY_ID: S3_KEY, AWS_SECRET_ACCESS_KEY: S3_KEY },
    'flowpilot-logs': { url: logStoreUrl },
    'flowpilot-encryption-key': { key: ENCRYPTION_KEY },
    'flowpilot-inference': { S3_ACCESS_KEY_ID: S3_KEY, S3_SECRET_ACCESS_KEY: S3_KEY, REMOTE_API_KEY: MODEL_KEY },
  });
  for (const [name, stringData] of Object.entries(secrets)) await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name }, stringData } });
  tmp = mkdtempSync(join(tmpdir(), 'creds-'));
  // The ServiceAccount tokens a node mounts into task and inference runner Pods (RUNNER_*_SERVICE_ACCOUNT below).
  writeFileSync(join(tmp, 'task'), server.kubeConfig('task-token').exportConfig());
  writeFileSync(join(tmp, 'runner'), server.kubeConfig('inference-runner-token').exportConfig());
  kubelet = await startSimulatedKubelet({
    kc: admin, namespace: NS, pathMap: { '/app': ROOT }, serviceAccounts: { 'flowpilot-task': join(tmp, 'task'), 'flowpilot-inference-runner': join(tmp, 'runner') },
  });
  const ref = (name: string, key: string) => ({ name, key });
  // What the chart's Deployments see: the ConfigMap's settings, and each credential resolved from its Secret.
  const env = {
    FLOWPILOT_MODE: 'cluster', WATCH_NAMESPACE: NS, POD_NAME: 'operator-0', METRICS_PORT: '0', PORT: '0', HOST: '127.0.0.1', API_AUTH: 'false',
    LEADER_ELECTION_LEASE_NAME: 'flowpilot-operator', RUNNER_IMAGE: 'flowpilot-runner:test', PATH: process.env.PATH,
    RUNNER_SERVICE_ACCOUNT: 'flowpilot-task', INFERENCE_RUNNER_SERVICE_ACCOUNT: 'flowpilot-inference-runner',
    STORAGE_S3_ENDPOINT: s3.endpoint, STORAGE_S3_BUCKET: 'flowpilot', STORAGE_S3_ACCESS_KEY_ID: S3_KEY, STORAGE_S3_SECRET_ACCESS_KEY: S3_KEY,
    LOG_STORE_URL: logStoreUrl, ENCRYPTION_KEY,
    S3_ENDPOINT: s3.endpoint, S3_ACCESS_KEY_ID: S3_KEY, S3_SECRET_ACCESS_KEY: S3_KEY, INFERENCE_MODELS_DIR: MODELS_DIR, INFERENCE_THREADS: '1',
    INFERENCE_MODEL_REMOTE: 'openai:http://127.0.0.1:9#m', INFERENCE_MODEL_REMOTE_API_KEY: MODEL_KEY,
    ACCESS_TOKENS: TOKEN,
    RUNNER_ENV_FROM_SECRETS: JSON.stringify({
      ENCRYPTION_KEY: ref('flowpilot-encryption-key', 'key'),
      STORAGE_S3_ACCESS_KEY_ID: ref('flowpilot-s3', 'AWS_ACCESS_KEY_ID'), STORAGE_S3_SECRET_ACCESS_KEY: ref('flowpilot-s3', 'AWS_SECRET_ACCESS_KEY'),
      LOG_STORE_URL: ref('flowpilot-logs', 'url'),
      // operator.extraEnv entries taken from a Secret (the chart's helper copies them here).
      S3_ACCESS_KEY_ID: ref('flowpilot-inference', 'S3_ACCESS_KEY_ID'), S3_SECRET_ACCESS_KEY: ref('flowpilot-inference', 'S3_SECRET_ACCESS_KEY'),
      INFERENCE_MODEL_REMOTE_API_KEY: ref('flowpilot-inference', 'REMOTE_API_KEY'),
    }),
  };
  op = await operatorMain(env, server.kubeConfig('operator-token'));
  api = await apiMain(env, server.kubeConfig('api-token'));
}, 120_000);

afterAll(async () => {
  await api?.close();
  await op?.close();
  await kubelet?.stop();
  await server?.close();
  await pg?.stop();
  await s3?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const url = (path: string) => `http://127.0.0.1:${api.port}${path}`;
const FLOW = `id: creds
namespace: company.creds
tasks:
  - id: write
    type: ai.service.plugin.scripts.shell.Commands
    outputFiles: [out.txt]
    commands:
      - echo "stored by the task" > out.txt
      - echo "a log line from the task Pod"
  - id: read
    type: ai.service.plugin.core.debug.Return
    format: "{{ read(outputs.write.outputFiles['out.txt']) | trim }}"
`;

describe('credentials of the Pods the operator creates', () => {
  it('a task reaches the bucket and the log store, an inference job its bucket; no Job or Pod holds a credential literal', async () => {
    const saved = await fetch(url('/api/v1/flows'), { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: FLOW });
    expect(saved.status, await saved.clone().text()).toBe(200);
    const { id } = await (await fetch(url('/api/v1/executions/company.creds/creds'), { method: 'POST' })).json() as { id: string };
    const done = await until(async () => {
      const e = await (await fetch(url(`/api/v1/executions/${id}`))).json() as { state: { current: string }; taskRunList: { taskId: string; error?: string; outputs?: Record<string, unknown> }[] };
      return ['SUCCESS', 'FAILED', 'KILLED'].includes(e.state.current) ? e : undefined;
    }, () => `the execution to end (denied: ${denied.join('; ')})`, 120_000);
    expect(done.state.current, JSON.stringify(done.taskRunList.map((r) => r.error))).toBe('SUCCESS');
    expect(done.taskRunList.find((r) => r.taskId === 'read')?.outputs?.value).toBe('stored by the task'); // the bucket, from the task Pod
    const logs = await until(async () => {
      const l = await (await fetch(url(`/api/v1/logs/${id}`))).json() as { message: string }[];
      return l.some((x) => x.message.includes('a log line from the task Pod')) ? l : undefined;
    }, 'the task Pod\'s log line in the log store');
    expect(logs.length).toBeGreaterThan(0);

    const submitted = await postJson(url('/v1/completions'), {
      model: 'llama2_7b', question: 'Summarise:', list_inputs: ['alpha beta'], bucket_name: 'bucket', session: 'creds', max_tokens: 4,
    }, { authorization: `Bearer ${TOKEN}` });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const view = await waitForResult(url(''), submitted.body.task_id, TOKEN);
    expect(view.status, JSON.stringify(view)).toBe('SUCCESS'); // the runner Pod reached the caller's bucket

    const batch = server.kubeConfig('admin-token').makeApiClient(BatchV1Api);
    const core = server.kubeConfig('admin-token').makeApiClient(CoreV1Api);
    const jobs = (await batch.listNamespacedJob({ namespace: NS })).items;
    const pods = (await core.listNamespacedPod({ namespace: NS })).items;
    expect(jobs.map((j) => j.metadata?.labels?.['app.kubernetes.io/managed-by']).sort()).toEqual(expect.arrayContaining(['flowpilot-inference', 'flowpilot-operator']));
    expect(pods.length).toBeGreaterThanOrEqual(2);
    const stored = JSON.stringify([...jobs, ...pods]);
    const literals = { TOKEN, PG_PASSWORD, MODEL_KEY, ENCRYPTION_KEY, S3_KEY, logStoreUrl: secrets['flowpilot-logs']!.url! };
    for (const [what, value] of Object.entries(literals)) expect(stored.includes(value), `${what} in a Job or Pod`).toBe(false);
    // The scan is not vacuous: the Pods got those values by reference.
    for (const name of ['STORAGE_S3_SECRET_ACCESS_KEY', 'LOG_STORE_URL', 'ENCRYPTION_KEY', 'S3_SECRET_ACCESS_KEY', 'INFERENCE_MODEL_REMOTE_API_KEY', 'INFERENCE_ACCESS_TOKEN']) {
      expect(stored, name).toMatch(new RegExp(`"name":"${name}","valueFrom":\\{"secretKeyRef"`));
    }
    expect([...new Set(denied)]).toEqual([]);
  }, 300_000);
});
