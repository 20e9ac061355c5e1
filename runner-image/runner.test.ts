// The task runner: in-process with injected stores (outputs, logs, failures, masking) and as the real program in a
// child process, compiled as the image runs it (result file, exit codes, SIGTERM → KILLED, the Docker-layout install step).
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAttemptResult, writeAttemptInput } from '../operator/kube/attempt-io.js';
import { LocalStorage } from '../operator/storage/local.js';
import { openDatabase, SqliteKVStore, SqliteLogStore } from '../operator/store/sqlite/index.js';
import { tempDir } from '../operator/store/sqlite/test-fixtures.js';
import { attemptOf, oneTask, type Attempt } from '../test/kube/attempt-fixtures.js';
import { inputAad, reportedAad, SecretBox } from '../operator/secrets/sealed.js';
import { runRunner } from './runner.js';
import { until } from '../test/support/wait.js';

const ROOT = resolve(import.meta.dirname, '..');
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await c(); });

const PW = 'hunter2-input-password';
const TOKEN = 'pod-secret-t0ken';
const KEY = randomBytes(32);
/** What a task Pod gets from Secrets: the flow secrets (envFrom, prefixed) and the encryption key. */
const POD_SECRETS = { FLOWPILOT_SECRET_TOKEN: TOKEN, ENCRYPTION_KEY: KEY.toString('base64') };
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** A script task of a flow with a SECRET input, sealed in the execution as the operator stores it. */
function sealedAttempt(): Attempt {
  const a = attemptOf(`id: sealed
namespace: company.team
inputs:
  - id: pw
    type: SECRET
tasks:
  - id: sh
    type: ai.service.plugin.scripts.shell.Commands
    env:
      PW: "{{ inputs.pw }}"
      TOKEN: "{{ secret('TOKEN') }}"
    commands:
      - echo "pw=$PW token=$TOKEN"
      - echo "::{\\"outputs\\":{\\"echo\\":\\"$PW $TOKEN\\",\\"pwLength\\":\${#PW},\\"pwSha\\":\\"$(printf %s "$PW" | sha256sum | cut -d' ' -f1)\\",\\"env\\":\\"$(env | cut -d= -f1 | sort | tr '\\n' ' ')\\"}}::"
`);
  a.exec.inputs = { pw: new SecretBox(KEY).seal(PW, inputAad(a.exec, 'pw')) };
  return a;
}

async function setup(a: Attempt, secrets?: string[]) {
  const tmp = tempDir('runner-test-');
  const storage = new LocalStorage(join(tmp.dir, 'storage'));
  const logDb = join(tmp.dir, 'logs.db');
  const db = openDatabase(logDb);
  const logs = new SqliteLogStore(db);
  cleanups.push(() => { logs.close(); db.close(); tmp.remove(); });
  const inputUri = await writeAttemptInput(storage, { flow: a.flow, execution: a.exec, ...(secrets ? { secrets } : {}) }, a.run.id, 1);
  const env: NodeJS.ProcessEnv = {
    EXECUTION_ID: a.exec.id, TASK_RUN_ID: a.run.id, ATTEMPT: '1', INPUT_URI: inputUri, WORK_DIR: join(tmp.dir, 'work'),
    STORAGE_DIR: join(tmp.dir, 'storage'), LOG_DB: logDb, PATH: process.env.PATH,
  };
  return { tmp, storage, logs, db, env, inputUri, attempt: a };
}

