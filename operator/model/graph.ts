// Kestra's FlowGraph of a flow (nodes, edges, clusters for flowables, errors/finally/afterExecution branches and triggers), optionally
// with an execution's task runs on its nodes (loops expanded per iteration) and named Subflow tasks expanded. Pure.
import { FOR_EACH_ITEM_BATCH, forEachItemParts } from '../core/flow-index.js';
import type { Execution, Flow, Task, TaskRun, Trigger } from '../core/types.js';
import { applyPluginDefaults } from './plugin-defaults.js';
import { PREFIX, normalizeType, shortType } from './task-types.js';
import { taskSlots } from './traverse.js';

export const RelationTypes = ['SEQUENTIAL', 'CHOICE', 'ERROR', 'FINALLY', 'AFTER_EXECUTION', 'PARALLEL', 'DYNAMIC'] as const;
export type RelationType = (typeof RelationTypes)[number];
export type BranchType = 'ERROR' | 'FINALLY' | 'AFTER_EXECUTION';

const H = 'io.kestra.core.models.hierarchies.';
/** Node and cluster `type`s: Kestra's class names, which its clients switch on. */
export const GRAPH_TYPES = {
  task: `${H}GraphTask`,
  subflowTask: `${H}SubflowGraphTask`,
  cluster: `${H}GraphCluster`,
  subflowCluster: `${H}SubflowGraphCluster`,
  root: `${H}GraphClusterRoot`,
  end: `${H}GraphClusterEnd`,
  finally: `${H}GraphClusterFinally`,
  afterExecution: `${H}GraphClusterAfterExecution`,
  trigger: `${H}GraphTrigger`,
} as const;

export interface GraphNode {
  uid: string;
  type: string;
  branchType?: BranchType;
  task?: Task;
  taskRun?: TaskRun;
  /** Loop values of the task run and its parents (execution graphs only). */
  values?: string[];
  relationType?: RelationType;
  triggerDeclaration?: Trigger;
}

export interface Relation { relationType?: RelationType; value?: string }
export interface GraphEdge { source: string; target: string; relation: Relation }
export interface GraphClusterNode { uid: string; type: string; relationType?: RelationType; taskNode?: GraphNode; branchType?: BranchType }
export interface GraphClusterEntry { cluster: GraphClusterNode; nodes: string[]; parents: string[]; start: string; end: string }
export interface FlowGraph { nodes: GraphNode[]; edges: GraphEdge[]; clusters: GraphClusterEntry[] }

/** A Subflow to draw inside the graph: the flow it calls, keyed by `subflowKey`. */
export interface SubflowRef { namespace: string; flowId: string; revision?: number }
export const subflowKey = (r: SubflowRef): string => `${r.namespace}/${r.flowId}/${r.revision ?? ''}`;

export interface GraphOptions {
  /** Draw this execution's task runs on the nodes (one node per task run; loops expanded per value). */
  execution?: Execution;
  /** Uids of Subflow nodes to draw as clusters of the flow they call (Kestra's `subflows` query parameter). */
  expand?: readonly string[];
  /** The flows of expanded Subflow nodes, by subflowKey; a missing one is reported in `missing`. */
  subflows?: ReadonlyMap<string, Flow>;
  /** Nesting of expanded subflows (MAX_SUBFLOW_DEPTH). */
  maxSubflowDepth?: number;
}

export interface GraphResult { graph: FlowGraph; missing: { uid: string; taskId: string; ref?: SubflowRef }[] }

interface Cluster {
  base: string;
  type: string;
  relationType?: RelationType;
  taskNode?: GraphNode;
  branchType?: BranchType;
  root: GraphNode;
  end: GraphNode;
  fin?: GraphNode;
  members: (GraphNode | Cluster)[];
  edges: GraphEdge[];
}

const isCluster = (m: GraphNode | Cluster): m is Cluster => 'members' in m;
const entry = (m: GraphNode | Cluster): string => (isCluster(m) ? m.root.uid : m.uid);
const exit = (m: GraphNode | Cluster): string => (isCluster(m) ? m.end.uid : m.uid);
const relation = (relationType?: RelationType, value?: string): Relation =>
  ({ ...(relationType ? { relationType } : {}), ...(value !== undefined ? { value } : {}) });

