// Component tests of the graphs' layout conversion (ui/src/components/graph/layout.ts, states.ts): the API's
// FlowGraph (built by the server's own builder) -> dagre -> the SVG model, node for node and edge for edge; branch
// and case edges kinds; clusters nest and contain their nodes; task-run states from an index, no relayout.
import { describe, expect, it } from 'vitest';
import { buildFlowGraph } from '../../operator/model/graph.js';
import { parseFlow } from '../../operator/model/index.js';
import { flowNode, topologies, topologyGraph } from '../../operator/model/topology.js';
import type { FlowGraph, TaskRun } from '../../ui/src/api.js';
import { layoutFlowGraph, layoutTopology, type GraphModel } from '../../ui/src/components/graph/layout.js';
import { indexTaskRuns, nodeStates } from '../../ui/src/components/graph/states.js';
import { BRANCHY, log } from './graph-flows.js';

const graphOf = (yaml: string): FlowGraph => buildFlowGraph(parseFlow(yaml)).graph as unknown as FlowGraph;

const inside = (m: GraphModel, nodeId: string, clusterId: string): boolean => {
  const n = m.nodes.find((x) => x.id === nodeId)!;
  const c = m.clusters.find((x) => x.id === clusterId)!;
  return n.x - n.width / 2 >= c.x - c.width / 2 - 0.5 && n.x + n.width / 2 <= c.x + c.width / 2 + 0.5
    && n.y - n.height / 2 >= c.y - c.height / 2 - 0.5 && n.y + n.height / 2 <= c.y + c.height / 2 + 0.5;
};

