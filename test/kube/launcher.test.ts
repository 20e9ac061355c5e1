// The cluster launcher end to end: KubeLauncher creates Jobs on the Kubernetes API test server, the simulated
// kubelet/Job controller runs their Pods as local processes of the real runner program (LocalStorage + SQLite logs),
// and outcomes come back through `report`. Covers success with outputs, failure, kill, timeout, a stuck image,
// the Docker task runner layout, the Execution owner reference and adoption by a restarted launcher.
import { join, resolve } from 'node:path';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskOutcome } from '../../operator/core/engine-types.js';
import type { LauncherSettings } from '../../operator/kube/job-spec.js';
import { KubeLauncher } from '../../operator/kube/launcher.js';
import { API_VERSION, executionName, GROUP, jobName, KINDS, LABELS, VERSION } from '../../operator/kube/names.js';
import { LocalStorage } from '../../operator/storage/local.js';
import { openDatabase, SqliteLogStore } from '../../operator/store/sqlite/index.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { oneTask, type Attempt } from './attempt-fixtures.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';
import { until as poll } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'launcher-test';
const SH = 'ai.service.plugin.scripts.shell.Commands';

let server: KubeTestServer;
let kc: KubeConfig;
let kubelet: SimulatedKubelet;
let tmp: ReturnType<typeof tempDir>;
let storage: LocalStorage;
let logs: SqliteLogStore;
let closeDb: () => void;
const launchers: KubeLauncher[] = [];
// Test limits (120 s) sit well above the waits (`until`, 40 s): each attempt starts the runner as a child process,
// slow on a loaded 2-core CI machine.
const reports: { executionId: string; taskRunId: string; attempt: number; outcome: TaskOutcome; by: number }[] = [];
const errors: string[] = [];

function settings(): LauncherSettings {
  return {
    runnerImage: 'flowpilot-runner:test',
    env: { STORAGE_DIR: join(tmp.dir, 'storage'), LOG_DB: join(tmp.dir, 'logs.db'), FLOWPILOT_INSTALL: 'symlink' },
    envFrom: [{ secretRef: { name: 'task-secrets' } }],
    terminationGracePeriodSeconds: 5,
    deadlineMarginSeconds: 0,
  };
}

async function newLauncher(over: Partial<LauncherSettings> = {}): Promise<KubeLauncher> {
  const id = launchers.length;
  const l = new KubeLauncher({
    kc, namespace: NS, storage, settings: { ...settings(), ...over },
    report: (executionId, taskRunId, attempt, outcome) => reports.push({ executionId, taskRunId, attempt, outcome, by: id }),
    onError: (m, e) => errors.push(`${m}: ${(e as Error)?.message ?? ''}`),
  });
  launchers.push(l);
  await l.start();
  return l;
}

beforeAll(async () => {
  tmp = tempDir('kube-launcher-');
  storage = new LocalStorage(join(tmp.dir, 'storage'));
  const db = openDatabase(join(tmp.dir, 'logs.db'));
  logs = new SqliteLogStore(db);
  closeDb = () => { logs.close(); db.close(); };
  server = await startKubeTestServer();
  kc = server.kubeConfig();
  // Kestra's convention: SECRET_<NAME> holds the base64 of the secret value; the Secret's data is base64 of that again.
  await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: NS, body: { metadata: { name: 'task-secrets' }, stringData: { SECRET_TOKEN: Buffer.from('hunter2-value').toString('base64') } },
  });
  kubelet = await startSimulatedKubelet({
    kc, namespace: NS, pathMap: { '/app': ROOT },
    pullError: (image) => (image.startsWith('missing.example/') ? 'ImagePullBackOff' : undefined),
  });
});

afterAll(async () => {
  for (const l of launchers) await l.stop();
  await kubelet?.stop();
  await server?.close();
  closeDb?.();
  tmp?.remove();
});

/** Polls with the launcher's reported errors in the timeout message. */
const until = <T>(f: () => T | Promise<T>, what: string, ms = 40_000) => poll(f, () => `${what}; launcher errors: ${errors.join(' | ')}`, ms);

