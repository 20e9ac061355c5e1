// The graphs' layout, pure (no DOM): the API's FlowGraph or FlowTopologyGraph -> a dagre compound graph -> an SVG model
// (positioned nodes, cluster boxes, edge polylines with their kind and label) that GraphView.tsx draws.
// (Relative imports name their .js file: the server-side tests import this module too, under NodeNext resolution.)
import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import type { FlowGraph, FlowGraphNode, FlowTopologyGraph } from '../../api.js';

export type NodeKind = 'task' | 'subflow' | 'trigger' | 'start' | 'end' | 'finally' | 'afterExecution' | 'flow';
export type Branch = 'ERROR' | 'FINALLY' | 'AFTER_EXECUTION';
/** How an edge is drawn: its relation (or the branch it belongs to), or a flow dependency's relation. */
export type EdgeKind = 'SEQUENTIAL' | 'PARALLEL' | 'CHOICE' | 'DYNAMIC' | Branch | 'FLOW_TASK' | 'FLOW_TRIGGER';

export interface Point { x: number; y: number }
export interface ModelNode {
  id: string; kind: NodeKind;
  /** Centre and size (dagre's convention). */
  x: number; y: number; width: number; height: number;
  label: string;
  /** Short type (`Log`, `Parallel`, `Schedule`) or, for a flow, its namespace. */
  typeLabel?: string;
  /** The full type (tooltip, details). */
  type?: string;
  /** The task or trigger id (task runs are indexed by it). */
  taskId?: string;
  branch?: Branch;
  /** The API's node (flow graphs) for the details panel. */
  source?: FlowGraphNode;
  /** A flow node's namespace and id (dependency graphs). */
  flow?: { namespace: string; id: string };
}
export interface ModelCluster {
  id: string; x: number; y: number; width: number; height: number;
  /** The flowable's task id and its relation, e.g. `par · PARALLEL`, or `Triggers`. */
  label: string; relation?: string; branch?: Branch; depth: number;
}
export interface ModelEdge { id: string; source: string; target: string; points: Point[]; kind: EdgeKind; label?: string }
export interface GraphModel { width: number; height: number; nodes: ModelNode[]; clusters: ModelCluster[]; edges: ModelEdge[] }

const H = 'io.kestra.core.models.hierarchies.';
const KIND_OF_TYPE: Record<string, NodeKind> = {
  [`${H}GraphTask`]: 'task',
  [`${H}SubflowGraphTask`]: 'subflow',
  [`${H}GraphTrigger`]: 'trigger',
  [`${H}GraphClusterRoot`]: 'start',
  [`${H}GraphClusterEnd`]: 'end',
  [`${H}GraphClusterFinally`]: 'finally',
  [`${H}GraphClusterAfterExecution`]: 'afterExecution',
};

/** Sizes in SVG units: tasks are cards, a cluster's start and end are dots, finally/after execution are small pills. */
export const NODE_SIZE: Record<NodeKind, { width: number; height: number }> = {
  task: { width: 190, height: 50 }, subflow: { width: 190, height: 50 }, trigger: { width: 190, height: 50 },
  flow: { width: 200, height: 50 },
  start: { width: 14, height: 14 }, end: { width: 14, height: 14 },
  finally: { width: 64, height: 22 }, afterExecution: { width: 110, height: 22 },
};
const EDGE_LABEL = { height: 16, charWidth: 7 };

/** The last segment of a plugin type (`io.kestra.plugin.core.log.Log` -> `Log`). */
export const shortType = (type: string): string => type.split('.').pop() ?? type;

/** Where a task run's state comes from for a node: its task (or trigger) id. */
export const nodeTaskId = (n: FlowGraphNode): string | undefined => n.task?.id ?? n.triggerDeclaration?.id;

interface LayoutInput {
  nodes: Omit<ModelNode, 'x' | 'y'>[];
  clusters: (Omit<ModelCluster, 'x' | 'y' | 'width' | 'height' | 'depth'> & { parent?: string })[];
  parentOf: Map<string, string>;
  edges: Omit<ModelEdge, 'points' | 'id'>[];
  rankdir: 'LR' | 'TB';
}