describe('layoutFlowGraph', () => {
  const graph = graphOf(BRANCHY);
  const model = layoutFlowGraph(graph);

  it('keeps every node, edge and cluster of the API graph, each positioned', () => {
    expect(model.nodes.map((n) => n.id).sort()).toEqual(graph.nodes.map((n) => n.uid).sort());
    expect(model.edges).toHaveLength(graph.edges.length);
    expect(model.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual(graph.edges.map((e) => `${e.source}>${e.target}`).sort());
    expect(model.clusters.map((c) => c.id).sort()).toEqual(graph.clusters.map((c) => c.cluster.uid).sort());
    for (const n of model.nodes) expect(Number.isFinite(n.x) && Number.isFinite(n.y)).toBe(true);
    for (const e of model.edges) expect(e.points.length).toBeGreaterThanOrEqual(2);
    expect(model.width).toBeGreaterThan(0);
    expect(model.height).toBeGreaterThan(0);
  });

  it('draws each cluster around its members, nested clusters inside their parents', () => {
    for (const c of graph.clusters) {
      for (const member of c.nodes) {
        if (member.startsWith('cluster_')) continue;
        expect(inside(model, member, c.cluster.uid), `${member} inside ${c.cluster.uid}`).toBe(true);
      }
    }
    expect(model.clusters.find((c) => c.id === 'cluster_root.par')).toMatchObject({ relation: 'PARALLEL', label: 'par · PARALLEL', depth: 0 });
    expect(model.clusters.find((c) => c.id === 'cluster_root.Triggers')?.label).toBe('Triggers');
  });

  it('marks errors and finally branches and labels the cases of If and Switch', () => {
    const kindOf = (s: string, t: string) => model.edges.find((e) => e.source === s && e.target === t);
    expect(kindOf('root._root', 'root.on_error')).toMatchObject({ kind: 'ERROR', label: 'on error' });
    expect(kindOf('root.on_error', 'root._finally')?.kind).toBe('ERROR');
    expect(kindOf('root._finally', 'root.cleanup')?.kind).toBe('FINALLY');
    expect(kindOf('root.cleanup', 'root._end')?.kind).toBe('FINALLY');
    expect(kindOf('root.check', 'root.check.yes')).toMatchObject({ kind: 'CHOICE', label: 'then' });
    expect(kindOf('root.check', 'root.check.no')).toMatchObject({ kind: 'CHOICE', label: 'else' });
    expect(kindOf('root.pick', 'root.pick.case_a')).toMatchObject({ kind: 'CHOICE', label: 'a' });
    expect(kindOf('root.pick', 'root.pick.other')).toMatchObject({ kind: 'CHOICE', label: 'defaults' });
    expect(kindOf('root.par', 'root.par.left')?.kind).toBe('PARALLEL');
    const errorNode = model.nodes.find((n) => n.id === 'root.on_error')!;
    expect(errorNode).toMatchObject({ kind: 'task', branch: 'ERROR', taskId: 'on_error', typeLabel: 'Log' });
    expect(model.nodes.find((n) => n.id === 'root.Triggers.hourly')).toMatchObject({ kind: 'trigger', taskId: 'hourly', typeLabel: 'Schedule' });
    expect(model.nodes.find((n) => n.id === 'root._finally')?.kind).toBe('finally');
  });

  it('colours nodes from an index of task runs: one state per task, loop runs counted, linear in the runs', () => {
    const runs: TaskRun[] = [
      { id: 'r1', taskId: 'par', state: { current: 'SUCCESS' } },
      { id: 'r2', taskId: 'left', state: { current: 'SUCCESS' } },
      { id: 'r3', taskId: 'right', state: { current: 'FAILED' } },
      { id: 'r4', taskId: 'on_error', state: { current: 'RUNNING' } },
      ...Array.from({ length: 1000 }, (_, i): TaskRun => ({ id: `y${i}`, taskId: 'yes', value: String(i), state: { current: i === 7 ? 'FAILED' : 'SUCCESS' } })),
    ];
    const index = indexTaskRuns(runs);
    expect(index.get('yes')?.runs).toHaveLength(1000);
    const states = nodeStates(model, index);
    expect(states.get('root.par.right')?.state).toBe('FAILED');
    expect(states.get('root.on_error')?.state).toBe('RUNNING');
    expect(states.get('root.check.yes')).toMatchObject({ state: 'FAILED', count: 1000, counts: { SUCCESS: 999, FAILED: 1 } });
    expect(states.has('root.check.no')).toBe(false);
    expect(states.has('root.Triggers.hourly')).toBe(false);
    // The model is the flow's: the task runs add no node.
    expect(model.nodes).toHaveLength(graph.nodes.length);
  });
});

describe('layoutTopology', () => {
  it('draws one node per flow and one labelled edge per relation', () => {
    const flows = [
      parseFlow(`id: parent\nnamespace: ui.dep\ntasks:\n  - id: call\n    type: io.kestra.plugin.core.flow.Subflow\n    namespace: ui.dep\n    flowId: child\n`),
      parseFlow(`id: child\nnamespace: ui.dep\ntasks:\n${log('t', '  ')}`),
      parseFlow(`id: listener\nnamespace: ui.dep\ntasks:\n${log('t', '  ')}triggers:\n  - id: after\n    type: io.kestra.plugin.core.trigger.Flow\n    conditions:\n      - type: io.kestra.plugin.core.condition.ExecutionFlowCondition\n        namespace: ui.dep\n        flowId: child\n`),
    ];
    const graph = topologyGraph(topologies(flows));
    const model = layoutTopology(graph);
    expect(model.nodes.map((n) => n.id).sort()).toEqual([flowNode(flows[0]), flowNode(flows[1]), flowNode(flows[2])].map((n) => n.uid).sort());
    expect(model.edges.map((e) => [e.source, e.target, e.kind, e.label])).toEqual(expect.arrayContaining([
      ['main_ui.dep_parent', 'main_ui.dep_child', 'FLOW_TASK', 'subflow'],
      ['main_ui.dep_child', 'main_ui.dep_listener', 'FLOW_TRIGGER', 'flow trigger'],
    ]));
    expect(model.edges).toHaveLength(2);
    // Left to right: a caller before what it calls.
    const x = (id: string) => model.nodes.find((n) => n.id === `main_ui.dep_${id}`)!.x;
    expect(x('parent')).toBeLessThan(x('child'));
    expect(x('child')).toBeLessThan(x('listener'));
  });
});
