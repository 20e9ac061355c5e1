// Tables for the pure Job builder: names/labels, env, deadline from the task timeout, the Docker runner layout.
import { describe, expect, it } from 'vitest';
import type { Execution, Task, TaskRun } from '../core/types.js';
import { loadLauncherSettings } from './config.js';
import { buildJob, deadlineSeconds, DEFAULT_JOB_TTL_SECONDS, dockerRunnerOf, INIT_CONTAINER, MAIN_CONTAINER, type JobSpecInput } from './job-spec.js';
import { jobName, LABELS, MANAGER } from './names.js';

const exec = { id: 'Ex1abc', namespace: 'company.team', flowId: 'hello', taskRunList: [] } as unknown as Execution;
const run = { id: 'Tr9xyz', taskId: 't1' } as unknown as TaskRun;
const P = 'ai.service.plugin.';
const shell = (extra: Partial<Task> = {}): Task => ({ id: 't1', type: `${P}scripts.shell.Commands`, commands: ['echo hi'], ...extra });

function job(task: Task, over: Partial<JobSpecInput> = {}) {
  return buildJob({ namespace: 'ns1', exec, run, attempt: 2, task, inputUri: 'kestra:///x/input.json', settings: { runnerImage: 'runner:1' }, ...over });
}
const envOf = (c: { env?: { name: string; value?: string }[] }) => Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));

describe('buildJob', () => {
  it('names the Job deterministically and labels Job and Pod', () => {
    const j = job(shell());
    expect(j.metadata?.name).toBe(jobName('Ex1abc', 'Tr9xyz', 2));
    expect(job(shell()).metadata?.name).toBe(j.metadata?.name);
    const labels = { [LABELS.managedBy]: MANAGER, [LABELS.executionId]: 'Ex1abc', [LABELS.taskRunId]: 'Tr9xyz', [LABELS.attempt]: '2' };
    expect(j.metadata?.labels).toEqual(labels);
    expect(j.spec?.template.metadata?.labels).toEqual(labels);
    expect(j.metadata?.namespace).toBe('ns1');
  });

  it('has no retries of its own, a Never restart policy, a TTL and a non-root pod', () => {
    const s = job(shell()).spec!;
    expect(s.backoffLimit).toBe(0);
    expect(s.ttlSecondsAfterFinished).toBe(DEFAULT_JOB_TTL_SECONDS);
    expect(s.activeDeadlineSeconds).toBeUndefined();
    expect(s.template.spec?.restartPolicy).toBe('Never');
    expect(s.template.spec?.securityContext?.runAsNonRoot).toBe(true);
    expect(s.template.spec?.securityContext?.runAsUser).toBe(10001);
    expect(s.template.spec?.containers[0].securityContext?.allowPrivilegeEscalation).toBe(false);
  });

  it('runs the runner program with the attempt env plus the settings env', () => {
    const j = job(shell(), { settings: { runnerImage: 'runner:1', imagePullPolicy: 'IfNotPresent', env: { STORAGE_DIR: '/data' }, ttlSecondsAfterFinished: 60 } });
    const c = j.spec!.template.spec!.containers[0];
    expect(c.name).toBe(MAIN_CONTAINER);
    expect(c.image).toBe('runner:1');
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.command).toEqual(['node', '/app/dist/runner-image/runner.js']);
    expect(c.workingDir).toBe('/app');
    expect(envOf(c)).toMatchObject({ EXECUTION_ID: 'Ex1abc', TASK_RUN_ID: 'Tr9xyz', ATTEMPT: '2', INPUT_URI: 'kestra:///x/input.json', WORK_DIR: '/work', STORAGE_DIR: '/data' });
    // The runner's own failure reason goes to the container's termination message.
    expect(envOf(c).TERMINATION_MESSAGE_PATH).toBe('/dev/termination-log');
    expect(c.terminationMessagePath).toBe('/dev/termination-log');
    expect(c.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(j.spec?.ttlSecondsAfterFinished).toBe(60);
    expect(j.spec?.template.spec?.initContainers).toBeUndefined();
  });

  it('sets the owner reference when the Execution resource is known', () => {
    const owner = { apiVersion: 'flowpilot.io/v1', kind: 'Execution', name: 'ex-1', uid: 'u-1' };
    expect(job(shell(), { owner }).metadata?.ownerReferences).toEqual([{ ...owner, controller: true, blockOwnerDeletion: true }]);
    expect(job(shell()).metadata?.ownerReferences).toBeUndefined();
  });

  it('uses the Docker runner image with the runner copied in by an init container', () => {
    const task = shell({ taskRunner: { type: `${P}scripts.runner.docker.Docker`, pullPolicy: 'ALWAYS' }, containerImage: 'python:3.12-slim' });
    const spec = job(task).spec!.template.spec!;
    const main = spec.containers[0];
    expect(main.image).toBe('python:3.12-slim');
    expect(main.imagePullPolicy).toBe('Always');
    expect(main.command).toEqual(['/flowpilot/node/bin/node', '/flowpilot/app/dist/runner-image/runner.js']);
    expect(main.workingDir).toBe('/flowpilot/app');
    expect(envOf(main).FLOWPILOT_TASK_IMAGE).toBe('python:3.12-slim');
    expect(main.volumeMounts).toContainEqual({ name: 'flowpilot', mountPath: '/flowpilot', readOnly: true });
    const init = spec.initContainers![0];
    expect(init.name).toBe(INIT_CONTAINER);
    expect(init.image).toBe('runner:1');
    expect(init.command).toEqual(['node', '/app/dist/runner-image/runner.js', 'install', '/flowpilot']);
    expect(init.volumeMounts).toEqual([{ name: 'flowpilot', mountPath: '/flowpilot' }]);
    expect(spec.volumes).toContainEqual({ name: 'flowpilot', emptyDir: {} });
  });
});

