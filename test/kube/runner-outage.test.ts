// A restarting API server at task Pod start, end to end in cluster mode (test API server with an outage on KVPairs,
// simulated kubelet running the real compiled runner, real PostgreSQL and S3-protocol server, the operator):
// - the outage ends within RUNNER_START_TIMEOUT_MS: the runner waits, the task SUCCEEDS in its first attempt (before
//   the fix the runner exited 0 without a result and the task failed);
// - it outlasts the deadline: each runner exits 75 with its reason (termination message, result), the operator makes
//   new attempts (infrastructure failures) up to TASK_INFRA_RETRIES, then the task run FAILS naming the setting.
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { RUNNER_FAILURE_EXIT_CODE } from '../../operator/kube/attempt-io.js';
import { LABELS } from '../../operator/kube/names.js';
import { until } from '../support/wait.js';
import { CLUSTER_NS, startCluster, type ClusterOptions, type TestCluster } from './cluster.js';
import { apiCall, closeCluster } from './cluster-test.js';

let c: TestCluster | undefined;
afterEach(async () => {
  await closeCluster(c);
  c = undefined;
});

async function cluster(opts: ClusterOptions): Promise<TestCluster> {
  c = await startCluster(opts);
  return c;
}

const call = (path: string, init?: RequestInit): Promise<any> => apiCall(c!, path, init);

const FLOW = `id: hello
namespace: company.team
tasks:
  - id: hi
    type: ai.service.plugin.core.log.Log
    message: "hello from the pod"
`;

async function start(): Promise<string> {
  await call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: FLOW });
  return (await call('/executions/company.team/hello', { method: 'POST' })).id as string;
}

const ended = (id: string) => until(async () => {
  const e = await call(`/executions/${id}`);
  return ['SUCCESS', 'FAILED', 'KILLED', 'WARNING'].includes(e.state.current) ? e : undefined;
}, 'the execution to end', 120_000);

const podsOf = async (executionId: string) =>
  (await c!.kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: CLUSTER_NS, labelSelector: `${LABELS.executionId}=${executionId}` })).items;

describe('task Pods against a restarting API server', { timeout: 300_000 }, () => {
  it('KVPairs answer 503 for a while at runner start: the runner waits and the task succeeds in one attempt', async () => {
    await cluster({ podEnv: { RUNNER_START_TIMEOUT_MS: '120000' } });
    c!.server.startOutage({ resources: ['kvpairs'] });
    const id = await start();
    // The runner of the Pod met the outage (its own log says so) and is still waiting: now the API server is back.
    await until(async () => {
      for (const p of await podsOf(id)) if (/listing KV pairs failed \(503/.test(c!.kubelet.output(p.metadata!.name!, 'task'))) return true;
      return false;
    }, 'the runner to meet the outage', 120_000);
    c!.server.endOutage();
    const exec = await ended(id);
    const run = exec.taskRunList.find((r: any) => r.taskId === 'hi');
    expect(exec.state.current, JSON.stringify(run)).toBe('SUCCESS');
    expect(run.attempts).toHaveLength(1);
    expect(run.attempts[0].infrastructure).toBeUndefined();
    const logs = await call(`/logs/${id}`) as { message: string }[];
    expect(logs.map((l) => l.message)).toContain('hello from the pod');
  });

  it('an outage past RUNNER_START_TIMEOUT_MS: exit 75 with the reason, new attempts up to TASK_INFRA_RETRIES, then FAILED naming it', async () => {
    await cluster({ podEnv: { RUNNER_START_TIMEOUT_MS: '2000' }, operatorEnv: { TASK_INFRA_RETRIES: '1' } });
    c!.server.startOutage({ resources: ['kvpairs'] });
    const id = await start();
    const exec = await ended(id);
    const run = exec.taskRunList.find((r: any) => r.taskId === 'hi');
    expect(exec.state.current).toBe('FAILED');
    expect(run.state.current).toBe('FAILED');
    // Two attempts (the first and TASK_INFRA_RETRIES=1 more), both the infrastructure's failures.
    expect(run.attempts.map((a: any) => [a.state.current, a.infrastructure])).toEqual([['FAILED', true], ['FAILED', true]]);
    expect(run.error).toMatch(/^The runner failed: listing KV pairs: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 2000\): 503: .*\(the infrastructure of this task failed 2 times: no retry left, setting TASK_INFRA_RETRIES=1\)$/);
    // One Job per attempt; each Pod's runner exited 75 with its reason as termination message.
    const jobs = (await c!.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS, labelSelector: `${LABELS.executionId}=${id}` })).items;
    expect(jobs.map((j) => j.metadata!.labels![LABELS.attempt]).sort()).toEqual(['1', '2']);
    const pods = await podsOf(id);
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
        exitCode: RUNNER_FAILURE_EXIT_CODE, message: expect.stringMatching(/^The runner failed: listing KV pairs: still failing after/),
      });
    }
    // The reason and the retry are in the execution's logs.
    const logs = (await call(`/logs/${id}`) as { message: string }[]).map((l) => l.message).join('\n');
    expect(logs).toMatch(/an infrastructure failure, not the task's: new attempt 2 in \d+ ms \(infrastructure retry 1 of 1, setting TASK_INFRA_RETRIES\)/);
    expect(logs).toMatch(/no retry left, setting TASK_INFRA_RETRIES=1/);
  });
});
