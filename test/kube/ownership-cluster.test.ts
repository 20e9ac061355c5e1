// Task Jobs belong to their Execution resource on a cluster that enforces owner references (the test API server with
// the OwnerReferencesPermissionEnforcement admission plugin and the chart's RBAC, as on OpenShift): the operator may set
// blockOwnerDeletion (update executions/finalizers), and an Execution created with kubectl under any name owns its
// Jobs too, so deleting it makes the garbage collector remove its Jobs and their Pods.
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../operator/kube/names.js';
import { CLUSTER_NS, startCluster, type TestCluster } from './cluster.js';
import { closeCluster } from './cluster-test.js';
import { until } from '../support/wait.js';

let c: TestCluster;
beforeAll(async () => { c = await startCluster(); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

const EXEC = { group: 'flowpilot.io', version: 'v1', namespace: CLUSTER_NS, plural: 'executions' } as const;
const FLOW = `id: long
namespace: company.own
tasks:
  - id: wait
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 60"]
`;

async function jobsOf(executionId: string): Promise<V1Job[]> {
  const list = await c.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS, labelSelector: `${LABELS.executionId}=${executionId}` });
  return list.items;
}

describe('task Jobs owned by their Execution', () => {
  it('a kubectl-made Execution (its own name) owns its Job; deleting it removes the Job and the Pod', async () => {
    await until(() => c.leader()?.isLeader(), 'a leader');
    const saved = await fetch(`${c.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: FLOW });
    expect(saved.status, await saved.text()).toBe(200);
    const custom = c.kc.makeApiClient(CustomObjectsApi);
    const created = await custom.createNamespacedCustomObject({
      ...EXEC, body: { apiVersion: 'flowpilot.io/v1', kind: 'Execution', metadata: { name: 'nightly-by-hand' }, spec: { namespace: 'company.own', flowId: 'long' } },
    }) as { metadata: { name: string; uid: string } };
    const job = await until(async () => (await jobsOf('nightly-by-hand'))[0], () => `the Job of the hand-made execution (denied: ${c.denied.join('; ')})`);
    expect(job.metadata?.ownerReferences).toEqual([{ apiVersion: 'flowpilot.io/v1', kind: 'Execution', name: 'nightly-by-hand', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const core = c.kc.makeApiClient(CoreV1Api);
    const podsOf = async () => (await core.listNamespacedPod({ namespace: CLUSTER_NS, labelSelector: `job-name=${job.metadata!.name}` })).items;
    await until(async () => (await podsOf()).some((p) => p.status?.phase === 'Running'), 'the task Pod to run');

    await custom.deleteNamespacedCustomObject({ ...EXEC, name: 'nightly-by-hand' }); // kubectl delete: background propagation
    await until(async () => (await jobsOf('nightly-by-hand')).length === 0 && (await podsOf()).length === 0, 'the Job and its Pod to be collected');
  }, 120_000);

  it('an Execution started through the API runs its task Job under the admission plugin', async () => {
    const res = await fetch(`${c.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: `id: quick
namespace: company.own
tasks:
  - id: hello
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["echo hello"]
` });
    expect(res.status).toBe(200);
    const exec = await (await fetch(`${c.base}/executions/company.own/quick`, { method: 'POST' })).json() as { id: string };
    const done = await until(async () => {
      const e = await (await fetch(`${c.base}/executions/${exec.id}`)).json() as { state: { current: string }; taskRunList: { error?: string }[] };
      return ['SUCCESS', 'FAILED', 'KILLED'].includes(e.state.current) ? e : undefined;
    }, 'the execution to end', 90_000);
    expect(done.state.current, JSON.stringify(done.taskRunList.map((r) => r.error))).toBe('SUCCESS');
    const [job] = await jobsOf(exec.id);
    expect(job?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Execution', controller: true, blockOwnerDeletion: true });
  }, 120_000);
});