describe('runRunner (in process)', () => {
  it('runs a Log task: SUCCESS, the line in the log store, result.json written', async () => {
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: "hi from {{ flow.id }}"');
    const s = await setup(a);
    const kv = new SqliteKVStore(s.db);
    const outcome = await runRunner(s.env, { stores: { storage: s.storage, logs: s.logs, kv } });
    expect(outcome.state).toBe('SUCCESS');
    expect(await readAttemptResult(s.storage, s.inputUri)).toEqual(outcome);
    const lines = await s.logs.forExecution(a.exec.id);
    expect(lines.map((l) => l.message)).toContain('hi from kube-test');
    expect(lines[0]?.taskRunId).toBe(a.run.id);
  });

  it('opens sealed texts of STRING and JSON inputs (a known secret the operator sealed) for the task, masks them in logs', async () => {
    const a = attemptOf(`id: sealed-string
namespace: company.team
inputs:
  - id: password
    type: STRING
  - id: settings
    type: JSON
tasks:
  - id: sh
    type: ai.service.plugin.scripts.shell.Commands
    env:
      PW: "{{ inputs.password }}"
      NESTED: "{{ inputs.settings.db.password }}"
    commands:
      - echo "pw=$PW"
      - echo "::{\\"outputs\\":{\\"pwSha\\":\\"$(printf %s "$PW" | sha256sum | cut -d' ' -f1)\\",\\"nestedSha\\":\\"$(printf %s "$NESTED" | sha256sum | cut -d' ' -f1)\\"}}::"
`);
    const box = new SecretBox(KEY);
    a.exec.inputs = { password: box.seal(PW, inputAad(a.exec, 'password')), settings: { db: { password: box.seal(PW, inputAad(a.exec, 'settings')), port: 5432 } } };
    const s = await setup(a);
    const outcome = await runRunner({ ...s.env, ...POD_SECRETS }, { stores: { storage: s.storage, logs: s.logs, kv: new SqliteKVStore(s.db) } });
    expect(outcome.state, outcome.error).toBe('SUCCESS');
    expect(outcome.outputs).toMatchObject({ vars: { pwSha: sha(PW), nestedSha: sha(PW) } });
    const logs = (await s.logs.forExecution(a.exec.id)).map((l) => l.message).join('\n');
    expect(logs).toContain('pw=******');
    expect(logs).not.toContain(PW);
  });

  it('masks what the operator knows secret for the execution (attempt input), reports back what it knows, sealed', async () => {
    const a = attemptOf(`id: known
namespace: company.team
inputs:
  - id: hook
    type: STRING
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "calling {{ inputs.hook }}"
`);
    const box = new SecretBox(KEY);
    a.exec.inputs = { hook: 'https://hooks.example/t0ken-from-input' };
    const s = await setup(a, [box.seal('https://hooks.example/t0ken-from-input', reportedAad(a.exec.id))]);
    const outcome = await runRunner({ ...s.env, ...POD_SECRETS }, { stores: { storage: s.storage, logs: s.logs, kv: new SqliteKVStore(s.db) } });
    expect(outcome.state, outcome.error).toBe('SUCCESS');
    expect((await s.logs.forExecution(a.exec.id)).map((l) => l.message)).toEqual(['calling ******']);
    const result = await readAttemptResult(s.storage, s.inputUri);
    expect(JSON.stringify(result)).not.toContain('t0ken-from-input');
    expect(result?.secrets?.map((v) => box.open(v, reportedAad(a.exec.id)))).toEqual(['https://hooks.example/t0ken-from-input']);
  });

  it('returns a failing script as FAILED (not as a runner error) and masks secrets', async () => {
    const a = oneTask('id: sh\ntype: ai.service.plugin.scripts.shell.Commands\ncommands:\n  - echo "token {{ secret(\'TOKEN\') }}"\n  - exit 3');
    const s = await setup(a);
    const kv = new SqliteKVStore(s.db);
    const outcome = await runRunner({ ...s.env, SECRET_TOKEN: Buffer.from('s3cr3t-value').toString('base64') }, { stores: { storage: s.storage, logs: s.logs, kv } });
    expect(outcome.state).toBe('FAILED');
    expect(outcome.error).toMatch(/3/);
    const text = (await s.logs.forExecution(a.exec.id)).map((l) => l.message).join('\n');
    expect(text).toContain('token ');
    expect(text).not.toContain('s3cr3t-value');
  });

  it('opens a sealed SECRET input for the script, masks it and the pod secrets in logs and in the result file', async () => {
    const s = await setup(sealedAttempt());
    const kv = new SqliteKVStore(s.db);
    const outcome = await runRunner({ ...s.env, ...POD_SECRETS }, { stores: { storage: s.storage, logs: s.logs, kv } });
    expect(outcome.state, outcome.error).toBe('SUCCESS');
    const result = await readAttemptResult(s.storage, s.inputUri);
    expect(result).toEqual(outcome);
    expect(result?.outputs).toMatchObject({ vars: { echo: '****** ******', pwLength: PW.length, pwSha: sha(PW) } });
    const logs = (await s.logs.forExecution(s.attempt.exec.id)).map((l) => l.message).join('\n');
    expect(logs).toContain('pw=****** token=******');
    for (const text of [logs, JSON.stringify(result)]) for (const v of [PW, TOKEN]) expect(text).not.toContain(v);
  });

  it('throws when the runner cannot run (task run not in the input)', async () => {
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: x');
    const s = await setup(a);
    const kv = new SqliteKVStore(s.db);
    await expect(runRunner({ ...s.env, TASK_RUN_ID: 'nope' }, { stores: { storage: s.storage, logs: s.logs, kv } })).rejects.toThrow(/not in execution/);
    await expect(runRunner({ ...s.env, ATTEMPT: 'x' }, { stores: { storage: s.storage, logs: s.logs, kv } })).rejects.toThrow(/ATTEMPT/);
  });
});

