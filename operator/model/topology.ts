// Flow dependencies (Kestra's FlowTopologyGraph): which flows call which (Subflow, ForEachItem: FLOW_TASK) and which
// flows a Flow trigger listens to (FLOW_TRIGGER), for a flow (one hop or expanded, both directions) or a namespace. Pure.
import type { Flow, Task, Trigger } from '../core/types.js';
import { subflowRef } from './graph.js';
import { CALLERS } from './semantic-subflow.js';
import { CONDITION_TYPES, TRIGGER_TYPES, normalizeType } from './task-types.js';
import { allTasks } from './traverse.js';

export type FlowRelation = 'FLOW_TASK' | 'FLOW_TRIGGER';
export interface FlowNode { uid: string; namespace: string; id: string }
export interface FlowTopologyEdge { source: string; target: string; relation: FlowRelation }
export interface FlowTopologyGraph { nodes: FlowNode[]; edges: FlowTopologyEdge[] }
export interface FlowTopology { source: FlowNode; destination: FlowNode; relation: FlowRelation }

/** Kestra's node uid: tenant, namespace and id joined by `_` (our one tenant is `main`). */
export const flowNode = (f: { namespace: string; id: string }): FlowNode =>
  ({ uid: `main_${f.namespace}_${f.id}`, namespace: f.namespace, id: f.id });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const condition = (name: string) => CONDITION_TYPES.find((t) => t.endsWith(`.${name}`))!;
const FLOW_CONDITION = condition('ExecutionFlowCondition');
const NAMESPACE_CONDITION = condition('ExecutionNamespaceCondition');
const MULTIPLE_CONDITION = condition('MultipleCondition');
const OR_CONDITION = condition('OrCondition');

/** The parent calls the child through a Subflow or ForEachItem task whose namespace and flowId are written literally. */
function callsFlow(parent: Flow, child: Flow): boolean {
  return allTasks(parent).some((t: Task) => {
    if (!CALLERS.has(normalizeType(t.type))) return false;
    const ref = subflowRef(t);
    return ref !== undefined && ref.namespace === child.namespace && ref.flowId === child.id;
  });
}

function namespaceMatches(c: Obj, ns: string): boolean {
  const want = String(c.namespace ?? '');
  const comparison = c.comparison ?? (c.prefix === true ? 'PREFIX' : 'EQUALS');
  if (comparison === 'PREFIX') return ns.startsWith(want);
  if (comparison === 'SUFFIX') return ns.endsWith(want);
  return ns === want;
}

/**
 * Whether a condition lets an execution of `parent` through, as far as the flow alone says (Kestra's topology rule):
 * flow and namespace conditions are checked, Or/Multiple need one of theirs, every other condition (states, dates,
 * expressions, labels, outputs...) is a filter that may pass.
 */
function conditionAdmits(c: unknown, parent: Flow): boolean {
  if (!isObj(c)) return true;
  const type = normalizeType(String(c.type ?? ''));
  if (type === FLOW_CONDITION) return c.namespace === parent.namespace && c.flowId === parent.id;
  if (type === NAMESPACE_CONDITION) return namespaceMatches(c, parent.namespace);
  if (type === OR_CONDITION) return Array.isArray(c.conditions) && c.conditions.some((x) => conditionAdmits(x, parent));
  if (type === MULTIPLE_CONDITION) {
    const list = isObj(c.conditions) ? Object.values(c.conditions) : [];
    return list.length === 0 || list.some((x) => conditionAdmits(x, parent));
  }
  return true;
}

/** `preconditions.flows`: one entry must name the parent (namespace, and flowId when given). */
function preconditionsAdmit(trigger: Trigger, parent: Flow): boolean {
  const flows = isObj(trigger.preconditions) && Array.isArray(trigger.preconditions.flows) ? trigger.preconditions.flows : undefined;
  if (!flows) return true;
  return flows.some((f) => isObj(f) && f.namespace === parent.namespace && (f.flowId === undefined || f.flowId === parent.id));
}

/** The child has a Flow trigger that an execution of the parent may fire. */
function triggeredBy(child: Flow, parent: Flow): boolean {
  return (child.triggers ?? []).some((t) => normalizeType(t.type) === TRIGGER_TYPES.flow
    && (Array.isArray(t.conditions) ? t.conditions : []).every((c) => conditionAdmits(c, parent))
    && preconditionsAdmit(t, parent));
}

/** The relation from `parent` to `child` (a flow never depends on itself). */
export function relationOf(parent: Flow, child: Flow): FlowRelation | undefined {
  if (parent.namespace === child.namespace && parent.id === child.id) return undefined;
  if (callsFlow(parent, child)) return 'FLOW_TASK';
  if (triggeredBy(child, parent)) return 'FLOW_TRIGGER';
  return undefined;
}

/** Every relation between the given flows (each pair looked at once per direction: work is quadratic in the flows). */
export function topologies(flows: readonly Flow[]): FlowTopology[] {
  const out: FlowTopology[] = [];
  for (const parent of flows) {
    for (const child of flows) {
      const relation = relationOf(parent, child);
      if (relation) out.push({ source: flowNode(parent), destination: flowNode(child), relation });
    }
  }
  return out;
}

/** Kestra's graph of a list of relations: nodes in first-seen order, one edge per relation. */
export function topologyGraph(list: readonly FlowTopology[], extraNodes: readonly FlowNode[] = []): FlowTopologyGraph {
  const nodes = new Map<string, FlowNode>();
  const edges: FlowTopologyEdge[] = [];
  for (const t of list) {
    if (!nodes.has(t.source.uid)) nodes.set(t.source.uid, t.source);
    if (!nodes.has(t.destination.uid)) nodes.set(t.destination.uid, t.destination);
    edges.push({ source: t.source.uid, target: t.destination.uid, relation: t.relation });
  }
  for (const n of extraNodes) if (!nodes.has(n.uid)) nodes.set(n.uid, n);
  return { nodes: [...nodes.values()], edges };
}

/**
 * Relations of one flow: those where it is the source, and unless `destinationOnly` those where it is the destination;
 * with `expandAll`, the same for every flow reached, each relation once.
 */
export function flowDependencies(all: readonly FlowTopology[], namespace: string, id: string, opts: { destinationOnly?: boolean; expandAll?: boolean } = {}): FlowTopology[] {
  const touching = (uid: string) => all.filter((t) => t.source.uid === uid || (!opts.destinationOnly && t.destination.uid === uid));
  const start = flowNode({ namespace, id }).uid;
  if (!opts.expandAll) return touching(start);
  const seen = new Set<FlowTopology>();
  const visited = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const t of touching(queue.shift()!)) {
      if (seen.has(t)) continue;
      seen.add(t);
      for (const next of [t.source.uid, t.destination.uid]) if (!visited.has(next)) { visited.add(next); queue.push(next); }
    }
  }
  return [...seen];
}

/** A namespace's graph: relations with a flow of the namespace at either end, plus its flows without any. */
export function namespaceDependencies(all: readonly FlowTopology[], flows: readonly Flow[], namespace: string): FlowTopologyGraph {
  const list = all.filter((t) => t.source.namespace === namespace || t.destination.namespace === namespace);
  return topologyGraph(list, flows.filter((f) => f.namespace === namespace).map(flowNode));
}