/**
 * How a flowable's lists are drawn (Kestra's `tasksTree` of each type): the cluster's relation type and whether its main
 * lists are a sequence, parallel branches, exclusive choices (each list a branch named by its slot) or a DAG.
 * Children come from traverse.ts; a flowable type missing here is drawn as a sequence.
 */
type Layout = { relation: RelationType; lists: 'sequential' | 'parallel' | 'choice' | 'dag' };
const LAYOUTS: Record<string, Layout> = {
  'core.flow.Sequential': { relation: 'SEQUENTIAL', lists: 'sequential' },
  'core.flow.AllowFailure': { relation: 'SEQUENTIAL', lists: 'sequential' },
  'core.flow.WorkingDirectory': { relation: 'SEQUENTIAL', lists: 'sequential' },
  'core.flow.Pause': { relation: 'SEQUENTIAL', lists: 'sequential' },
  'core.flow.ForEachItem': { relation: 'SEQUENTIAL', lists: 'sequential' },
  'core.flow.Parallel': { relation: 'PARALLEL', lists: 'parallel' },
  'core.flow.Switch': { relation: 'CHOICE', lists: 'choice' },
  'core.flow.If': { relation: 'CHOICE', lists: 'choice' },
  'core.flow.EachSequential': { relation: 'DYNAMIC', lists: 'sequential' },
  'core.flow.EachParallel': { relation: 'DYNAMIC', lists: 'parallel' },
  'core.flow.ForEach': { relation: 'DYNAMIC', lists: 'sequential' },
  'core.flow.LoopUntil': { relation: 'DYNAMIC', lists: 'sequential' },
  'core.flow.DAG': { relation: 'DYNAMIC', lists: 'dag' },
};
const SUBFLOW_TYPE = `${PREFIX}core.flow.Subflow`;
const FOR_EACH_ITEM_TYPE = `${PREFIX}core.flow.ForEachItem`;

/** The three steps Kestra draws (and records) for a ForEachItem: the engine's own definition of them. */
function forEachItemSteps(task: Task): Task[] {
  const { split, items, merge } = forEachItemParts(task);
  return [split, items, merge];
}

class Builder {
  readonly missing: GraphResult['missing'] = [];
  private readonly runsByTask = new Map<string, TaskRun[]>();
  private readonly runsById = new Map<string, TaskRun>();

  constructor(private readonly opts: GraphOptions) {
    for (const run of opts.execution?.taskRunList ?? []) {
      this.runsById.set(run.id, run);
      const list = this.runsByTask.get(run.taskId) ?? [];
      list.push(run);
      this.runsByTask.set(run.taskId, list);
    }
  }

  newCluster(base: string, type: string, relationType?: RelationType, taskNode?: GraphNode): Cluster {
    const c: Cluster = {
      base, type, relationType, taskNode,
      root: { uid: `${base}._root`, type: GRAPH_TYPES.root },
      fin: { uid: `${base}._finally`, type: GRAPH_TYPES.finally },
      end: { uid: `${base}._end`, type: GRAPH_TYPES.end },
      members: [], edges: [],
    };
    c.members.push(c.root, c.fin!, c.end);
    c.edges.push({ source: c.fin!.uid, target: c.end.uid, relation: {} });
    if (taskNode) {
      c.members.push(taskNode);
      c.edges.push({ source: c.root.uid, target: taskNode.uid, relation: {} });
    }
    return c;
  }

  /** Without a finally list the finally node goes: what led to it leads to the end. */
  dropFinally(c: Cluster): void {
    const fin = c.fin;
    if (!fin) return;
    c.edges = c.edges.filter((e) => e.source !== fin.uid).map((e) => (e.target === fin.uid ? { ...e, target: c.end.uid } : e));
    c.members = c.members.filter((m) => m !== fin);
    c.fin = undefined;
  }

  /** Task runs drawn for a task under `parent` (Kestra: all of them at the top; none drawn when none belongs here). */
  runsOf(task: Task, parent?: TaskRun): (TaskRun | undefined)[] {
    if (!this.opts.execution) return [undefined];
    const runs = this.runsByTask.get(task.id);
    if (!runs?.length) return [undefined];
    return parent ? runs.filter((r) => r.parentTaskRunId === parent.id) : runs;
  }

