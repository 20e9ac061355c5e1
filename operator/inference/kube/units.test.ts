// Pure parts of cluster-mode inference: the InferenceJob built from a request (no token, Secret reference, task id
// label), the request read back, the job record of each status, the fold of runner reports, idempotent task ids, and
// the runner Job's shape.
import { describe, expect, it } from 'vitest';
import { inferenceJobName } from '../../kube/names.js';
import type { BatchRequest } from '../request.js';
import { buildRunnerJob } from './job.js';
import { JobSecrets } from '../auth.js';
import { SecretBox } from '../../secrets/sealed.js';
import { foldReport } from './report.js';
import { buildInferenceJob, recordOf, requestOf, runnerJobName, TASK_ID_LABEL, tokenSecretName } from './resource.js';

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

  it('idempotent task ids depend on token, key and the service key, and look like random ones', () => {
    const secrets = new JobSecrets(new SecretBox(Buffer.alloc(32, 5)));
    const a = secrets.idempotentTaskId('tok', 'key');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(secrets.idempotentTaskId('tok', 'key')).toBe(a);
    expect(new JobSecrets(new SecretBox(Buffer.alloc(32, 5))).idempotentTaskId('tok', 'key')).toBe(a); // another replica, same key
    expect(secrets.idempotentTaskId('tok2', 'key')).not.toBe(a);
    expect(secrets.idempotentTaskId('tok', 'key2')).not.toBe(a);
    expect(new JobSecrets(new SecretBox(Buffer.alloc(32, 6))).idempotentTaskId('tok', 'key')).not.toBe(a);
  });

  it('records: no status is QUEUED; states, counts, tokens, result file and error come from the status; old resources still read', () => {
    const r = buildInferenceJob(TASK, req, { tokenHash: 'h', requestHash: 'rh', expiresAt: '2030-01-01T00:00:00.000Z' });
    r.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    expect(recordOf(r)).toMatchObject({ id: TASK, status: 'QUEUED', total: null, done: 0, result_file: null, expires_at: '2030-01-01T00:00:00.000Z' });
    r.status = { status: 'IN_PROGRESS', total: 2, done: 1, failed: 0, resultStem: 'result-x' };
    expect(recordOf(r)).toMatchObject({ status: 'IN_PROGRESS', total: 2, done: 1, result_stem: 'result-x' });
    r.spec.cancelRequested = true;
    expect(recordOf(r).status).toBe('CANCELLING');
    r.status = { status: 'SUCCESS', total: 2, done: 1, failed: 1, promptTokens: 5, completionTokens: 7, backend: 'b', resultStem: 'result-x', resultFile: 'result-x.json' };
    expect(recordOf(r)).toMatchObject({ status: 'SUCCESS', prompt_tokens: 5, completion_tokens: 7, backend: 'b', result_file: 'result-x.json' });
    // Written by an earlier version: RUNNING, and the result file's full key (which begins with the token).
    const old = buildInferenceJob(TASK, req, { tokenHash: 'h', requestHash: 'rh' });
    old.status = { status: 'RUNNING' };
    expect(recordOf(old)).toMatchObject({ status: 'IN_PROGRESS', expires_at: '9999-12-31T00:00:00.000Z' });
    old.status = { status: 'SUCCESS', resultPaths: ['tok/s1/result-x.json'] };
    expect(recordOf(old)).toMatchObject({ result_file: 'result-x.json', result_stem: 'result-x' });
  });

  it('folding a runner report: fields that changed only; a final status never changes; unknown states are ignored', () => {
    expect(foldReport(undefined, { state: 'VALIDATING', started: 't0' })).toEqual({ status: 'VALIDATING', started: 't0' });
    expect(foldReport({ status: 'IN_PROGRESS', done: 3, started: 't0' }, { state: 'IN_PROGRESS', done: 3, started: 't1' })).toBeUndefined();
    expect(foldReport({ status: 'IN_PROGRESS', done: 3 }, { state: 'IN_PROGRESS', done: 5, total: 9 })).toEqual({ done: 5, total: 9 });
    const end = foldReport({ status: 'IN_PROGRESS' }, { state: 'CANCELLED', resultStem: 's', error: 'cancelled', finished: 't2' });
    expect(end).toEqual({ status: 'CANCELLED', resultStem: 's', resultFile: 's.json', error: 'cancelled', finished: 't2' });
    for (const final of ['SUCCESS', 'FAILED', 'CANCELLED', 'EXPIRED'] as const) {
      expect(foldReport({ status: final }, { state: 'IN_PROGRESS', done: 9 })).toBeUndefined();
    }
    expect(foldReport({ status: 'QUEUED' }, { state: 'RUNNING' as never })).toBeUndefined();
    expect(foldReport({ status: 'QUEUED' }, { done: 2 })).toBeUndefined();
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