function runProgram(args: string[], env: NodeJS.ProcessEnv, onStart?: (pid: number) => void) {
  // The compiled program the image runs (dist/, built by the test setup).
  const child = spawn(process.execPath, [join(ROOT, 'dist/runner-image/runner.js'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  cleanups.push(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  if (onStart) onStart(child.pid!);
  return { child, output: () => out, exit: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
}


// Each test starts the compiled runner (`node dist/runner-image/runner.js`): seconds on a loaded 2-core CI machine, so the limits are wide.
describe('runner program', { timeout: 120_000 }, () => {
  it('writes the result of a shell task with outputs and exits 0', async () => {
    const a = oneTask('id: sh\ntype: ai.service.plugin.scripts.shell.Commands\ncommands:\n  - echo \'::{"outputs":{"answer":42}}::\'');
    const s = await setup(a);
    const p = runProgram([], s.env);
    expect(await p.exit, p.output()).toBe(0);
    const result = await readAttemptResult(s.storage, s.inputUri);
    expect(result?.state).toBe('SUCCESS');
    expect(result?.outputs).toMatchObject({ vars: { answer: 42 } });
  });

  it('the script inherits none of the pod\'s secrets (flow secrets, encryption key, store settings)', async () => {
    const s = await setup(sealedAttempt());
    const p = runProgram([], { ...s.env, ...POD_SECRETS, STORAGE_S3_SECRET_ACCESS_KEY: 'bucket-key', LOG_STORE_URL: 'postgres://u:p@h/db' });
    expect(await p.exit, p.output()).toBe(0);
    const result = await readAttemptResult(s.storage, s.inputUri);
    expect(result?.state, result?.error).toBe('SUCCESS');
    const env = String((result?.outputs as any).vars.env).trim().split(' ');
    expect(env).toEqual(expect.arrayContaining(['PATH', 'PW', 'TOKEN', 'WORKING_DIR']));
    for (const name of ['FLOWPILOT_SECRET_TOKEN', 'ENCRYPTION_KEY', 'STORAGE_S3_SECRET_ACCESS_KEY', 'LOG_STORE_URL', 'LOG_DB', 'STORAGE_DIR', 'INPUT_URI']) {
      expect(env).not.toContain(name);
    }
    expect((result?.outputs as any).vars.pwLength).toBe(PW.length);
  });

  it('exits non-zero when the input is missing', async () => {
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: x');
    const s = await setup(a);
    const p = runProgram([], { ...s.env, INPUT_URI: 'kestra:///nowhere/input.json' });
    expect(await p.exit).not.toBe(0);
    expect(p.output()).toMatch(/runner failed/);
  });

  it('SIGTERM aborts the attempt: KILLED result, exit 0', async () => {
    const a = oneTask('id: sh\ntype: ai.service.plugin.scripts.shell.Commands\ncommands:\n  - echo started\n  - sleep 30');
    const s = await setup(a);
    const p = runProgram([], s.env);
    await until(async () => (await s.logs.forExecution(a.exec.id)).some((l) => l.message.includes('started')), 'the script to start');
    p.child.kill('SIGTERM');
    expect(await p.exit, p.output()).toBe(0);
    expect((await readAttemptResult(s.storage, s.inputUri))?.state).toBe('KILLED');
  });

  it('install (symlink mode) lays out node and the app for the Docker task runner', async () => {
    const tmp = tempDir('runner-install-');
    cleanups.push(() => tmp.remove());
    const p = runProgram(['install', join(tmp.dir, 'fp')], { PATH: process.env.PATH, FLOWPILOT_INSTALL: 'symlink' });
    expect(await p.exit, p.output()).toBe(0);
    expect(readlinkSync(join(tmp.dir, 'fp/node/bin/node'))).toBe(process.execPath);
    expect(existsSync(join(tmp.dir, 'fp/app/dist/runner-image/runner.js'))).toBe(true);
    expect(existsSync(join(tmp.dir, 'fp/app/node_modules/minio'))).toBe(true); // the app with its dependencies, not dist/ alone
  });
});
