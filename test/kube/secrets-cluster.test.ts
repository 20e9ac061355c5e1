// Secrets in cluster mode, end to end (operator, API, task Pods through the simulated kubelet): a flow secret from the
// flow-secrets Secret and a SECRET input appear in clear nowhere: not in the Execution resource (spec and status), the
// Jobs, the logs or the API; the input reaches the script in clear, which inherits none of the Pod's secrets.
import { createHash } from 'node:crypto';
import { BatchV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GROUP, KINDS, VERSION } from '../../operator/kube/names.js';
import { until } from '../support/wait.js';
import { CLUSTER_NS, ENCRYPTION_SECRET, startCluster, type TestCluster } from './cluster.js';
import { apiCall, closeCluster } from './cluster-test.js';

const SECRET = 'cluster-s3cr3t-value';
const PW = 'hunter2-cluster-input';
const b64 = (s: string) => Buffer.from(s).toString('base64');
let c: TestCluster;

beforeAll(async () => { c = await startCluster({ secrets: { MYSECRET: SECRET } }); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

const call = (path: string, init?: RequestInit): Promise<any> => apiCall(c, path, init);

function expectClean(what: string, text: string): void {
  for (const v of [SECRET, b64(SECRET), PW, b64(PW)]) expect(text, `${what} leaks ${v}`).not.toContain(v);
}

it('masks secrets and SECRET inputs everywhere; Jobs carry no secret value', { timeout: 180_000 }, async () => {
  await call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: `id: sealed
namespace: company.sec
inputs:
  - id: pw
    type: SECRET
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "secret={{ secret('MYSECRET') }} pw={{ inputs.pw }}"
  - id: sh
    type: ai.service.plugin.scripts.shell.Commands
    env:
      PW: "{{ inputs.pw }}"
      TOKEN: "{{ secret('MYSECRET') }}"
    commands:
      - echo "token=$TOKEN pw=$PW"
      - echo "::{\\"outputs\\":{\\"echo\\":\\"$PW\\",\\"pwLength\\":\${#PW},\\"pwSha\\":\\"$(printf %s "$PW" | sha256sum | cut -d' ' -f1)\\",\\"env\\":\\"$(env | cut -d= -f1 | sort | tr '\\n' ' ')\\"}}::"
  - id: ret
    type: ai.service.plugin.core.debug.Return
    format: "{{ secret('MYSECRET') }} {{ inputs.pw }}"
` });
  const created = await call('/executions/company.sec/sealed', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pw: PW }) });
  expect(created.inputs.pw).toMatch(/^fpenc1:/);
  const exec = await until(async () => {
    const e = await call(`/executions/${created.id}`);
    return ['SUCCESS', 'FAILED', 'KILLED'].includes(e.state.current) ? e : undefined;
  }, 'the execution to end', 120_000);
  expect(exec.state.current, JSON.stringify(exec.taskRunList.map((r: any) => [r.taskId, r.state.current, r.error]))).toBe('SUCCESS');
  expectClean('the execution JSON', JSON.stringify(exec));
  const sh = exec.taskRunList.find((r: any) => r.taskId === 'sh');
  expect(sh.outputs.vars).toMatchObject({ echo: '******', pwLength: PW.length, pwSha: createHash('sha256').update(PW).digest('hex') });
  const env = String(sh.outputs.vars.env).trim().split(' ');
  for (const name of ['FLOWPILOT_SECRET_MYSECRET', 'ENCRYPTION_KEY', 'STORAGE_S3_SECRET_ACCESS_KEY', 'LOG_STORE_URL', 'KUBECONFIG']) expect(env).not.toContain(name);
  expect(exec.taskRunList.find((r: any) => r.taskId === 'ret').outputs.value).toBe('****** ******');

  const logs = (await c.logs.forExecution(created.id)).map((l) => l.message).join('\n');
  expect(logs).toContain('secret=****** pw=******');
  expect(logs).toContain('token=****** pw=******');
  expectClean('the logs', logs);

  const resources = await c.kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: CLUSTER_NS, plural: KINDS.Execution.plural });
  expectClean('the Execution resources', JSON.stringify(resources));

  const jobs = (await c.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS })).items;
  expect(jobs.length).toBeGreaterThan(0);
  for (const job of jobs) {
    expectClean(`Job ${job.metadata?.name}`, JSON.stringify(job));
    const main = job.spec!.template.spec!.containers[0]!;
    expect(main.env?.find((e) => e.name === 'ENCRYPTION_KEY')).toEqual({ name: 'ENCRYPTION_KEY', valueFrom: { secretKeyRef: { ...ENCRYPTION_SECRET } } });
    expect(main.envFrom?.some((s) => s.secretRef?.name === 'flowpilot-secrets' && s.prefix === 'FLOWPILOT_SECRET_')).toBe(true);
  }
});
