// API compatibility: flow and execution graphs (Kestra's FlowGraph), flow and namespace dependencies (FlowTopologyGraph)
// and revisions (any revision's source for a comparison, rollback as a new revision), over HTTP with Kestra's shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../../support/embedded.js';
import { expectShape, type Shape } from './shape.js';

const P = 'ai.service.plugin.';
const yaml = { 'Content-Type': 'application/x-yaml' };

/** Kestra's AbstractGraph node, FlowGraph.Edge, FlowGraph.Cluster and FlowGraph (field names and JSON types). */
const NODE: Shape = { uid: 'string', type: 'string', branchType: 'string?', task: 'object?', taskRun: 'object?', values: 'array?', relationType: 'string?' };
const FLOW_GRAPH: Shape = {
  nodes: [NODE],
  edges: [{ source: 'string', target: 'string', relation: { relationType: 'string?', value: 'string?' } }],
  clusters: [{ cluster: { uid: 'string', type: 'string', relationType: 'string?', taskNode: 'object?' }, nodes: ['string'], parents: ['string'], start: 'string', end: 'string' }],
};
const TOPOLOGY: Shape = { nodes: [{ uid: 'string', namespace: 'string', id: 'string' }], edges: [{ source: 'string', target: 'string', relation: 'string' }] };

const child = `id: child\nnamespace: graphs.a\ntasks:\n  - id: c\n    type: ${P}core.debug.Return\n    format: child\n`;
const parent = `id: parent
namespace: graphs.a
triggers:
  - id: hook
    type: ${P}core.trigger.Webhook
    key: graphs-key-123
tasks:
  - id: each
    type: ${P}core.flow.EachParallel
    value: ["x", "y"]
    tasks:
      - id: ret
        type: ${P}core.debug.Return
        format: "{{ taskrun.value }}"
  - id: call
    type: ${P}core.flow.Subflow
    namespace: graphs.a
    flowId: child
    wait: true
errors:
  - id: oops
    type: ${P}core.log.Log
    message: failed
`;
const listener = `id: listener
namespace: graphs.b
tasks:
  - id: l
    type: ${P}core.log.Log
    message: heard
triggers:
  - id: on
    type: ${P}core.trigger.Flow
    conditions:
      - type: ${P}core.condition.ExecutionFlowCondition
        namespace: graphs.a
        flowId: parent
`;

let e: Embedded;
beforeAll(async () => {
  e = await startEmbedded();
  for (const f of [child, parent, listener]) await e.createFlow(f);
}, 60_000);
afterAll(async () => { await e?.close(); });

describe('GET /flows/{namespace}/{id}/graph', () => {
  it('answers Kestra\'s FlowGraph: triggers, loop cluster, subflow node, error branch', async () => {
    const r = await e.json('/flows/graphs.a/parent/graph');
    expect(r.status).toBe(200);
    expectShape(r.body, FLOW_GRAPH);
    const types = Object.fromEntries(r.body.nodes.map((n: any) => [n.uid, n.type]));
    expect(types['root.Triggers.hook']).toBe('io.kestra.core.models.hierarchies.GraphTrigger');
    expect(types['root.call']).toBe('io.kestra.core.models.hierarchies.SubflowGraphTask');
    expect(types['root.each.ret']).toBe('io.kestra.core.models.hierarchies.GraphTask');
    expect(r.body.nodes.find((n: any) => n.uid === 'root.oops').branchType).toBe('ERROR');
    expect(r.body.clusters.map((c: any) => [c.cluster.uid, c.cluster.relationType ?? null])).toEqual([
      ['cluster_root.Triggers', null], ['cluster_root.each', 'DYNAMIC'],
    ]);
  });

  it('expands a Subflow node named in ?subflows=, draws a revision, and answers 404 for an unknown flow', async () => {
    const r = await e.json('/flows/graphs.a/parent/graph?subflows=root.call');
    expect(r.status).toBe(200);
    expect(r.body.clusters.find((c: any) => c.cluster.uid === 'cluster_root.call').cluster.type).toBe('io.kestra.core.models.hierarchies.SubflowGraphCluster');
    expect(r.body.nodes.map((n: any) => n.uid)).toContain('root.call.c');
    expect((await e.json('/flows/graphs.a/parent/graph?revision=1')).status).toBe(200);
    expect((await e.json('/flows/graphs.a/parent/graph?revision=9')).status).toBe(404);
    expect((await e.json('/flows/graphs.a/nope/graph')).status).toBe(404);
  });

  it('POST /flows/graph draws a YAML body; an invalid flow is 422 with the field', async () => {
    const ok = await e.json('/flows/graph', { method: 'POST', headers: yaml, body: child });
    expect(ok.status).toBe(200);
    expectShape(ok.body, FLOW_GRAPH);
    expect(ok.body.nodes.map((n: any) => n.uid)).toContain('root.c');
    const bad = await e.json('/flows/graph', { method: 'POST', headers: yaml, body: `id: x\nnamespace: graphs.a\ntasks:\n  - id: a\n    type: ${P}core.log.Log\n` });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body.errors)).toContain('tasks[0]');
  });
});

