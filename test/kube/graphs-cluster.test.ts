// Cluster home: the graph, dependency, rollback and plugin routes served by the same Koa app over the Kubernetes stores
// (Flow and Execution custom resources), with the chart's RBAC: an execution's graph shows the states of its Job-run tasks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from './cluster.js';
import { closeCluster } from './cluster-test.js';
import { until } from '../support/wait.js';

let c: TestCluster;
beforeAll(async () => { c = await startCluster(); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

async function call(path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(`${c.base}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
const save = (yaml: string) => call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });

const CHILD = `id: child
namespace: graphs
tasks:
  - id: c
    type: ai.service.plugin.core.debug.Return
    format: child
`;
const PARENT = `id: parent
namespace: graphs
tasks:
  - id: each
    type: ai.service.plugin.core.flow.EachSequential
    value: ["x", "y"]
    tasks:
      - id: echo
        type: ai.service.plugin.scripts.shell.Commands
        commands: ["echo {{ taskrun.value }}"]
  - id: call
    type: ai.service.plugin.core.flow.Subflow
    namespace: graphs
    flowId: child
    wait: true
`;

describe('graph routes in the cluster home', () => {
  it('flow graph, dependencies, rollback, plugins and an execution graph with task-run states', async () => {
    expect((await save(CHILD)).status).toBe(200);
    expect((await save(PARENT)).status).toBe(200);

    const graph = await call('/flows/graphs/parent/graph?subflows=root.call');
    expect(graph.status).toBe(200);
    expect(graph.body.nodes.map((n: any) => n.uid)).toEqual(expect.arrayContaining(['root.each.echo', 'root.call.c']));

    const deps = await call('/flows/graphs/child/dependencies');
    expect(deps.body.edges).toEqual([{ source: 'main_graphs_parent', target: 'main_graphs_child', relation: 'FLOW_TASK' }]);
    expect((await call('/namespaces/graphs/dependencies')).body.nodes).toHaveLength(2);

    expect((await save(CHILD.replace('format: child', 'format: changed'))).body.revision).toBe(2);
    const rolled = await call('/flows/graphs/child/revisions/1/rollback', { method: 'POST' });
    expect(rolled.body).toMatchObject({ revision: 3, source: CHILD });

    expect((await call('/plugins')).body.find((p: any) => p.name === 'core')).toBeDefined();

    const { body: started } = await call('/executions/graphs/parent', { method: 'POST' });
    await until(async () => {
      const e = (await call(`/executions/${started.id}`)).body;
      return ['SUCCESS', 'FAILED', 'KILLED'].includes(e.state.current) ? e : undefined;
    }, () => 'the execution to end', 120_000);
    const exGraph = await call(`/executions/${started.id}/graph`);
    expect(exGraph.status).toBe(200);
    const byUid = Object.fromEntries(exGraph.body.nodes.map((n: any) => [n.uid, n]));
    expect(byUid['root.each.echo_x'].taskRun.state.current).toBe('SUCCESS');
    expect(byUid['root.each.echo_y'].taskRun.state.current).toBe('SUCCESS');
    expect(byUid['root.call'].taskRun.state.current).toBe('SUCCESS');
  }, 180_000);
});