describe('no secret value in a Job', () => {
  const CREDENTIALS = { STORAGE_S3_ACCESS_KEY_ID: 'AKIA-key-id', STORAGE_S3_SECRET_ACCESS_KEY: 'bucket-s3cr3t', LOG_STORE_URL: 'postgres://u:db-passw0rd@h/db', ENCRYPTION_KEY: 'K'.repeat(43) + '=' };
  const base = { STORAGE_S3_ENDPOINT: 'http://s3:9000', ...CREDENTIALS, SECRET_TOKEN: 'Zmxvdy1zZWNyZXQ=', FLOWPILOT_SECRET_TOKEN: 'flow-secret' };
  const refs = {
    STORAGE_S3_ACCESS_KEY_ID: { name: 's3', key: 'id' }, STORAGE_S3_SECRET_ACCESS_KEY: { name: 's3', key: 'secret' },
    LOG_STORE_URL: { name: 'logs', key: 'url' }, ENCRYPTION_KEY: { name: 'enc', key: 'key' },
  };
  // A task whose properties read secrets and SECRET inputs: they are rendered by the runner, never into the Job.
  const task = shell({ env: { T: "{{ secret('TOKEN') }}", P: '{{ inputs.pw }}' }, commands: ["echo {{ secret('TOKEN') }}"] });
  const jobOf = (env: NodeJS.ProcessEnv) => JSON.stringify(job(task, { settings: loadLauncherSettings(env, 'ns') }));

  it('with the chart\'s RUNNER_ENV_FROM_SECRETS: credentials and the key by reference only', () => {
    const text = jobOf({ ...base, RUNNER_ENV_FROM_SECRETS: JSON.stringify(refs) });
    for (const v of [...Object.values(CREDENTIALS), 'flow-secret', 'Zmxvdy1zZWNyZXQ=']) expect(text).not.toContain(v);
    const env = job(task, { settings: loadLauncherSettings({ ...base, RUNNER_ENV_FROM_SECRETS: JSON.stringify(refs) }, 'ns') }).spec!.template.spec!.containers[0]!.env!;
    expect(env).toContainEqual({ name: 'ENCRYPTION_KEY', valueFrom: { secretKeyRef: { name: 'enc', key: 'key' } } });
    expect(env).toContainEqual({ name: 'LOG_STORE_URL', valueFrom: { secretKeyRef: { name: 'logs', key: 'url' } } });
    expect(env).toContainEqual({ name: 'STORAGE_S3_ENDPOINT', value: 'http://s3:9000' });
    // Without references, a credential stops the operator (naming it) rather than becoming a literal of the Job.
    expect(() => jobOf(base)).toThrow(/STORAGE_S3_ACCESS_KEY_ID holds a credential.*RUNNER_ENV_FROM_SECRETS/);
    // Without credentials (a local run with ambient identity), the encryption key and the flow secrets are never copied.
    const { STORAGE_S3_ACCESS_KEY_ID: _i, STORAGE_S3_SECRET_ACCESS_KEY: _s, LOG_STORE_URL: _u, ...local } = base;
    for (const v of [CREDENTIALS.ENCRYPTION_KEY, 'flow-secret', 'Zmxvdy1zZWNyZXQ=']) expect(jobOf(local)).not.toContain(v);
  });
});