describe('GET /executions/{id}/graph', () => {
  it('draws the execution\'s task runs with their states, one node per loop value', async () => {
    const started = await e.execute('graphs.a', 'parent');
    await e.waitFor(started.id, (x) => ['SUCCESS', 'FAILED', 'WARNING'].includes(x.state.current));
    const r = await e.json(`/executions/${started.id}/graph`);
    expect(r.status).toBe(200);
    expectShape(r.body, FLOW_GRAPH);
    const byUid = Object.fromEntries(r.body.nodes.map((n: any) => [n.uid, n]));
    expect(byUid['root.each.ret_x'].taskRun.state.current).toBe('SUCCESS');
    expect(byUid['root.each.ret_y'].values).toEqual(['y']);
    expect(byUid['root.call'].taskRun.state.current).toBe('SUCCESS');
    expect(byUid['root.oops'].taskRun).toBeUndefined();
    expect((await e.json('/executions/nope/graph')).status).toBe(404);
  }, 60_000);
});

describe('dependencies', () => {
  it('GET /flows/{ns}/{id}/dependencies: both directions, destinationOnly', async () => {
    const r = await e.json('/flows/graphs.a/parent/dependencies');
    expect(r.status).toBe(200);
    expectShape(r.body, TOPOLOGY);
    expect(r.body.edges).toEqual(expect.arrayContaining([
      { source: 'main_graphs.a_parent', target: 'main_graphs.a_child', relation: 'FLOW_TASK' },
      { source: 'main_graphs.a_parent', target: 'main_graphs.b_listener', relation: 'FLOW_TRIGGER' },
    ]));
    const fromChild = await e.json('/flows/graphs.a/child/dependencies');
    expect(fromChild.body.edges).toEqual([{ source: 'main_graphs.a_parent', target: 'main_graphs.a_child', relation: 'FLOW_TASK' }]);
    expect((await e.json('/flows/graphs.a/child/dependencies?destinationOnly=true')).body.edges).toEqual([]);
    expect((await e.json('/flows/graphs.a/child/dependencies?expandAll=true')).body.edges).toHaveLength(2);
  });

  it('GET /namespaces/{ns}/dependencies', async () => {
    const r = await e.json('/namespaces/graphs.b/dependencies');
    expect(r.status).toBe(200);
    expectShape(r.body, TOPOLOGY);
    expect(r.body.nodes.map((n: any) => n.id).sort()).toEqual(['listener', 'parent']);
  });
});

describe('revisions: compare and roll back', () => {
  it('serves any revision\'s source, and a rollback saves the old source as a new revision', async () => {
    const v1 = `id: rev\nnamespace: graphs.a\ntasks:\n  - id: a\n    type: ${P}core.log.Log\n    message: one\n`;
    await e.createFlow(v1);
    await e.createFlow(v1.replace('one', 'two'));
    const old = await e.json('/flows/graphs.a/rev?revision=1&source=true');
    expect(old.body).toMatchObject({ revision: 1, source: v1 });
    const rolled = await e.json('/flows/graphs.a/rev/revisions/1/rollback', { method: 'POST' });
    expect(rolled.status).toBe(200);
    expect(rolled.body).toMatchObject({ revision: 3, source: v1, tasks: [{ message: 'one' }] });
    const revisions = await e.json('/flows/graphs.a/rev/revisions');
    expect(revisions.body.map((x: any) => x.revision)).toEqual([1, 2, 3]);
    expect((await e.json('/flows/graphs.a/rev/revisions/9/rollback', { method: 'POST' })).status).toBe(404);
    expect((await e.json('/flows/graphs.a/rev/revisions/x/rollback', { method: 'POST' })).status).toBe(400);
  });
});