  /** Loop values of a run and its parents, outermost first (Kestra's findParentsValues with the current run). */
  valuesOf(run: TaskRun): string[] {
    const chain: string[] = [];
    const seen = new Set<string>();
    for (let r: TaskRun | undefined = run; r && !seen.has(r.id); r = r.parentTaskRunId ? this.runsById.get(r.parentTaskRunId) : undefined) {
      seen.add(r.id);
      if (r.value !== undefined && r.value !== null) chain.unshift(r.value);
    }
    return chain;
  }

  fillList(c: Cluster, tasks: Task[], listRelation: RelationType, parent: TaskRun | undefined, depth: number, value?: string): void {
    let previous = c.taskNode?.uid ?? c.root.uid;
    if (listRelation === 'FINALLY' && c.fin) {
      previous = c.fin.uid;
      const fin = c.fin.uid;
      c.edges = c.edges.filter((e) => !(e.source === fin && e.target === c.end.uid));
    }
    const next = listRelation === 'FINALLY' ? c.end.uid : (c.fin?.uid ?? c.end.uid);
    const linkAllToNext = listRelation === 'PARALLEL' || listRelation === 'CHOICE';
    let first = true;
    tasks.forEach((task, index) => {
      for (const run of this.runsOf(task, parent)) {
        let rel = c.relationType;
        if (listRelation === 'ERROR') rel = 'ERROR';
        else if (!first && listRelation !== 'PARALLEL' && c.relationType !== 'DYNAMIC') rel = listRelation;
        const member = this.member(c, task, run, listRelation, depth);
        c.members.push(member);
        if (listRelation === 'ERROR' || listRelation === 'FINALLY') setBranch(member, listRelation);
        if (listRelation === 'ERROR' && first) previous = c.root.uid;
        c.edges.push({ source: previous, target: entry(member), relation: relation(rel, run?.value ?? value) });
        if (listRelation !== 'PARALLEL') previous = exit(member);
        if (linkAllToNext || index === tasks.length - 1) c.edges.push({ source: exit(member), target: next, relation: {} });
        first = false;
      }
    });
  }

  /** errors then finally of a cluster (a missing finally list removes the finally node). */
  fillHandlers(c: Cluster, errors: unknown, fin: unknown, parent: TaskRun | undefined, depth: number): void {
    const errorList = asTasks(errors);
    const finallyList = asTasks(fin);
    if (errorList.length) this.fillList(c, errorList, 'ERROR', parent, depth);
    if (finallyList.length) this.fillList(c, finallyList, 'FINALLY', parent, depth);
    else this.dropFinally(c);
  }

  /** The flow's afterExecution tasks: after everything else (finally included), one after the other, before the end. */
  fillAfterExecution(c: Cluster, tasks: Task[], depth: number): void {
    if (!tasks.length) return;
    const node: GraphNode = { uid: `${c.base}._afterExecution`, type: GRAPH_TYPES.afterExecution, branchType: 'AFTER_EXECUTION' };
    c.edges = c.edges.map((e) => (e.target === c.end.uid ? { ...e, target: node.uid } : e));
    c.members.push(node);
    let previous = node.uid;
    for (const task of tasks) {
      for (const run of this.runsOf(task, undefined)) {
        const member = this.member(c, task, run, 'AFTER_EXECUTION', depth);
        c.members.push(member);
        setBranch(member, 'AFTER_EXECUTION');
        c.edges.push({ source: previous, target: entry(member), relation: relation(previous === node.uid ? undefined : 'AFTER_EXECUTION', run?.value) });
        previous = exit(member);
      }
    }
    c.edges.push({ source: previous, target: c.end.uid, relation: {} });
  }

  member(parent: Cluster, written: Task, run: TaskRun | undefined, listRelation: RelationType, depth: number): GraphNode | Cluster {
    const task = this.withDefaults(written);
    const values = run ? this.valuesOf(run) : undefined;
    const uid = `${parent.base}.${task.id}${values?.length ? `_${values.join('_')}` : ''}`;
    const type = normalizeType(task.type);
    const layout = Object.hasOwn(LAYOUTS, shortType(type)) ? LAYOUTS[shortType(type)] : undefined;
    const slots = taskSlots(task);
    const extra = { ...(run ? { taskRun: run } : {}), ...(values ? { values } : {}) };
    if (type === FOR_EACH_ITEM_TYPE || slots.length > 0) {
      const rel = layout?.relation ?? 'SEQUENTIAL';
      const node: GraphNode = { uid, type: GRAPH_TYPES.task, task, ...extra, relationType: rel };
      const c = this.newCluster(uid, GRAPH_TYPES.cluster, rel, node);
      this.fillFlowable(c, task, layout?.lists ?? 'sequential', run, depth);
      return c;
    }
    const subflow = type === SUBFLOW_TYPE || type === FOR_EACH_ITEM_BATCH;
    const node: GraphNode = { uid, type: subflow ? GRAPH_TYPES.subflowTask : GRAPH_TYPES.task, task, ...extra, relationType: listRelation };
    if (subflow && this.opts.expand?.includes(uid)) return this.expandSubflow(node, task, depth);
    return node;
  }