describe('RUNNER_TTL_SECONDS_AFTER_FINISHED', () => {
  const settings = (v?: string) => loadLauncherSettings({ LOG_STORE_URL: 'postgres://x', STORAGE_S3_ENDPOINT: 'http://s3:9000', STORAGE_S3_BUCKET: 'b', ...(v === undefined ? {} : { RUNNER_TTL_SECONDS_AFTER_FINISHED: v }) }, 'ns');
  it('sets the TTL of task Jobs (default 600 s, so finished Jobs do not pile up in the cluster and the operator\'s caches)', () => {
    expect(DEFAULT_JOB_TTL_SECONDS).toBe(600);
    expect(job(shell(), { settings: settings() }).spec?.ttlSecondsAfterFinished).toBe(600);
    expect(job(shell(), { settings: settings('0') }).spec?.ttlSecondsAfterFinished).toBe(0);
    expect(job(shell(), { settings: settings('86400') }).spec?.ttlSecondsAfterFinished).toBe(86400);
  });
  it.each(['-1', '1.5', 'ten', '1e400'])('refuses %s naming the variable', (v) => {
    expect(() => settings(v)).toThrow(/RUNNER_TTL_SECONDS_AFTER_FINISHED must be an integer >= 0/);
  });
});

describe('dockerRunnerOf', () => {
  const D = `${P}scripts.runner.docker.Docker`;
  it.each([
    ['no runner', shell(), undefined],
    ['process runner', shell({ taskRunner: { type: `${P}core.runner.Process` } }), undefined],
    ['task containerImage', shell({ taskRunner: { type: D }, containerImage: 'alpine' }), { image: 'alpine' }],
    ['runner containerImage', shell({ taskRunner: { type: D, containerImage: 'ubuntu:24.04' } }), { image: 'ubuntu:24.04' }],
    ['Kestra type name', shell({ taskRunner: { type: 'io.kestra.plugin.scripts.runner.docker.Docker' }, containerImage: 'a' }), { image: 'a' }],
    ['legacy runner: DOCKER', shell({ runner: 'DOCKER', docker: { image: 'b', pullPolicy: 'NEVER' } }), { image: 'b', pullPolicy: 'Never' }],
    ['IF_NOT_PRESENT', shell({ taskRunner: { type: D, pullPolicy: 'IF_NOT_PRESENT' }, containerImage: 'c' }), { image: 'c', pullPolicy: 'IfNotPresent' }],
    ['NEVER', shell({ taskRunner: { type: D, pullPolicy: 'NEVER' }, containerImage: 'c' }), { image: 'c', pullPolicy: 'Never' }],
  ])('%s', (_name, task, expected) => {
    expect(dockerRunnerOf(task)).toEqual(expected);
  });

  it.each([
    ['missing image', shell({ taskRunner: { type: D } }), /needs a containerImage/],
    ['templated image', shell({ taskRunner: { type: D }, containerImage: '{{ inputs.img }}' }), /templated containerImage/],
    ['bad pull policy', shell({ taskRunner: { type: D, pullPolicy: 'SOMETIMES' }, containerImage: 'x' }), /unknown pullPolicy/],
  ])('rejects %s', (_name, task, error) => {
    expect(() => dockerRunnerOf(task)).toThrow(error);
  });
});

describe('deadlineSeconds', () => {
  it.each([
    [undefined, 60, undefined],
    ['PT1S', 60, 61],
    ['PT1.5S', 0, 2],
    ['PT10M', 30, 630],
    ['{{ vars.t }}', 60, undefined],
    ['nonsense', 60, undefined],
  ])('timeout %s + margin %s → %s', (timeout, margin, expected) => {
    expect(deadlineSeconds({ id: 'a', type: 'x', ...(timeout ? { timeout } : {}) }, margin)).toBe(expected);
  });

  it('is the Job activeDeadlineSeconds', () => {
    const j = job(shell({ timeout: 'PT5S' }), { settings: { runnerImage: 'r', deadlineMarginSeconds: 2 } });
    expect(j.spec?.activeDeadlineSeconds).toBe(7);
  });
});
