// Table tests of the flow graph (operator/model/graph.ts): per flowable type, the clusters, the edges between task
// uids with their relations, errors/finally branches, triggers, execution task runs and subflow expansion.
import { describe, expect, it } from 'vitest';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { parseFlow } from './flow.js';
import { buildFlowGraph, GRAPH_TYPES, subflowKey, type FlowGraph } from './graph.js';

const P = 'ai.service.plugin.';
const flow = (tasks: string, extra = ''): Flow => parseFlow(`id: f\nnamespace: t\n${extra}\ntasks:\n${tasks}`);
const log = (id: string, indent = 2) => `${' '.repeat(indent)}- id: ${id}\n${' '.repeat(indent)}  type: ${P}core.log.Log\n${' '.repeat(indent)}  message: m\n`;

/** Edges as "source -> target [relationType:value]" with the synthetic root/end/finally nodes kept. */
function edges(g: FlowGraph): string[] {
  return g.edges.map((e) => `${e.source} -> ${e.target}${e.relation.relationType ? ` [${e.relation.relationType}${e.relation.value !== undefined ? `:${e.relation.value}` : ''}]` : ''}`);
}

/** Every edge points at a node of the graph, every node uid is unique, every cluster's start/end exist. */
function wellFormed(g: FlowGraph): void {
  const uids = g.nodes.map((n) => n.uid);
  expect(new Set(uids).size).toBe(uids.length);
  for (const e of g.edges) {
    expect(uids, `edge source ${e.source}`).toContain(e.source);
    expect(uids, `edge target ${e.target}`).toContain(e.target);
  }
  for (const c of g.clusters) {
    expect(uids).toContain(c.start);
    expect(uids).toContain(c.end);
  }
}

