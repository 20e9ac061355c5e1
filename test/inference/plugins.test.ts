// The S3 tasks and BatchCompletion task run with a real RunContext (operator/plugins/testing.ts) against a real
// S3-protocol server (s3rver) and the real inference service; role assumption goes through an STS test double.
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeTestContext, type TestContext } from '../../operator/plugins/testing.js';
import {
  batchCompletionPlugin, inferenceDefinitions, inferencePlugins, s3DeletePlugin, s3DownloadPlugin, s3ListPlugin, s3UploadPlugin,
} from '../../operator/plugins/inference/index.js';
import { listKeys, postJson, readObject, S3_KEY, s3Env, startS3, startService, waitForResult, type S3Fixture, type ServiceFixture } from './helpers.js';
import { startStsTestDouble, type StsTestDouble } from './sts-double.js';
import { taskTypeSchemas } from '../../operator/model/schema-tasks.js';


// Model-backed tests run on a shared 2-core machine: allow for CPU contention.
vi.setConfig({ testTimeout: 120_000 });
const TOKEN = 'plugin-token-7';
let s3: S3Fixture;
let sts: StsTestDouble;
let svc: ServiceFixture;
let t: TestContext | undefined;

beforeAll(async () => {
  s3 = await startS3(['data']);
  sts = await startStsTestDouble();
  svc = await startService(() => ({ ...s3Env(s3, [TOKEN]), STS_ENDPOINT: sts.endpoint }));
});
afterEach(async () => { await t?.cleanup(); t = undefined; });
afterAll(async () => { await svc?.close(); await sts?.close(); await s3?.close(); });

const conn = (): Record<string, unknown> => ({ endpointOverride: s3.endpoint, accessKeyId: S3_KEY, secretKeyId: S3_KEY, region: 'us-east-1', bucket: 'data' });

it('declares each type once: the flow schema holds the definition\'s schema', () => {
  for (const d of inferenceDefinitions) expect(taskTypeSchemas()[d.type]?.properties).toEqual(d.schema.properties);
  expect(inferencePlugins.map((p) => p.type)).toContain('ai.service.plugin.aws.s3.Upload');
});

