// Operator replicas share the executions (OPERATOR_PARTITIONS): two, then three replicas, each with its own token,
// stores and identity, run batches of executions (parents calling subflows, so children and parents often live in
// different partitions) to SUCCESS with one Job and one Pod per task attempt; a replica killed mid-way (its Leases left
// to expire, as kill -9 would) hands its partitions over and every execution still ends SUCCESS exactly once; a flow's
// concurrency limit holds although several replicas own its executions.
import { BatchV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../operator/kube/names.js';
import { partitionOf } from '../../operator/kube/partitioning.js';
import type { RunningOperator } from '../../operator/kube/operator.js';
import { CLUSTER_NS, startCluster, type TestCluster } from './cluster.js';
import { apiCall, closeCluster } from './cluster-test.js';
import { until } from '../support/wait.js';

const PARTITIONS = 8;
let c: TestCluster;

beforeAll(async () => { c = await startCluster({ replicas: 2, leaseDurationSec: 4, partitions: PARTITIONS }); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

const call = (path: string, init?: RequestInit): Promise<any> => apiCall(c, path, init);
const saveFlow = (yaml: string) => call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });

const FLOWS = [`id: child
namespace: scale
inputs:
  - id: n
    type: STRING
tasks:
  - id: work
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 1", "echo child-{{ inputs.n }}"]
outputs:
  - id: said
    type: STRING
    value: "child {{ inputs.n }}"
`, `id: parent
namespace: scale
tasks:
  - id: first
    type: ai.service.plugin.core.debug.Return
    format: "parent {{ execution.id }}"
  - id: call
    type: ai.service.plugin.core.flow.Subflow
    namespace: scale
    flowId: child
    inputs:
      n: "{{ execution.id }}"
    wait: true
    transmitFailed: true
  - id: last
    type: ai.service.plugin.core.debug.Return
    format: "{{ outputs.call.outputs.said }}"
`];

/** Every partition held by exactly one of the live replicas, each holding some. */
function shared(ops: RunningOperator[]): boolean {
  const held = ops.flatMap((o) => o.partitions());
  return held.length === PARTITIONS && new Set(held).size === PARTITIONS && ops.every((o) => o.partitions().length > 0);
}

async function startBatch(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await call('/executions/scale/parent', { method: 'POST' })).id);
  return ids;
}

async function waitAll(ids: string[]): Promise<any[]> {
  return Promise.all(ids.map((id) => until(async () => {
    const e = await call(`/executions/${id}`);
    return ['SUCCESS', 'FAILED', 'KILLED', 'WARNING'].includes(e.state.current) ? e : undefined;
  }, `execution ${id} to end`, 150_000, 250)));
}

/**
 * The batch ended SUCCESS exactly once, each task run with one attempt, one Job and one Pod per attempt, one child per
 * parent. Returns the ids of the batch's executions (parents and children).
 */
async function expectExactlyOnce(parents: any[]): Promise<string[]> {
  const children = await Promise.all(parents.map((p) => call(`/executions/${p.taskRunList.find((r: any) => r.taskId === 'call').outputs.executionId}`)));
  const all = [...parents, ...children];
  for (const e of all) {
    expect(e.state.current, `${e.flowId} ${e.id}: ${JSON.stringify(e.taskRunList.map((r: any) => [r.taskId, r.state.current, r.error]))}`).toBe('SUCCESS');
    expect(e.state.histories.filter((h: any) => h.state === 'SUCCESS')).toHaveLength(1);
    for (const r of e.taskRunList) expect(r.attempts ?? [], `${e.id} ${r.taskId}`).toHaveLength(1);
  }
  for (const p of parents) expect(p.taskRunList.find((r: any) => r.taskId === 'last').outputs.value).toBe(`child ${p.id}`);
  const childSearch = await call('/executions/search?namespace=scale&flowId=child&size=1000');
  const mine = childSearch.results.filter((e: any) => parents.some((p) => p.id === e.parentId || e.trigger?.variables?.executionId === p.id));
  expect(mine).toHaveLength(parents.length);

  const jobs = (await c.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS, labelSelector: `${LABELS.managedBy}=flowpilot-operator` })).items;
  const ids = new Set(all.map((e) => e.id));
  const ours = jobs.filter((j) => ids.has(j.metadata!.labels![LABELS.executionId]!));
  const runnable = all.flatMap((e) => e.taskRunList.filter((r: any) => r.taskId !== 'call').map((r: any) => `${r.id}/1`));
  expect(ours.map((j) => `${j.metadata!.labels![LABELS.taskRunId]}/${j.metadata!.labels![LABELS.attempt]}`).sort()).toEqual(runnable.sort());
  const pods = new Set(c.kubelet.processes().map((p) => p.pod));
  for (const j of ours) expect([...pods].filter((p) => p.startsWith(`${j.metadata!.name}-`)), `Pods of Job ${j.metadata!.name}`).toHaveLength(1);
  return [...ids];
}

