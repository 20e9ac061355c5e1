// The runner program (compiled, in a child process, as a task Pod runs it) when it cannot do its own part: the KV list
// answered 503 past RUNNER_START_TIMEOUT_MS, a permanent refusal (403), an unreachable bucket, an attempt input that
// does not hold its task run; and SIGTERM during the wait (KILLED). Each failure: exit code RUNNER_FAILURE_EXIT_CODE, the reason in the termination message
// file, and an infrastructure-failure result when the bucket answers. Real parts: the Kubernetes API test server
// (with an outage), an S3-protocol server (s3rver); the log store URL points at a closed port (never reached).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAttemptResult, RUNNER_FAILURE_EXIT_CODE, writeAttemptInput } from '../operator/kube/attempt-io.js';
import { LocalStorage } from '../operator/storage/local.js';
import { S3Storage } from '../operator/storage/s3.js';
import type { InternalStorage } from '../operator/store/types.js';
import { tempDir } from '../operator/store/sqlite/test-fixtures.js';
import { oneTask } from '../test/kube/attempt-fixtures.js';
import { startKubeTestServer, type KubeTestServer } from '../test/kube/test-server/index.js';
import { freePort, startS3rver, type Service } from '../test/support/services.js';
import { until } from '../test/support/wait.js';

const ROOT = resolve(import.meta.dirname, '..');
const BUCKET = 'runner-failure';
let s3: Service;
let storage: S3Storage;
const cleanups: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
  storage = new S3Storage({ endpoint: s3.url, bucket: BUCKET, accessKey: 'S3RVER', secretKey: 'S3RVER' });
  await storage.ensureBucket();
}, 60_000);
afterAll(async () => { await storage?.close(); await s3?.stop(); });
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c(); });