/** Runs dagre over nodes, clusters (compound parents) and edges, and reads the positions back. */
function layout(input: LayoutInput): GraphModel {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>({ compound: true, multigraph: true });
  g.setGraph({ rankdir: input.rankdir, nodesep: 18, ranksep: 36, edgesep: 10, marginx: 16, marginy: 24 });
    for (const n of input.nodes) g.setNode(n.id, { width: n.width, height: n.height });
  // A cluster's box is dagre's: around its children's border nodes (nodesep apart), so it needs no size of its own.
  for (const c of input.clusters) g.setNode(c.id, { width: 0, height: 0 });
  for (const c of input.clusters) if (c.parent) g.setParent(c.id, c.parent);
  for (const [child, parent] of input.parentOf) if (g.hasNode(child) && g.hasNode(parent)) g.setParent(child, parent);
  const known = new Set(input.nodes.map((n) => n.id));
  const edges = input.edges.filter((e) => known.has(e.source) && known.has(e.target));
  edges.forEach((e, i) => {
    const label = e.label ? { width: e.label.length * EDGE_LABEL.charWidth + 8, height: EDGE_LABEL.height, labelpos: 'c' as const } : {};
    g.setEdge(e.source, e.target, { ...label, minlen: 1 }, `e${i}`);
  });
  dagre.layout(g);
  const depthOf = (id: string): number => {
    let d = 0;
    for (let p = g.parent(id); p; p = g.parent(p)) d++;
    return d;
  };
  const nodes: ModelNode[] = input.nodes.map((n) => {
    const pos = g.node(n.id);
    return { ...n, x: pos.x ?? 0, y: pos.y ?? 0 };
  });
  const clusters: ModelCluster[] = input.clusters.map(({ parent: _parent, ...c }) => {
    const pos = g.node(c.id);
    return { ...c, x: pos.x ?? 0, y: pos.y ?? 0, width: pos.width, height: pos.height, depth: depthOf(c.id) };
  });
  const modelEdges: ModelEdge[] = edges.map((e, i) => {
    const label = g.edge(e.source, e.target, `e${i}`);
    return { ...e, id: `e${i}`, points: (label?.points ?? []).map((p: Point) => ({ x: p.x, y: p.y })) };
  });
  const box = g.graph();
  return { width: box.width ?? 0, height: box.height ?? 0, nodes, clusters, edges: modelEdges };
}

/**
 * A flow's (or an execution's) FlowGraph as a model: one node per API node, one box per cluster (flowables, the
 * Triggers group, expanded subflows) nested as the API's `parents` say, one edge per API edge. Errors, finally and
 * after-execution edges get their branch as kind (the first edge into a branch names it), Switch/If edges their case.
 */
export function layoutFlowGraph(graph: FlowGraph): GraphModel {
  const byUid = new Map(graph.nodes.map((n) => [n.uid, n]));
  const nodes = graph.nodes.map((n): Omit<ModelNode, 'x' | 'y'> => {
    const kind = KIND_OF_TYPE[n.type] ?? 'task';
    const decl = n.task ?? n.triggerDeclaration;
    const values = n.values?.length ? ` [${n.values.join(', ')}]` : '';
    return {
      id: n.uid, kind, ...NODE_SIZE[kind],
      label: decl ? `${decl.id}${values}` : kind === 'finally' ? 'finally' : kind === 'afterExecution' ? 'after execution' : '',
      ...(decl ? { typeLabel: shortType(decl.type), type: decl.type, taskId: decl.id } : {}),
      ...(n.branchType ? { branch: n.branchType } : {}),
      source: n,
    };
  });
  const parentOf = new Map<string, string>();
  for (const c of graph.clusters) for (const member of c.nodes) parentOf.set(member, c.cluster.uid);
  const clusters = graph.clusters.map((c) => {
    const task = c.cluster.taskNode?.task;
    const label = task ? `${task.id} · ${c.cluster.relationType ?? 'SEQUENTIAL'}` : c.cluster.uid.replace(/^cluster_(root\.)?/, '');
    return {
      id: c.cluster.uid, label,
      ...(c.cluster.relationType ? { relation: c.cluster.relationType } : {}),
      ...(c.cluster.branchType ? { branch: c.cluster.branchType } : {}),
      ...(c.parents.length ? { parent: c.parents[c.parents.length - 1] } : {}),
    };
  });
  const branchOf = (uid: string): Branch | undefined => byUid.get(uid)?.branchType;
  const edges = graph.edges.map((e) => {
    const rel = e.relation.relationType as EdgeKind | undefined;
    const targetBranch = branchOf(e.target);
    // A branch edge: into a branch (named by the target) or along it (named by the source, e.g. errors -> finally).
    const kind: EdgeKind = rel === 'ERROR' || rel === 'FINALLY' || rel === 'AFTER_EXECUTION' ? rel
      : targetBranch ?? branchOf(e.source) ?? rel ?? 'SEQUENTIAL';
    const entersBranch = targetBranch !== undefined && branchOf(e.source) !== targetBranch;
    const label = e.relation.value !== undefined && rel === 'CHOICE' ? e.relation.value
      : entersBranch && targetBranch === 'ERROR' ? 'on error' : undefined;
    return { source: e.source, target: e.target, kind, ...(label ? { label } : {}) };
  });
  return layout({ nodes, clusters, parentOf, edges, rankdir: 'LR' });
}

/**
 * A FlowTopologyGraph as a model: one node per flow (the `focus` flow marked by its id), one edge per relation,
 * labelled `subflow` (FLOW_TASK) or `flow trigger` (FLOW_TRIGGER).
 */
export function layoutTopology(graph: FlowTopologyGraph): GraphModel {
  const nodes = graph.nodes.map((n): Omit<ModelNode, 'x' | 'y'> => ({
    id: n.uid, kind: 'flow', ...NODE_SIZE.flow, label: n.id, typeLabel: n.namespace, flow: { namespace: n.namespace, id: n.id },
  }));
  const edges = graph.edges.map((e) => ({
    source: e.source, target: e.target, kind: e.relation, label: e.relation === 'FLOW_TASK' ? 'subflow' : 'flow trigger',
  }));
  return layout({ nodes, clusters: [], parentOf: new Map(), edges, rankdir: 'LR' });
}