/** How many replicas held the partitions of these executions (the shares, as they were while the batch ran). */
const ownersOf = (ids: string[], shares: number[][]) => new Set(ids.map((id) => shares.findIndex((s) => s.includes(partitionOf(id, PARTITIONS))))).size;

describe('operator replicas share executions by partition', () => {
  it('two replicas, then three (joining mid-batch): each holds a share, batches with subflows run exactly once', async () => {
    await until(() => shared(c.operators), () => `two replicas to share the partitions: ${c.operators.map((o) => o.partitions().join(',')).join(' | ')}`);
    await until(() => c.leader(), 'a leader (flow revisions, triggers)');
    for (const f of FLOWS) await saveFlow(f);
    c.server.resetStats();
    const shares2 = c.operators.map((o) => o.partitions());
    const first = await expectExactlyOnce(await waitAll(await startBatch(6)));
    // Both replicas ran executions of this batch (random ids: 12 executions over 8 partitions in two shares).
    expect(ownersOf(first, shares2)).toBe(2);
    // No replica ever tried to create a Job another one had created (a create refused 409 counts as a write too).
    const jobCount = (await c.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS })).items.length;
    expect(c.server.stats.writes['POST jobs']).toBe(jobCount);

    // A third replica joins while a batch runs: partitions move to it mid-execution (released, then acquired).
    const second = await startBatch(6);
    await c.addOperator('operator-third');
    await until(() => c.operators.length === 3 && shared(c.operators), () => `three replicas to share the partitions: ${c.operators.map((o) => o.partitions().join(',')).join(' | ')}`);
    await expectExactlyOnce(await waitAll(second));
    const shares3 = c.operators.map((o) => o.partitions());
    const third = await expectExactlyOnce(await waitAll(await startBatch(6)));
    expect(ownersOf(third, shares3)).toBeGreaterThanOrEqual(2);
  }, 300_000);

  it('a flow concurrency limit holds across replicas: one replica decides its starts, the owners run them', async () => {
    await until(() => shared(c.operators), 'the replicas to share the partitions');
    await saveFlow(`id: one-at-a-time
namespace: scale
concurrency:
  limit: 1
  behavior: QUEUE
tasks:
  - id: work
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 0.3"]
`);
    const shares = c.operators.map((o) => o.partitions());
    const ids = await Promise.all(Array.from({ length: 10 }, async () => (await call('/executions/scale/one-at-a-time', { method: 'POST' })).id as string));
    const ends = await waitAll(ids);
    expect(ends.map((e) => e.state.current)).toEqual(ids.map(() => 'SUCCESS'));
    expect(ownersOf(ids, shares), 'replicas owning the executions').toBeGreaterThanOrEqual(2);
    const spans = ends.map((e) => ({ from: e.state.histories.find((h: any) => h.state === 'RUNNING').date as string, to: e.state.endDate as string }))
      .sort((x, y) => x.from.localeCompare(y.from));
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.from >= spans[i - 1]!.to, `two running at once: ${JSON.stringify(spans)}`).toBe(true);
  }, 300_000);

  it('a replica killed mid-way: its partitions move within the lease duration and every execution ends SUCCESS exactly once', async () => {
    await until(() => shared(c.operators), 'the replicas to share the partitions');
    const ids = await startBatch(8);
    // The victim: a replica owning an execution whose child task is running in a Pod right now.
    const { victim, running } = await until(async () => {
      const jobs = (await c.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: CLUSTER_NS, labelSelector: `${LABELS.managedBy}=flowpilot-operator` })).items;
      const active = jobs.filter((j) => (j.status?.active ?? 0) > 0).map((j) => j.metadata!.labels![LABELS.executionId]!);
      for (const op of c.operators) {
        const owned = active.filter((id) => op.partitions().includes(partitionOf(id, PARTITIONS)));
        if (owned.length) return { victim: op, running: owned };
      }
      return undefined;
    }, 'a running task Job', 120_000);
    const survivors = c.operators.filter((o) => o !== victim);
    const moved = victim.partitions();
    await c.crash(victim);
    await until(() => shared(survivors) && moved.every((p) => survivors.some((o) => o.partitions().includes(p))), 'the survivors to take over the partitions of the killed replica', 60_000);
    const ends = await waitAll(ids);
    await expectExactlyOnce(ends);
    // The executions that were running on the killed replica finished too (their Jobs adopted, not created again).
    const finished = await Promise.all(running.map((id) => call(`/executions/${id}`)));
    expect(finished.map((e) => e.state.current)).toEqual(running.map(() => 'SUCCESS'));
  }, 300_000);
});