describe('flow graph', () => {
  it('a sequence: root -> tasks -> end, no finally node, relations SEQUENTIAL after the first', () => {
    const { graph } = buildFlowGraph(flow(log('a') + log('b')));
    wellFormed(graph);
    expect(edges(graph)).toEqual([
      'root._root -> root.a',
      'root.a -> root.b [SEQUENTIAL]',
      'root.b -> root._end',
    ]);
    expect(graph.clusters).toEqual([]);
    const a = graph.nodes.find((n) => n.uid === 'root.a')!;
    expect(a).toMatchObject({ type: GRAPH_TYPES.task, relationType: 'SEQUENTIAL', task: { id: 'a', type: `${P}core.log.Log` } });
    expect(graph.nodes.map((n) => n.type)).not.toContain(GRAPH_TYPES.finally);
  });

  const cases: { name: string; tasks: string; extra?: string; edges: string[]; clusters: Record<string, string | undefined> }[] = [
    {
      name: 'Sequential',
      tasks: `  - id: s\n    type: ${P}core.flow.Sequential\n    tasks:\n${log('a', 6)}${log('b', 6)}`,
      edges: [
        'root._root -> root.s._root', 'root.s._end -> root._end',
        'root.s._root -> root.s', 'root.s -> root.s.a [SEQUENTIAL]', 'root.s.a -> root.s.b [SEQUENTIAL]', 'root.s.b -> root.s._end',
      ],
      clusters: { 'cluster_root.s': 'SEQUENTIAL' },
    },
    {
      name: 'Parallel',
      tasks: `  - id: p\n    type: ${P}core.flow.Parallel\n    tasks:\n${log('a', 6)}${log('b', 6)}`,
      edges: [
        'root._root -> root.p._root', 'root.p._end -> root._end',
        'root.p._root -> root.p', 'root.p -> root.p.a [PARALLEL]', 'root.p.a -> root.p._end', 'root.p -> root.p.b [PARALLEL]', 'root.p.b -> root.p._end',
      ],
      clusters: { 'cluster_root.p': 'PARALLEL' },
    },
    {
      name: 'Switch (one branch per case, then defaults)',
      tasks: `  - id: sw\n    type: ${P}core.flow.Switch\n    value: x\n    cases:\n      x:\n${log('a', 8)}${log('b', 8)}    defaults:\n${log('d', 6)}`,
      edges: [
        'root._root -> root.sw._root', 'root.sw._end -> root._end',
        'root.sw._root -> root.sw', 'root.sw -> root.sw.a [CHOICE:x]', 'root.sw.a -> root.sw.b [SEQUENTIAL:x]', 'root.sw.b -> root.sw._end',
        'root.sw -> root.sw.d [CHOICE:defaults]', 'root.sw.d -> root.sw._end',
      ],
      clusters: { 'cluster_root.sw': 'CHOICE' },
    },
    {
      name: 'If (then / else branches)',
      tasks: `  - id: i\n    type: ${P}core.flow.If\n    condition: "{{ true }}"\n    then:\n${log('a', 6)}    else:\n${log('b', 6)}`,
      edges: [
        'root._root -> root.i._root', 'root.i._end -> root._end',
        'root.i._root -> root.i', 'root.i -> root.i.a [CHOICE:then]', 'root.i.a -> root.i._end', 'root.i -> root.i.b [CHOICE:else]', 'root.i.b -> root.i._end',
      ],
      clusters: { 'cluster_root.i': 'CHOICE' },
    },
    {
      name: 'EachSequential (DYNAMIC: children keep the loop relation)',
      tasks: `  - id: e\n    type: ${P}core.flow.EachSequential\n    value: [1, 2]\n    tasks:\n${log('a', 6)}${log('b', 6)}`,
      edges: [
        'root._root -> root.e._root', 'root.e._end -> root._end',
        'root.e._root -> root.e', 'root.e -> root.e.a [DYNAMIC]', 'root.e.a -> root.e.b [DYNAMIC]', 'root.e.b -> root.e._end',
      ],
      clusters: { 'cluster_root.e': 'DYNAMIC' },
    },
    {
      name: 'EachParallel (DYNAMIC, children in parallel)',
      tasks: `  - id: e\n    type: ${P}core.flow.EachParallel\n    value: [1, 2]\n    tasks:\n${log('a', 6)}${log('b', 6)}`,
      edges: [
        'root._root -> root.e._root', 'root.e._end -> root._end',
        'root.e._root -> root.e', 'root.e -> root.e.a [DYNAMIC]', 'root.e.a -> root.e._end', 'root.e -> root.e.b [DYNAMIC]', 'root.e.b -> root.e._end',
      ],
      clusters: { 'cluster_root.e': 'DYNAMIC' },
    },
    {
      name: 'DAG (dependsOn edges, tasks nobody depends on end it)',
      tasks: `  - id: d\n    type: ${P}core.flow.DAG\n    tasks:\n      - task:\n          id: a\n          type: ${P}core.log.Log\n          message: m\n      - task:\n          id: b\n          type: ${P}core.log.Log\n          message: m\n        dependsOn: [a]\n      - task:\n          id: c\n          type: ${P}core.log.Log\n          message: m\n        dependsOn: [a]\n`,
      edges: [
        'root._root -> root.d._root', 'root.d._end -> root._end',
        'root.d._root -> root.d', 'root.d -> root.d.a [PARALLEL]', 'root.d.a -> root.d.b [PARALLEL]', 'root.d.b -> root.d._end',
        'root.d.a -> root.d.c [PARALLEL]', 'root.d.c -> root.d._end',
      ],
      clusters: { 'cluster_root.d': 'DYNAMIC' },
    },
    {
      name: 'AllowFailure and WorkingDirectory (SEQUENTIAL clusters)',
      tasks: `  - id: af\n    type: ${P}core.flow.AllowFailure\n    tasks:\n${log('a', 6)}  - id: wd\n    type: ${P}core.flow.WorkingDirectory\n    tasks:\n${log('b', 6)}`,
      edges: [
        'root._root -> root.af._root', 'root.af._end -> root.wd._root [SEQUENTIAL]', 'root.wd._end -> root._end',
        'root.af._root -> root.af', 'root.af -> root.af.a [SEQUENTIAL]', 'root.af.a -> root.af._end',
        'root.wd._root -> root.wd', 'root.wd -> root.wd.b [SEQUENTIAL]', 'root.wd.b -> root.wd._end',
      ],
      clusters: { 'cluster_root.af': 'SEQUENTIAL', 'cluster_root.wd': 'SEQUENTIAL' },
    },
    {
      name: 'Pause without tasks and Subflow (plain nodes; a Subflow is a SubflowGraphTask)',
      tasks: `  - id: pause\n    type: ${P}core.flow.Pause\n  - id: sub\n    type: ${P}core.flow.Subflow\n    namespace: t\n    flowId: other\n`,
      edges: ['root._root -> root.pause', 'root.pause -> root.sub [SEQUENTIAL]', 'root.sub -> root._end'],
      clusters: {},
    },
    {
      name: 'ForEachItem (split, one subflow per batch, merge)',
      tasks: `  - id: each\n    type: ${P}core.flow.ForEachItem\n    items: "{{ inputs.file }}"\n    namespace: t\n    flowId: other\n`,
      extra: 'inputs:\n  - id: file\n    type: FILE',
      edges: [
        'root._root -> root.each._root', 'root.each._end -> root._end',
        'root.each._root -> root.each', 'root.each -> root.each.each_split [SEQUENTIAL]',
        'root.each.each_split -> root.each.each_items [SEQUENTIAL]', 'root.each.each_items -> root.each.each_merge [SEQUENTIAL]',
        'root.each.each_merge -> root.each._end',
      ],
      clusters: { 'cluster_root.each': 'SEQUENTIAL' },
    },
    {
      name: 'errors and finally of a flowable (errors hang off its root, finally before its end)',
      tasks: `  - id: s\n    type: ${P}core.flow.Sequential\n    tasks:\n${log('a', 6)}    errors:\n${log('e1', 6)}${log('e2', 6)}    finally:\n${log('f', 6)}`,
      edges: [
        'root._root -> root.s._root', 'root.s._end -> root._end',
        'root.s._root -> root.s', 'root.s -> root.s.a [SEQUENTIAL]', 'root.s.a -> root.s._finally',
        'root.s._root -> root.s.e1 [ERROR]', 'root.s.e1 -> root.s.e2 [ERROR]', 'root.s.e2 -> root.s._finally',
        'root.s._finally -> root.s.f [SEQUENTIAL]', 'root.s.f -> root.s._end',
      ],
      clusters: { 'cluster_root.s': 'SEQUENTIAL' },
    },
  ];

  it.each(cases)('$name', ({ tasks, extra, edges: expected, clusters }) => {
    const { graph } = buildFlowGraph(flow(tasks, extra));
    wellFormed(graph);
    expect(edges(graph)).toEqual(expected);
    expect(Object.fromEntries(graph.clusters.map((c) => [c.cluster.uid, c.cluster.relationType]))).toEqual(clusters);
  });

  it('flow-level errors and finally are branches of the root, marked with their branchType', () => {
    const { graph } = buildFlowGraph(flow(log('a'), `errors:\n${log('e')}finally:\n${log('f')}`));
    wellFormed(graph);
    expect(edges(graph)).toEqual([
      'root._root -> root.a',
      'root.a -> root._finally',
      'root._root -> root.e [ERROR]', 'root.e -> root._finally',
      'root._finally -> root.f', 'root.f -> root._end',
    ]);
    expect(graph.nodes.find((n) => n.uid === 'root.e')!.branchType).toBe('ERROR');
    expect(graph.nodes.find((n) => n.uid === 'root.f')!.branchType).toBe('FINALLY');
    expect(graph.nodes.find((n) => n.uid === 'root.a')!.branchType).toBeUndefined();
  });

  it('flow-level afterExecution tasks come after finally, before the end, marked AFTER_EXECUTION', () => {
    const { graph } = buildFlowGraph(flow(log('a'), `finally:\n${log('f')}afterExecution:\n${log('x')}${log('y')}`));
    wellFormed(graph);
    expect(edges(graph)).toEqual([
      'root._root -> root.a',
      'root.a -> root._finally',
      'root._finally -> root.f', 'root.f -> root._afterExecution',
      'root._afterExecution -> root.x', 'root.x -> root.y [AFTER_EXECUTION]', 'root.y -> root._end',
    ]);
    expect(graph.nodes.find((n) => n.uid === 'root._afterExecution')!.type).toBe(GRAPH_TYPES.afterExecution);
    expect(graph.nodes.find((n) => n.uid === 'root.x')!).toMatchObject({ branchType: 'AFTER_EXECUTION', relationType: 'AFTER_EXECUTION' });
  });

  it('triggers form a cluster that leads to the root', () => {
    const { graph } = buildFlowGraph(flow(log('a'), `triggers:\n  - id: hook\n    type: ${P}core.trigger.Webhook\n    key: abcdefgh`));
    wellFormed(graph);
    expect(edges(graph)).toEqual([
      'root.Triggers._end -> root._root', 'root._root -> root.a', 'root.a -> root._end',
      'root.Triggers._root -> root.Triggers.hook', 'root.Triggers.hook -> root.Triggers._end',
    ]);
    const trigger = graph.nodes.find((n) => n.type === GRAPH_TYPES.trigger)!;
    expect(trigger).toMatchObject({ uid: 'root.Triggers.hook', triggerDeclaration: { id: 'hook', key: 'abcdefgh' } });
    expect(graph.clusters.map((c) => c.cluster.uid)).toEqual(['cluster_root.Triggers']);
  });

  it('nested clusters list their parents, nodes, start and end', () => {
    const { graph } = buildFlowGraph(flow(`  - id: outer\n    type: ${P}core.flow.Sequential\n    tasks:\n      - id: inner\n        type: ${P}core.flow.Parallel\n        tasks:\n${log('a', 10)}`));
    wellFormed(graph);
    const inner = graph.clusters.find((c) => c.cluster.uid === 'cluster_root.outer.inner')!;
    expect(inner).toMatchObject({
      parents: ['cluster_root.outer'],
      start: 'root.outer.inner._root',
      end: 'root.outer.inner._end',
      nodes: ['root.outer.inner._root', 'root.outer.inner._end', 'root.outer.inner', 'root.outer.inner.a'],
      cluster: { type: GRAPH_TYPES.cluster, taskNode: { uid: 'root.outer.inner', task: { id: 'inner' } } },
    });
    const outer = graph.clusters.find((c) => c.cluster.uid === 'cluster_root.outer')!;
    expect(outer.parents).toEqual([]);
    expect(outer.nodes).toContain('cluster_root.outer.inner');
  });

  it('plugin defaults of the flow are shown on the tasks', () => {
    const f = flow(`  - id: a\n    type: ${P}core.log.Log\n`, `pluginDefaults:\n  - type: ${P}core.log.Log\n    values:\n      message: from-defaults`);
    const { graph } = buildFlowGraph(f);
    expect(graph.nodes.find((n) => n.uid === 'root.a')!.task).toMatchObject({ message: 'from-defaults' });
  });
});