const reportsOf = (a: Attempt) => reports.filter((r) => r.taskRunId === a.run.id && r.attempt === 1);
const outcomeOf = async (a: Attempt) => (await until(() => reportsOf(a)[0], `the outcome of ${a.run.taskId}`)).outcome;
const batch = () => kc.makeApiClient(BatchV1Api);
const readJob = (a: Attempt) => batch().readNamespacedJob({ name: jobName(a.exec.id, a.run.id, 1), namespace: NS });
const jobGone = (a: Attempt) => readJob(a).then(() => undefined, (e: { code?: number }) => (e.code === 404 ? true : undefined));
const podsOf = async (a: Attempt) => (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `job-name=${jobName(a.exec.id, a.run.id, 1)}` })).items;
const logText = async (a: Attempt) => (await logs.forExecution(a.exec.id)).map((l) => l.message).join('\n');
const alive = () => kubelet.processes().filter((p) => p.alive);
const debug = async (a: Attempt) => (await podsOf(a)).map((p) => kubelet.output(p.metadata!.name!)).join('\n');

describe('KubeLauncher with the simulated kubelet', { timeout: 120_000 }, () => {
  let launcher: KubeLauncher;
  beforeAll(async () => { launcher = await newLauncher(); });
  afterAll(async () => { await launcher.stop(); });

  it('runs a Log task in a Job: SUCCESS, its log line in the log store, a labelled Job', async () => {
    const a = oneTask('id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: "hello from {{ flow.id }}"');
    launcher.launch(a.flow, a.exec, a.run, 1);
    expect((await outcomeOf(a)).state, await debug(a)).toBe('SUCCESS');
    expect(await logText(a)).toContain('hello from kube-test');
    const job = await readJob(a);
    expect(job.metadata?.labels?.[LABELS.executionId]).toBe(a.exec.id);
    expect(job.status?.conditions?.some((c) => c.type === 'Complete')).toBe(true);
    expect(reportsOf(a)).toHaveLength(1);
  });

  it('runs a shell Commands task whose outputs come back through report', async () => {
    const a = oneTask(`id: sh\ntype: ${SH}\ncommands:\n  - echo '::{"outputs":{"answer":42,"who":"pod"}}::'`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state, `${JSON.stringify(outcome)}\n${await debug(a)}`).toBe('SUCCESS');
    expect(outcome.outputs).toMatchObject({ vars: { answer: 42, who: 'pod' }, exitCode: 0 });
  });

  it('gives tasks the secrets of a Kubernetes Secret (envFrom), masked in logs and outputs', async () => {
    const a = oneTask(`id: sec\ntype: ${SH}\ncommands:\n  - echo "token={{ secret('TOKEN') }}"\n  - echo '::{"outputs":{"t":"{{ secret('TOKEN') }}"}}::'`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state, JSON.stringify(outcome)).toBe('SUCCESS');
    const text = await logText(a);
    expect(text).toContain('token=');
    expect(text).not.toContain('hunter2-value');
    expect(JSON.stringify(outcome.outputs)).not.toContain('hunter2-value');
  });

  it('reports a failing script as FAILED, once', async () => {
    const a = oneTask(`id: bad\ntype: ${SH}\ncommands:\n  - echo about to fail\n  - exit 7`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state).toBe('FAILED');
    expect(outcome.error).toMatch(/7/);
    expect(await logText(a)).toContain('about to fail');
    await new Promise((r) => setTimeout(r, 300));
    expect(reportsOf(a)).toHaveLength(1);
  });

  it('kill deletes the Job, stops the process and reports KILLED', async () => {
    const a = oneTask(`id: long\ntype: ${SH}\ncommands:\n  - echo started\n  - sleep 60`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    await until(async () => (await logText(a)).includes('started') || undefined, 'the script to start');
    const pod = (await podsOf(a))[0]!.metadata!.name!;
    expect(kubelet.processes().some((p) => p.pod === pod && p.alive)).toBe(true);
    launcher.kill(a.run.id, 1);
    expect((await outcomeOf(a)).state).toBe('KILLED');
    await until(() => jobGone(a), 'the Job to be deleted');
    await until(() => !kubelet.processes().some((p) => p.pod === pod && p.alive) || undefined, 'the pod process to end');
    expect(reportsOf(a)).toHaveLength(1);
  });

  it('fails the attempt when its Job passes the deadline from the task timeout', async () => {
    const a = oneTask(`id: slow\ntype: ${SH}\ntimeout: PT1S\ncommands:\n  - sleep 60`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state).toBe('FAILED');
    expect(outcome.error).toMatch(/timed out/);
    expect((await readJob(a)).spec?.activeDeadlineSeconds).toBe(1);
    expect((await readJob(a)).status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('DeadlineExceeded');
    await until(() => (alive().length === 0) || undefined, 'every pod process to end');
  });

  it('fails at once when the task image cannot be pulled, and removes the Job', async () => {
    const a = oneTask(`id: img\ntype: ${SH}\ntaskRunner:\n  type: ai.service.plugin.scripts.runner.docker.Docker\ncontainerImage: missing.example/none:1\ncommands:\n  - echo hi`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state).toBe('FAILED');
    expect(outcome.error).toMatch(/ImagePullBackOff/);
    await until(() => jobGone(a), 'the stuck Job to be deleted');
    expect(reportsOf(a)).toHaveLength(1);
  });

  it('runs a Docker task runner Pod: task image, runner copied in by the init container', async () => {
    const a = oneTask(`id: dock\ntype: ${SH}\ntaskRunner:\n  type: ai.service.plugin.scripts.runner.docker.Docker\n  pullPolicy: IF_NOT_PRESENT\ncontainerImage: debian:bookworm-slim\ncommands:\n  - echo '::{"outputs":{"in":"docker"}}::'`);
    launcher.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state, `${JSON.stringify(outcome)}\n${await debug(a)}`).toBe('SUCCESS');
    expect(outcome.outputs).toMatchObject({ vars: { in: 'docker' } });
    const pod = (await podsOf(a))[0]!;
    expect(pod.spec?.containers[0]?.image).toBe('debian:bookworm-slim');
    expect(pod.spec?.containers[0]?.imagePullPolicy).toBe('IfNotPresent');
    expect(pod.spec?.containers[0]?.command?.[0]).toBe('/flowpilot/node/bin/node');
    expect(pod.spec?.initContainers?.[0]?.image).toBe('flowpilot-runner:test');
    expect(pod.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    expect(pod.status?.phase).toBe('Succeeded');
  });

  it('makes the Execution resource the owner of the Job when it exists', async () => {
    const a = oneTask('id: owned\ntype: ai.service.plugin.core.log.Log\nmessage: owned');
    const ex = await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP, version: VERSION, namespace: NS, plural: KINDS.Execution.plural,
      body: { apiVersion: API_VERSION, kind: 'Execution', metadata: { name: executionName(a.exec.id) }, spec: { namespace: a.exec.namespace, flowId: a.exec.flowId } },
    }) as { metadata: { uid: string } };
    launcher.launch(a.flow, a.exec, a.run, 1);
    expect((await outcomeOf(a)).state).toBe('SUCCESS');
    const refs = (await readJob(a)).metadata?.ownerReferences;
    expect(refs).toEqual([{ apiVersion: API_VERSION, kind: 'Execution', name: executionName(a.exec.id), uid: ex.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  });
});

describe('a restarted launcher', { timeout: 120_000 }, () => {
  const jobsOf = async (a: Attempt): Promise<V1Job[]> =>
    (await batch().listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.taskRunId}=${a.run.id}` })).items;

  it('adopts a running Job instead of creating another, and reports its outcome once', async () => {
    const first = await newLauncher();
    const a = oneTask(`id: adopt\ntype: ${SH}\ncommands:\n  - echo started\n  - sleep 2\n  - echo '::{"outputs":{"done":true}}::'`);
    first.launch(a.flow, a.exec, a.run, 1);
    await until(async () => (await logText(a)).includes('started') || undefined, 'the script to start');
    await first.stop();
    const creates = server.stats.writes['POST jobs'] ?? 0;
    expect(creates).toBeGreaterThan(0);
    const second = await newLauncher();
    second.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    expect(outcome.state).toBe('SUCCESS');
    expect(outcome.outputs).toMatchObject({ vars: { done: true } });
    expect(server.stats.writes['POST jobs'] ?? 0).toBe(creates);
    expect(await jobsOf(a)).toHaveLength(1);
    expect(reportsOf(a).map((r) => r.by)).toEqual([launchers.indexOf(second)]);
    await second.stop();
  });

  it('does not report a Job that finished before it started unless the engine asks for it', async () => {
    const first = await newLauncher();
    const a = oneTask('id: once\ntype: ai.service.plugin.core.log.Log\nmessage: once');
    first.launch(a.flow, a.exec, a.run, 1);
    expect((await outcomeOf(a)).state).toBe('SUCCESS');
    await first.stop();
    const second = await newLauncher();
    await new Promise((r) => setTimeout(r, 300));
    expect(reportsOf(a)).toHaveLength(1);
    // The engine lost the result (crash before it was saved) and launches the attempt again: the outcome comes back.
    second.launch(a.flow, a.exec, a.run, 1);
    await until(() => reportsOf(a)[1], 'the outcome reported again');
    expect(reportsOf(a)[1]).toMatchObject({ by: launchers.indexOf(second), outcome: { state: 'SUCCESS' } });
    expect(await jobsOf(a)).toHaveLength(1);
    await second.stop();
  });

  it('reports the runner\'s own error when it cannot run as an infrastructure failure (its exit code 75 and termination message)', async () => {
    const l = await newLauncher({ env: { LOG_DB: join(tmp.dir, 'logs.db') } });
    const a = oneTask('id: nostore\ntype: ai.service.plugin.core.log.Log\nmessage: x');
    l.launch(a.flow, a.exec, a.run, 1);
    const outcome = await outcomeOf(a);
    await l.stop();
    expect(outcome).toEqual({ state: 'FAILED', infrastructure: true, error: "Task 'nostore': The runner failed: Internal storage is not configured in this runner (set STORAGE_DIR)" });
  });

  /** An attempt run to SUCCESS (outputs `{ [key]: 'yes' }`) by a launcher since stopped, its Job then collected; the Job creates so far. */
  async function finishedAndCollected(key: string): Promise<{ a: Attempt; creates: number }> {
    const first = await newLauncher();
    const a = oneTask(`id: ${key}\ntype: ${SH}\ncommands:\n  - echo '::{"outputs":{"${key}":"yes"}}::'`);
    first.launch(a.flow, a.exec, a.run, 1);
    expect((await outcomeOf(a)).state).toBe('SUCCESS');
    await first.stop();
    await batch().deleteNamespacedJob({ name: jobName(a.exec.id, a.run.id, 1), namespace: NS, propagationPolicy: 'Background' });
    await until(() => jobGone(a), 'the Job to be collected');
    const creates = server.stats.writes['POST jobs'] ?? 0;
    expect(creates).toBeGreaterThan(0);
    return { a, creates };
  }

  it('reports from the result file when the finished Job was already garbage-collected, without a new Job', async () => {
    const { a, creates } = await finishedAndCollected('kept');
    const second = await newLauncher();
    second.launch(a.flow, a.exec, a.run, 1);
    await until(() => reportsOf(a)[1], 'the outcome reported again');
    expect(reportsOf(a)[1]?.outcome).toMatchObject({ state: 'SUCCESS', outputs: { vars: { kept: 'yes' } } });
    expect(server.stats.writes['POST jobs'] ?? 0).toBe(creates);
    expect(await jobsOf(a)).toHaveLength(0);
    await second.stop();
  });

  it('launches a prepared attempt through the checked path when given another record (its step decided again after a conflict)', async () => {
    const { a, creates } = await finishedAndCollected('again');
    const second = await newLauncher();
    // Prepared with one record object, launched with another (re-read): the earlier result is looked up and answers.
    second.prepare(a.flow, a.exec, [{ run: a.run, attempt: 1 }]);
    second.launch(a.flow, structuredClone(a.exec), a.run, 1);
    await until(() => reportsOf(a)[1], 'the outcome reported again');
    expect(reportsOf(a)[1]?.outcome).toMatchObject({ state: 'SUCCESS', outputs: { vars: { again: 'yes' } } });
    expect(server.stats.writes['POST jobs'] ?? 0).toBe(creates);
    expect(await jobsOf(a)).toHaveLength(0);
    await second.stop();
  });

  it('reports a Job that finished while no launcher was running', async () => {
    const first = await newLauncher();
    const a = oneTask(`id: offline\ntype: ${SH}\ncommands:\n  - echo started\n  - sleep 1`);
    first.launch(a.flow, a.exec, a.run, 1);
    await until(async () => (await logText(a)).includes('started') || undefined, 'the script to start');
    await first.stop();
    await until(async () => (await readJob(a)).status?.conditions?.some((c) => c.type === 'Complete') || undefined, 'the Job to complete');
    expect(reportsOf(a)).toHaveLength(0);
    const second = await newLauncher();
    // The engine still waits for the attempt: its recovery launches it again, and the finished Job answers.
    second.launch(a.flow, a.exec, a.run, 1);
    expect((await outcomeOf(a)).state).toBe('SUCCESS');
    expect(reportsOf(a)[0]?.by).toBe(launchers.indexOf(second));
    await second.stop();
  });
});