  fillFlowable(c: Cluster, task: Task, lists: Layout['lists'], run: TaskRun | undefined, depth: number): void {
    if (normalizeType(task.type) === FOR_EACH_ITEM_TYPE) {
      this.fillList(c, forEachItemSteps(task), 'SEQUENTIAL', run, depth);
      this.fillHandlers(c, task.errors, task.finally, run, depth);
      return;
    }
    const main = taskSlots(task).filter((s) => s.name !== 'errors' && s.name !== 'finally');
    if (lists === 'dag') this.fillDag(c, task, main[0]?.tasks ?? [], run, depth);
    else if (lists === 'choice') {
      for (const slot of main) {
        const branch = slot.name.startsWith('cases.') ? slot.name.slice('cases.'.length) : slot.name;
        this.fillList(c, slot.tasks, 'SEQUENTIAL', run, depth, branch);
      }
    } else {
      for (const slot of main) this.fillList(c, slot.tasks, lists === 'parallel' ? 'PARALLEL' : 'SEQUENTIAL', run, depth);
    }
    this.fillHandlers(c, task.errors, task.finally, run, depth);
  }

  /** DAG: tasks in dependency order; a task without dependsOn hangs off the DAG node, a task nobody depends on ends it. */
  fillDag(c: Cluster, dag: Task, tasks: Task[], run: TaskRun | undefined, depth: number): void {
    const dependsOn = new Map<string, string[]>();
    for (const e of Array.isArray(dag.tasks) ? dag.tasks : []) {
      const item = e as { task?: Task; dependsOn?: unknown };
      if (item?.task?.id) dependsOn.set(item.task.id, Array.isArray(item.dependsOn) ? item.dependsOn.map(String) : []);
    }
    const depended = new Set([...dependsOn.values()].flat());
    const placed = new Map<string, (GraphNode | Cluster)[]>();
    let pending = tasks;
    while (pending.length > 0) {
      const ready = pending.filter((t) => (dependsOn.get(t.id) ?? []).every((d) => placed.has(d)));
      if (ready.length === 0) break; // unknown or cyclic dependencies (refused at save): draw what can be drawn
      for (const task of ready) {
        const members: (GraphNode | Cluster)[] = [];
        for (const r of this.runsOf(task, run)) {
          const member = this.member(c, task, r, 'SEQUENTIAL', depth);
          members.push(member);
          c.members.push(member);
          const rel = relation('PARALLEL', r?.value);
          const deps = dependsOn.get(task.id) ?? [];
          if (deps.length === 0) c.edges.push({ source: c.taskNode?.uid ?? c.root.uid, target: entry(member), relation: rel });
          for (const d of deps) for (const before of placed.get(d) ?? []) c.edges.push({ source: exit(before), target: entry(member), relation: rel });
          if (!depended.has(task.id)) c.edges.push({ source: exit(member), target: c.fin?.uid ?? c.end.uid, relation: {} });
        }
        placed.set(task.id, members);
      }
      pending = pending.filter((t) => !placed.has(t.id));
    }
  }

  expandSubflow(node: GraphNode, task: Task, depth: number): GraphNode | Cluster {
    const ref = subflowRef(task);
    const flow = ref ? this.opts.subflows?.get(subflowKey(ref)) : undefined;
    if (!flow || depth >= (this.opts.maxSubflowDepth ?? 10)) {
      this.missing.push({ uid: node.uid, taskId: task.id, ...(ref ? { ref } : {}) });
      return node;
    }
    const c = this.newCluster(node.uid, GRAPH_TYPES.subflowCluster, 'SEQUENTIAL', node);
    // The called flow's nodes carry no task runs: they belong to another execution.
    new Builder({ ...this.opts, execution: undefined }).fillFlow(c, flow, depth + 1, this.missing);
    return c;
  }

