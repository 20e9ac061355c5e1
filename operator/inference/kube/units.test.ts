// Pure parts of cluster-mode inference: the InferenceJob built from a request (no token, Secret reference, task id
// label), the request read back, the get_result view of each status, idempotent task ids, and the runner Job's shape.
import { describe, expect, it } from 'vitest';
import { inferenceJobName } from '../../kube/names.js';
import type { BatchRequest } from '../request.js';
import { buildRunnerJob } from './job.js';
import { buildInferenceJob, idempotentTaskId, requestOf, runnerJobName, TASK_ID_LABEL, tokenSecretName, viewOf } from './resource.js';

const TASK = '0123456789abcdef0123456789abcdef';
const req: BatchRequest = {
  model: 'llama2_7b', question: 'Q', list_inputs: ['a', { text: 'b' }], storage_provider: 's3', bucket_name: 'bucket',
  session: 's1', max_tokens: 16, return_output: false, structured_output: { type: 'object' }, seed: 3,
};

describe('InferenceJob resources', () => {
  it('holds the request, the token hash and a Secret reference, never undefined fields', () => {
    const r = buildInferenceJob(TASK, { ...req, region: undefined }, { tokenHash: 'h', requestHash: 'rh', idempotencyKey: 'k' });
    expect(r.metadata).toMatchObject({ name: inferenceJobName(TASK), labels: { [TASK_ID_LABEL]: TASK } });
    expect(r.spec).toMatchObject({ tokenHash: 'h', requestHash: 'rh', idempotencyKey: 'k', tokenSecretRef: { name: tokenSecretName(TASK), key: 'token' } });
    expect('region' in r.spec).toBe(false);
    expect(requestOf(r.spec)).toEqual(req);
  });

  it('idempotent task ids depend on token and key, and look like random ones', () => {
    const a = idempotentTaskId('tok', 'key');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(idempotentTaskId('tok', 'key')).toBe(a);
    expect(idempotentTaskId('tok2', 'key')).not.toBe(a);
    expect(idempotentTaskId('tok', 'key2')).not.toBe(a);
  });

  it('views: no status is QUEUED; a final status shows counts, tokens, result file and error', () => {
    const r = buildInferenceJob(TASK, req, { tokenHash: 'h', requestHash: 'rh' });
    r.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    expect(viewOf(r)).toMatchObject({ task_id: TASK, status: 'QUEUED', progress: { total: null, done: 0, failed: 0 }, result_key: null, result_file: null });
    r.status = { status: 'RUNNING', total: 2, done: 1, failed: 0, resultPaths: ['tok/s1/result-x.json'] };
    expect(viewOf(r)).toMatchObject({ status: 'RUNNING', progress: { total: 2, done: 1 }, result_key: null });
    r.status = { status: 'SUCCESS', total: 2, done: 1, failed: 1, promptTokens: 5, completionTokens: 7, backend: 'b', resultPaths: ['tok/s1/result-x.json'] };
    expect(viewOf(r)).toMatchObject({ status: 'SUCCESS', tokens: { prompt: 5, completion: 7, total: 12 }, backend: 'b', result_key: 'tok/s1/result-x.json', result_file: 'result-x.json' });
    r.status = { status: 'FAILED', error: 'bucket gone' };
    expect(viewOf(r)).toMatchObject({ status: 'FAILED', error: 'bucket gone' });
  });

  it('the runner Job: owned by the InferenceJob, token from the Secret, few retries, no token in the spec', () => {
    const r = buildInferenceJob(TASK, req, { tokenHash: 'h', requestHash: 'rh' });
    r.metadata.uid = 'uid-1';
    const job = buildRunnerJob(r, 'ns', { runnerImage: 'img:1', env: { S3_ENDPOINT: 'http://s3' }, runnerServiceAccountName: 'runner-sa' });
    expect(job.metadata).toMatchObject({ name: runnerJobName(TASK), namespace: 'ns', ownerReferences: [{ kind: 'InferenceJob', uid: 'uid-1', controller: true }] });
    expect(job.spec).toMatchObject({ backoffLimit: 2, template: { spec: { restartPolicy: 'Never', serviceAccountName: 'runner-sa' } } });
    const c = job.spec!.template.spec!.containers[0]!;
    expect(c.command).toEqual(['node', '/app/dist/operator/inference/kube/runner.js']);
    expect(c.env).toEqual(expect.arrayContaining([
      { name: 'INFERENCE_JOB_NAME', value: r.metadata.name },
      { name: 'INFERENCE_ACCESS_TOKEN', valueFrom: { secretKeyRef: { name: tokenSecretName(TASK), key: 'token' } } },
      { name: 'S3_ENDPOINT', value: 'http://s3' },
    ]));
  });
});
