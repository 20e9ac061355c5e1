// Table tests of flow dependencies (operator/model/topology.ts): Subflow/ForEachItem calls, Flow trigger conditions and
// preconditions, one hop vs expanded, destinationOnly, and a namespace's graph.
import { describe, expect, it } from 'vitest';
import { parseFlow } from './flow.js';
import { flowDependencies, namespaceDependencies, relationOf, topologies, topologyGraph } from './topology.js';

const P = 'ai.service.plugin.';
const f = (ns: string, id: string, body = `tasks:\n  - id: a\n    type: ${P}core.log.Log\n    message: m\n`) =>
  parseFlow(`id: ${id}\nnamespace: ${ns}\n${body}`);
const caller = (ns: string, id: string, targetNs: string, target: string, type = 'core.flow.Subflow') =>
  f(ns, id, `tasks:\n  - id: call\n    type: ${P}${type}\n    namespace: ${targetNs}\n    flowId: ${target}\n${type.endsWith('ForEachItem') ? '    items: "{{ inputs.f }}"\ninputs:\n  - id: f\n    type: FILE\n' : ''}`);
const listener = (ns: string, id: string, conditions: string, extra = '') =>
  f(ns, id, `tasks:\n  - id: a\n    type: ${P}core.log.Log\n    message: m\ntriggers:\n  - id: on\n    type: ${P}core.trigger.Flow\n${conditions ? `    conditions:\n${conditions}` : ''}${extra}`);
const flowCond = (ns: string, id: string) => `      - type: ${P}core.condition.ExecutionFlowCondition\n        namespace: ${ns}\n        flowId: ${id}\n`;

describe('relationOf', () => {
  const parent = f('a.b', 'parent');
  it.each([
    ['a Subflow call', caller('x', 'p', 'a.b', 'parent'), parent, 'FLOW_TASK'],
    ['a ForEachItem call', caller('x', 'p', 'a.b', 'parent', 'core.flow.ForEachItem'), parent, 'FLOW_TASK'],
    ['a call of another flow', caller('x', 'p', 'a.b', 'other'), parent, undefined],
    ['a templated call (unknown until run time)', caller('x', 'p', '"{{ inputs.ns }}"', 'parent'), parent, undefined],
  ] as const)('%s', (_n, from, to, want) => {
    expect(relationOf(from, to)).toBe(want);
  });

  it.each([
    ['ExecutionFlowCondition naming it', flowCond('a.b', 'parent'), '', 'FLOW_TRIGGER'],
    ['ExecutionFlowCondition naming another', flowCond('a.b', 'other'), '', undefined],
    ['ExecutionNamespaceCondition PREFIX', `      - type: ${P}core.condition.ExecutionNamespaceCondition\n        namespace: a\n        comparison: PREFIX\n`, '', 'FLOW_TRIGGER'],
    ['ExecutionNamespaceCondition EQUALS another', `      - type: ${P}core.condition.ExecutionNamespaceCondition\n        namespace: a\n`, '', undefined],
    ['a state filter only', `      - type: ${P}core.condition.ExecutionStatusCondition\n        in: [SUCCESS]\n`, '', 'FLOW_TRIGGER'],
    ['preconditions.flows naming it', '', `    preconditions:\n      flows:\n        - namespace: a.b\n          flowId: parent\n`, 'FLOW_TRIGGER'],
    ['preconditions.flows naming another', '', `    preconditions:\n      flows:\n        - namespace: a.b\n          flowId: other\n`, undefined],
  ] as const)('Flow trigger with %s', (_n, conditions, extra, want) => {
    expect(relationOf(parent, listener('y', 'l', conditions, extra))).toBe(want);
  });

  it('never relates a flow to itself', () => {
    expect(relationOf(caller('a', 'self', 'a', 'self2'), caller('a', 'self', 'a', 'self2'))).toBeUndefined();
  });
});

describe('dependencies', () => {
  // a → b (Subflow), b → c (Flow trigger on b), d unrelated, e in namespace n2 calls a
  const a = caller('n', 'a', 'n', 'b');
  const b = f('n', 'b');
  const c = listener('n', 'c', flowCond('n', 'b'));
  const d = f('n', 'd');
  const e = caller('n2', 'e', 'n', 'a');
  const all = topologies([a, b, c, d, e]);
  const edges = (list: ReturnType<typeof topologies>) => topologyGraph(list).edges.map((x) => `${x.source}>${x.target}:${x.relation}`).sort();

  it('one hop, both directions', () => {
    expect(edges(flowDependencies(all, 'n', 'b'))).toEqual(['main_n_a>main_n_b:FLOW_TASK', 'main_n_b>main_n_c:FLOW_TRIGGER']);
  });

  it('destinationOnly keeps the relations the flow is the source of', () => {
    expect(edges(flowDependencies(all, 'n', 'b', { destinationOnly: true }))).toEqual(['main_n_b>main_n_c:FLOW_TRIGGER']);
  });

  it('expandAll follows every relation reached, each once', () => {
    expect(edges(flowDependencies(all, 'n', 'c', { expandAll: true }))).toEqual([
      'main_n2_e>main_n_a:FLOW_TASK', 'main_n_a>main_n_b:FLOW_TASK', 'main_n_b>main_n_c:FLOW_TRIGGER',
    ]);
  });

  it('a namespace: its relations (either end) and its flows without any', () => {
    const g = namespaceDependencies(all, [a, b, c, d, e], 'n');
    expect(g.nodes.map((n) => n.uid).sort()).toEqual(['main_n2_e', 'main_n_a', 'main_n_b', 'main_n_c', 'main_n_d']);
    expect(g.edges).toHaveLength(3);
    expect(g.nodes.find((n) => n.id === 'd')).toEqual({ uid: 'main_n_d', namespace: 'n', id: 'd' });
  });
});