function runProgram(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/runner-image/runner.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  cleanups.push(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  return { child, output: () => out, exit: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
}

/** A cluster-mode task Pod's environment: the test server (KUBECONFIG), the bucket, a termination message file. */
async function podEnv(server: KubeTestServer, target: InternalStorage, s3Endpoint: string, extra: NodeJS.ProcessEnv = {}) {
  const tmp = tempDir('runner-failure-');
  cleanups.push(() => tmp.remove());
  const kubeconfig = join(tmp.dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
  const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: hi');
  const inputUri = await writeAttemptInput(target, { flow: a.flow, execution: a.exec }, a.run.id, 1);
  const termination = join(tmp.dir, 'termination-log');
  writeFileSync(termination, '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, EXECUTION_ID: a.exec.id, TASK_RUN_ID: a.run.id, ATTEMPT: '1', INPUT_URI: inputUri, WORK_DIR: join(tmp.dir, 'work'),
    STORAGE_S3_ENDPOINT: s3Endpoint, STORAGE_S3_BUCKET: BUCKET, STORAGE_S3_ACCESS_KEY_ID: 'S3RVER', STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
    LOG_STORE_URL: `postgres://u:p@127.0.0.1:${await freePort()}/db`, WATCH_NAMESPACE: 'default', KUBECONFIG: kubeconfig,
    TERMINATION_MESSAGE_PATH: termination, ...extra,
  };
  return { env, inputUri, termination: () => readFileSync(termination, 'utf8') };
}

async function testServer(opts: Parameters<typeof startKubeTestServer>[0] = {}): Promise<KubeTestServer> {
  const server = await startKubeTestServer(opts);
  cleanups.push(() => server.close());
  return server;
}

// Each test starts the compiled runner: seconds on a loaded 2-core machine, so the limits are wide.
describe('runner program failures', { timeout: 120_000 }, () => {
  it('KV list answering 503 past RUNNER_START_TIMEOUT_MS: exit 75, the reason in the termination message and the result', async () => {
    const server = await testServer();
    server.startOutage({ resources: ['kvpairs'] });
    const pod = await podEnv(server, storage, s3.url, { RUNNER_START_TIMEOUT_MS: '1500' });
    const p = runProgram(pod.env);
    expect(await p.exit, p.output()).toBe(RUNNER_FAILURE_EXIT_CODE);
    expect(server.outageRefused).toBeGreaterThan(1); // it retried
    expect(p.output()).toMatch(/listing KV pairs failed \(503: .*\); retrying/);
    const reason = pod.termination();
    expect(reason).toMatch(/^The runner failed: listing KV pairs: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 1500\): 503: /);
    expect(await readAttemptResult(storage, pod.inputUri)).toEqual({ state: 'FAILED', infrastructure: true, error: reason });
  });

  it('SIGTERM while it waits for the KV list: a KILLED result, exit 0', async () => {
    const server = await testServer();
    server.startOutage({ resources: ['kvpairs'] });
    const pod = await podEnv(server, storage, s3.url, { RUNNER_START_TIMEOUT_MS: '600000' });
    const p = runProgram(pod.env);
    await until(() => /listing KV pairs failed \(503/.test(p.output()), () => `the runner to meet the outage (output: ${p.output()})`);
    p.child.kill('SIGTERM');
    expect(await p.exit, p.output()).toBe(0);
    expect(await readAttemptResult(storage, pod.inputUri)).toEqual({ state: 'KILLED', error: 'Task killed (SIGTERM) while listing KV pairs' });
    expect(pod.termination()).toBe('');
  });

  it('a permanent refusal (403 on KV pairs) fails at once, without waiting for the deadline', async () => {
    const server = await testServer({ tokens: { 'test-token': { username: 'task' } }, authorizeRequests: true, authorize: (a) => a.resource !== 'kvpairs' });
    const pod = await podEnv(server, storage, s3.url, { RUNNER_START_TIMEOUT_MS: '600000' });
    const p = runProgram(pod.env);
    expect(await p.exit, p.output()).toBe(RUNNER_FAILURE_EXIT_CODE);
    expect(pod.termination()).toMatch(/^The runner failed: listing KV pairs failed: 403: .*forbidden/);
    expect((await readAttemptResult(storage, pod.inputUri))?.infrastructure).toBe(true);
  });

  it('an unreachable bucket: the input read is retried until the deadline; the termination message alone carries the reason', async () => {
    const server = await testServer();
    const pod = await podEnv(server, storage, `http://127.0.0.1:${await freePort()}`, { RUNNER_START_TIMEOUT_MS: '1500' });
    const p = runProgram(pod.env);
    expect(await p.exit, p.output()).toBe(RUNNER_FAILURE_EXIT_CODE);
    expect(p.output()).toMatch(/reading the attempt input failed \(.*\); retrying/);
    expect(pod.termination()).toMatch(/^The runner failed: reading the attempt input: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 1500\)/);
    expect(p.output()).toMatch(/the failure could not be written as the result/);
    expect(await readAttemptResult(storage, pod.inputUri)).toBeUndefined();
  });

  it('an input without its task run (local stores): exit 75, an infrastructure-failure result naming it', async () => {
    const tmp = tempDir('runner-failure-local-');
    cleanups.push(() => tmp.remove());
    const local = new LocalStorage(join(tmp.dir, 'storage'));
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: hi');
    const inputUri = await writeAttemptInput(local, { flow: a.flow, execution: a.exec }, a.run.id, 1);
    const termination = join(tmp.dir, 'termination-log');
    const p = runProgram({
      PATH: process.env.PATH, EXECUTION_ID: a.exec.id, TASK_RUN_ID: 'nope', ATTEMPT: '1', INPUT_URI: inputUri, WORK_DIR: join(tmp.dir, 'work'),
      STORAGE_DIR: join(tmp.dir, 'storage'), TERMINATION_MESSAGE_PATH: termination,
    });
    expect(await p.exit, p.output()).toBe(RUNNER_FAILURE_EXIT_CODE);
    const reason = `The runner failed: Task run nope is not in execution ${a.exec.id}`;
    expect(readFileSync(termination, 'utf8')).toBe(reason);
    expect(await readAttemptResult(local, inputUri)).toEqual({ state: 'FAILED', infrastructure: true, error: reason });
  });

  it('a malformed RUNNER_START_TIMEOUT_MS is the runner\'s failure, named', async () => {
    const server = await testServer();
    const pod = await podEnv(server, storage, s3.url, { RUNNER_START_TIMEOUT_MS: 'soon' });
    const p = runProgram(pod.env);
    expect(await p.exit, p.output()).toBe(RUNNER_FAILURE_EXIT_CODE);
    expect(pod.termination()).toMatch(/RUNNER_START_TIMEOUT_MS must be an integer >= 100/);
  });
});