describe('execution graph', () => {
  const run = (id: string, taskId: string, state: string, extra: Partial<TaskRun> = {}): TaskRun => ({
    id, taskId, executionId: 'x', namespace: 't', flowId: 'f', attempts: [],
    state: { current: state, histories: [], startDate: '2024-01-01T00:00:00Z' } as TaskRun['state'], ...extra,
  });
  const execution = (runs: TaskRun[]): Execution => ({
    id: 'x', namespace: 't', flowId: 'f', flowRevision: 1, originalId: 'x', labels: [], inputs: {}, taskRunList: runs,
    state: { current: 'RUNNING', histories: [], startDate: '2024-01-01T00:00:00Z' },
  });

  it('attaches task runs to nodes and expands a loop per value; tasks not reached stay single nodes', () => {
    const f = flow(`  - id: e\n    type: ${P}core.flow.EachParallel\n    value: ["x", "y"]\n    tasks:\n${log('a', 6)}${log('after')}`);
    const ex = execution([
      run('r1', 'e', 'RUNNING'),
      run('r2', 'a', 'SUCCESS', { parentTaskRunId: 'r1', value: 'x' }),
      run('r3', 'a', 'RUNNING', { parentTaskRunId: 'r1', value: 'y' }),
    ]);
    const { graph } = buildFlowGraph(f, { execution: ex });
    wellFormed(graph);
    const byUid = Object.fromEntries(graph.nodes.map((n) => [n.uid, n]));
    expect(byUid['root.e']).toMatchObject({ taskRun: { id: 'r1', state: { current: 'RUNNING' } }, values: [] });
    expect(byUid['root.e.a_x']).toMatchObject({ taskRun: { id: 'r2', state: { current: 'SUCCESS' } }, values: ['x'] });
    expect(byUid['root.e.a_y']).toMatchObject({ taskRun: { id: 'r3' }, values: ['y'] });
    expect(byUid['root.after'].taskRun).toBeUndefined();
    expect(edges(graph)).toContain('root.e -> root.e.a_x [DYNAMIC:x]');
    expect(edges(graph)).toContain('root.e -> root.e.a_y [DYNAMIC:y]');
  });

  it('a flowable run inside a loop becomes one cluster per iteration, with distinct uids', () => {
    const f = flow(`  - id: e\n    type: ${P}core.flow.EachSequential\n    value: ["x", "y"]\n    tasks:\n      - id: s\n        type: ${P}core.flow.Sequential\n        tasks:\n${log('a', 10)}`);
    const ex = execution([
      run('r1', 'e', 'SUCCESS'),
      run('r2', 's', 'SUCCESS', { parentTaskRunId: 'r1', value: 'x' }),
      run('r3', 'a', 'SUCCESS', { parentTaskRunId: 'r2', value: 'x' }),
      run('r4', 's', 'SUCCESS', { parentTaskRunId: 'r1', value: 'y' }),
      run('r5', 'a', 'SUCCESS', { parentTaskRunId: 'r4', value: 'y' }),
    ]);
    const { graph } = buildFlowGraph(f, { execution: ex });
    wellFormed(graph);
    expect(graph.clusters.map((c) => c.cluster.uid)).toEqual(['cluster_root.e', 'cluster_root.e.s_x', 'cluster_root.e.s_y']);
    expect(graph.nodes.find((n) => n.uid === 'root.e.s_x.a_x_x')?.taskRun?.id).toBe('r3');
  });

  it('expands a named Subflow node into a cluster of the called flow; a missing flow is reported', () => {
    const parent = flow(`  - id: sub\n    type: ${P}core.flow.Subflow\n    namespace: t\n    flowId: child\n`);
    const child = parseFlow(`id: child\nnamespace: t\ntasks:\n${log('c')}`);
    const none = buildFlowGraph(parent, { expand: ['root.sub'] });
    expect(none.missing).toEqual([{ uid: 'root.sub', taskId: 'sub', ref: { namespace: 't', flowId: 'child' } }]);
    const { graph, missing } = buildFlowGraph(parent, { expand: ['root.sub'], subflows: new Map([[subflowKey({ namespace: 't', flowId: 'child' }), child]]) });
    expect(missing).toEqual([]);
    wellFormed(graph);
    expect(graph.clusters[0].cluster).toMatchObject({ uid: 'cluster_root.sub', type: GRAPH_TYPES.subflowCluster, taskNode: { type: GRAPH_TYPES.subflowTask } });
    expect(edges(graph)).toEqual([
      'root._root -> root.sub._root', 'root.sub._end -> root._end',
      'root.sub._root -> root.sub', 'root.sub -> root.sub.c [SEQUENTIAL]', 'root.sub.c -> root.sub._end',
    ]);
  });
});