  withDefaults(task: Task): Task {
    return this.defaults?.length ? applyPluginDefaults(task, this.defaults) : task;
  }

  private defaults?: Flow['pluginDefaults'];

  fillFlow(c: Cluster, flow: Flow, depth: number, missing = this.missing): void {
    this.defaults = flow.pluginDefaults;
    if (Array.isArray(flow.triggers)) {
      const t = this.newCluster(`${c.base}.Triggers`, GRAPH_TYPES.cluster);
      c.members.push(t);
      for (const trigger of flow.triggers) {
        const node: GraphNode = { uid: `${t.base}.${trigger.id}`, type: GRAPH_TYPES.trigger, triggerDeclaration: trigger };
        t.members.push(node);
        t.edges.push({ source: t.root.uid, target: node.uid, relation: {} }, { source: node.uid, target: t.end.uid, relation: {} });
      }
      this.dropFinally(t);
      c.edges.push({ source: t.end.uid, target: c.root.uid, relation: {} });
    }
    this.fillList(c, asTasks(flow.tasks), 'SEQUENTIAL', undefined, depth);
    this.fillHandlers(c, flow.errors, flow.finally, undefined, depth);
    this.fillAfterExecution(c, asTasks(flow.afterExecution), depth);
    if (missing !== this.missing) missing.push(...this.missing);
  }
}

function setBranch(m: GraphNode | Cluster, branch: BranchType): void {
  m.branchType = branch;
  if (isCluster(m)) {
    for (const n of [m.taskNode, m.root, m.end]) if (n) n.branchType = branch;
  }
}

function asTasks(v: unknown): Task[] {
  return Array.isArray(v) ? v.filter((t): t is Task => typeof t === 'object' && t !== null && typeof (t as Task).id === 'string') : [];
}

/** The flow a Subflow (or ForEachItem batch) task calls, when its namespace and id are written literally. */
export function subflowRef(task: Task): SubflowRef | undefined {
  const { namespace, flowId, revision } = task as { namespace?: unknown; flowId?: unknown; revision?: unknown };
  const literal = (v: unknown): v is string => typeof v === 'string' && v !== '' && !v.includes('{{') && !v.includes('{%');
  if (!literal(namespace) || !literal(flowId)) return undefined;
  return { namespace, flowId, ...(typeof revision === 'number' ? { revision } : {}) };
}

function collect(c: Cluster, graph: FlowGraph): void {
  for (const m of c.members) {
    if (!isCluster(m)) graph.nodes.push(m);
    else collect(m, graph);
  }
}

function collectEdges(c: Cluster, out: GraphEdge[]): void {
  out.push(...c.edges);
  for (const m of c.members) if (isCluster(m)) collectEdges(m, out);
}

function collectClusters(c: Cluster, parents: string[], out: GraphClusterEntry[]): void {
  for (const m of c.members) {
    if (!isCluster(m)) continue;
    const uid = `cluster_${m.base}`;
    out.push({
      cluster: {
        uid, type: m.type,
        ...(m.relationType ? { relationType: m.relationType } : {}),
        ...(m.taskNode ? { taskNode: m.taskNode } : {}),
        ...(m.branchType ? { branchType: m.branchType } : {}),
      },
      nodes: m.members.map((n) => (isCluster(n) ? `cluster_${n.base}` : n.uid)),
      parents,
      start: m.root.uid,
      end: m.end.uid,
    });
    collectClusters(m, [...parents, uid], out);
  }
}

/**
 * The graph of a flow (with an execution's task runs when given). Work is linear in the flow's tasks, or in the
 * execution's task runs (bounded by MAX_TASK_RUNS_PER_EXECUTION), plus each expanded subflow once per uid.
 */
export function buildFlowGraph(flow: Flow, opts: GraphOptions = {}): GraphResult {
  const b = new Builder(opts);
  const root = b.newCluster('root', GRAPH_TYPES.cluster);
  b.fillFlow(root, flow, 0);
  const graph: FlowGraph = { nodes: [], edges: [], clusters: [] };
  collect(root, graph);
  collectEdges(root, graph.edges);
  collectClusters(root, [], graph.clusters);
  return { graph, missing: b.missing };
}
