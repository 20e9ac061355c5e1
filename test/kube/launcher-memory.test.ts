// What the cluster launcher keeps once attempts are over, against the Kubernetes API test server. This test plays the
// node itself (it writes the runner's result file and marks the Job Complete, then deletes the Job as the TTL
// controller does), so no task process runs. An ended execution's settled attempts and owner UID are forgotten; a
// finished Job deleted by its TTL is not tracked again (nor reported twice); a repeated question after that is
// answered from the result file without a new Job.
import { join } from 'node:path';
import { BatchV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskOutcome } from '../../operator/core/engine-types.js';
import { writeAttemptResult } from '../../operator/kube/attempt-io.js';
import { ANNOTATIONS } from '../../operator/kube/job-spec.js';
import { KubeLauncher } from '../../operator/kube/launcher.js';
import { executionName, GROUP, jobName, KINDS, VERSION } from '../../operator/kube/names.js';
import { LocalStorage } from '../../operator/storage/local.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { until } from '../support/wait.js';
import { oneTask, type Attempt } from './attempt-fixtures.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';

const NS = 'launcher-memory';
let server: KubeTestServer;
let kc: KubeConfig;
let tmp: ReturnType<typeof tempDir>;
let storage: LocalStorage;
let launcher: KubeLauncher;
const reports: { taskRunId: string; outcome: TaskOutcome }[] = [];

beforeAll(async () => {
  tmp = tempDir('kube-launcher-memory-');
  storage = new LocalStorage(join(tmp.dir, 'storage'));
  server = await startKubeTestServer();
  kc = server.kubeConfig();
  launcher = new KubeLauncher({
    kc, namespace: NS, storage, settings: { runnerImage: 'flowpilot-runner:test' },
    report: (_e, taskRunId, _a, outcome) => reports.push({ taskRunId, outcome }),
    onError: () => {},
  });
  await launcher.start();
});

afterAll(async () => {
  await launcher?.stop();
  await server?.close();
  tmp?.remove();
});

const batch = () => kc.makeApiClient(BatchV1Api);
const reportsOf = (a: Attempt) => reports.filter((r) => r.taskRunId === a.run.id);

/** Launches attempt 1 and finishes its Job as a node would: result file, then the Complete condition. */
async function runToEnd(a: Attempt, value: string): Promise<string> {
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: GROUP, version: VERSION, namespace: NS, plural: KINDS.Execution.plural,
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: KINDS.Execution.kind, metadata: { name: executionName(a.exec.id) }, spec: { namespace: a.flow.namespace, flowId: a.flow.id } },
  });
  launcher.launch(a.flow, a.exec, a.run, 1);
  const name = jobName(a.exec.id, a.run.id, 1);
  const job = await until(() => batch().readNamespacedJob({ name, namespace: NS }).catch(() => undefined), 'the Job');
  await writeAttemptResult(storage, job.metadata!.annotations![ANNOTATIONS.inputUri]!, { state: 'SUCCESS', outputs: { value } });
  await batch().patchNamespacedJobStatus({ name, namespace: NS, body: { status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  await until(() => reportsOf(a)[0], 'the report');
  return name;
}

const ttlDelete = (name: string) => batch().deleteNamespacedJob({ name, namespace: NS, propagationPolicy: 'Background' });

describe('KubeLauncher memory', () => {
  it('forgets an ended execution\'s attempts and owner; its Job\'s TTL deletion neither re-tracks nor re-reports it', async () => {
    const a = oneTask('id: t\ntype: ai.service.plugin.core.debug.Return\nformat: x', 'mem-one');
    const name = await runToEnd(a, 'one');
    expect(launcher.tracked).toMatchObject({ attempts: 1, owners: 1, jobs: 1 });
    launcher.forgetExecution(a.exec.id);
    expect(launcher.tracked).toMatchObject({ attempts: 0, owners: 0 });
    await ttlDelete(name);
    await until(() => launcher.tracked.jobs === 0, 'the Job gone from the cache');
    // The delete handler runs as the cache drops the Job: re-tracking (then re-settling) would show at once.
    expect(launcher.tracked.attempts).toBe(0);
    expect(reportsOf(a)).toHaveLength(1);
  });

  it('drops a reported attempt when its finished Job goes; asked again, it answers from the result file without a new Job', async () => {
    const a = oneTask('id: t\ntype: ai.service.plugin.core.debug.Return\nformat: x', 'mem-two');
    const name = await runToEnd(a, 'two');
    expect(launcher.tracked.attempts).toBe(1);
    await ttlDelete(name);
    await until(() => launcher.tracked.attempts === 0 && launcher.tracked.jobs === 0, 'the attempt forgotten with its Job');
    launcher.launch(a.flow, a.exec, a.run, 1); // the engine asks again (its write of the first report failed)
    await until(() => reportsOf(a)[1], 'the second answer');
    expect(reportsOf(a).map((r) => r.outcome)).toEqual([{ state: 'SUCCESS', outputs: { value: 'two' } }, { state: 'SUCCESS', outputs: { value: 'two' } }]);
    expect((await batch().listNamespacedJob({ namespace: NS })).items.map((j) => j.metadata?.name)).not.toContain(name);
  });

  it('a Job deleted while it looked unfinished reports its result file when there is one (a stale copy), else a new attempt', async () => {
    const launchOnly = async (a: Attempt) => {
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: GROUP, version: VERSION, namespace: NS, plural: KINDS.Execution.plural,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: KINDS.Execution.kind, metadata: { name: executionName(a.exec.id) }, spec: { namespace: a.flow.namespace, flowId: a.flow.id } },
      });
      launcher.launch(a.flow, a.exec, a.run, 1);
      const name = jobName(a.exec.id, a.run.id, 1);
      return until(() => batch().readNamespacedJob({ name, namespace: NS }).catch(() => undefined), 'the Job');
    };
    // The runner wrote its result, but the launcher never saw the Job finish (its watch was down while the Job
    // completed and went by its TTL): the last copy it holds is unfinished.
    const done = oneTask('id: t\ntype: ai.service.plugin.core.debug.Return\nformat: x', 'mem-stale');
    const job = await launchOnly(done);
    await writeAttemptResult(storage, job.metadata!.annotations![ANNOTATIONS.inputUri]!, { state: 'SUCCESS', outputs: { value: 'kept' } });
    await ttlDelete(job.metadata!.name!);
    await until(() => reportsOf(done)[0], 'the report');
    expect(reportsOf(done).map((r) => r.outcome)).toEqual([{ state: 'SUCCESS', outputs: { value: 'kept' } }]);
    // No result: the Job vanished under the attempt (someone deleted it): the infrastructure's failure, a new attempt.
    const lost = oneTask('id: t\ntype: ai.service.plugin.core.debug.Return\nformat: x', 'mem-lost');
    const lostJob = await launchOnly(lost);
    await ttlDelete(lostJob.metadata!.name!);
    await until(() => reportsOf(lost)[0], 'the report');
    expect(reportsOf(lost)[0]!.outcome).toMatchObject({ state: 'FAILED', infrastructure: true, error: expect.stringContaining('was deleted before it finished') });
  });
});