describe('S3 tasks', () => {
  it.each([
    ['a host file', () => '/etc/hostname'],
    ['a path leaving the working directory', () => '../../outside.txt'],
    ['a symbolic link leading out of it', (dir: string) => { symlinkSync('/etc/hostname', join(dir, 'link.txt')); return 'link.txt'; }],
  ])('refuses to upload %s and uploads nothing', async (_what, from) => {
    t = makeTestContext({ task: { id: 'up', type: s3UploadPlugin.type, ...conn(), key: 'leak/x.txt' } });
    t.ctx.task = { ...t.ctx.task, from: from(t.ctx.workingDir) };
    const r = await s3UploadPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/'from' (must be a file of the task's working directory|file not found)/);
    expect(await listKeys(s3.client, 'data', 'leak/')).toEqual([]);
  });

  it('uploads a working-directory file, lists, downloads into internal storage and deletes', async () => {
    t = makeTestContext({ task: { id: 'up', type: s3UploadPlugin.type, ...conn(), key: 'docs/{{ execution.id }}.txt', from: 'a.txt' } });
    writeFileSync(join(t.ctx.workingDir, 'a.txt'), 'hello s3');
    const up = await s3UploadPlugin.run(t.ctx);
    expect(up).toMatchObject({ state: 'SUCCESS', outputs: { key: 'docs/exec1.txt', uri: 's3://data/docs/exec1.txt' } });
    await t.cleanup();

    t = makeTestContext({ task: { id: 'ls', type: s3ListPlugin.type, ...conn(), prefix: 'docs/' } });
    const ls = await s3ListPlugin.run(t.ctx);
    expect(ls.outputs?.objects).toEqual([expect.objectContaining({ key: 'docs/exec1.txt', size: 8 })]);
    await t.cleanup();

    t = makeTestContext({ task: { id: 'dl', type: s3DownloadPlugin.type, ...conn(), key: 'docs/exec1.txt' } });
    const dl = await s3DownloadPlugin.run(t.ctx);
    expect(dl.state).toBe('SUCCESS');
    expect((await t.ctx.storage.get(dl.outputs!.uri as string)).toString()).toBe('hello s3');
    expect(dl.outputs).toMatchObject({ bucket: 'data', key: 'docs/exec1.txt', contentLength: 8 });
    await t.cleanup();

    t = makeTestContext({ task: { id: 'rm', type: s3DeletePlugin.type, ...conn(), key: 'docs/exec1.txt' } });
    expect((await s3DeletePlugin.run(t.ctx)).outputs).toMatchObject({ deleted: true });
    expect(await listKeys(s3.client, 'data', 'docs/')).toEqual([]);
  });

  it('fails a download of a missing key', async () => {
    t = makeTestContext({ task: { id: 'dl', type: s3DownloadPlugin.type, ...conn(), key: 'nope.txt' } });
    const r = await s3DownloadPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
  });

  it('assumes stsRoleArn through the configured STS endpoint (an STS test double: no real STS runs here)', async () => {
    const roleArn = 'arn:aws:iam::123456789012:role/uploader';
    t = makeTestContext({ task: { id: 'up', type: s3UploadPlugin.type, ...conn(), stsRoleArn: roleArn, stsEndpointOverride: sts.endpoint, key: 'sts.txt', content: 'x' } });
    expect((await s3UploadPlugin.run(t.ctx)).state).toBe('SUCCESS');
    expect(sts.calls.map((c) => c.roleArn)).toContain(roleArn);
  });
});

describe('BatchCompletion', () => {
  it('submits, waits with progress in the log, and outputs the result uri and counts', async () => {
    t = makeTestContext({ task: {
      id: 'llm', type: batchCompletionPlugin.type, url: svc.url, token: TOKEN, model: 'llama2_7b', question: 'Tag it',
      inputs: ['alpha', 'beta', 'gamma'], bucket: 'data', session: 'flow', maxTokens: 8, pollInterval: 'PT0.1S', returnOutput: true,
    } });
    const r = await batchCompletionPlugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs).toMatchObject({ status: 'SUCCESS', total: 3, done: 3, failed: 0, backend: 'demo-random-weights' });
    expect(r.outputs!.uri).toBe(`s3://data/${r.outputs!.resultKey as string}`);
    expect((r.outputs!.outputs as unknown[]).length).toBe(3);
    expect(t.messages('INFO').some((m) => /SUCCESS, 3 done, 0 failed of 3/.test(m))).toBe(true);
    const doc = JSON.parse(await readObject(s3.client, 'data', r.outputs!.resultKey as string));
    expect(doc.results).toHaveLength(3);
  });

  it('fails the task when the job fails, with the reason', async () => {
    t = makeTestContext({ task: {
      id: 'llm', type: batchCompletionPlugin.type, url: svc.url, token: TOKEN, model: 'llama2_7b',
      inputJsonFile: 'missing.json', bucket: 'data', session: 'flow', pollInterval: 'PT0.1S',
    } });
    const r = await batchCompletionPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('missing.json');
  });

  it('fails the task on a refused submission', async () => {
    t = makeTestContext({ task: { id: 'llm', type: batchCompletionPlugin.type, url: svc.url, token: 'wrong', model: 'llama2_7b', inputs: ['a'], bucket: 'data', session: 'flow' } });
    const r = await batchCompletionPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('HTTP 401');
  });
});

it('exchanges a request role_arn for temporary credentials with STS (an STS test double: no real STS runs here)', async () => {
  const roleArn = 'arn:aws:iam::123456789012:role/inference-reader';
  const r = await postJson(`${svc.url}/v1/completions`, {
    model: 'llama2_7b', list_inputs: ['x'], bucket_name: 'data', session: 'role', role_arn: roleArn, region: 'us-east-1', max_tokens: 4,
  }, { authorization: `Bearer ${TOKEN}` });
  const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
  expect(res.status).toBe('SUCCESS');
  expect(sts.calls.some((c) => c.roleArn === roleArn && c.sessionName?.startsWith('inference-'))).toBe(true);
});
