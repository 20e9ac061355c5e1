// Builds the variables templates see (execution, flow, inputs, outputs, vars, namespace, trigger, task, taskrun, parents).
// Pure: derived from the flow and the execution record only. Every object keyed by a name a flow author chose (input
// ids, loop values, task ids, label keys) is prototype-free (keyed.ts), so no such name can pollute a prototype.
import { dict, dictFrom, lazyProperty } from './keyed.js';
import { logOutputs, type OutputsAt, type OutputsLog, type RunIndex, type RunLookup, snapshotIndex } from './run-index.js';
import type { Execution, Flow, Task, TaskRun } from './types.js';

/**
 * Reads an input's value as stored in clear: SECRET values, and texts of other inputs holding a known secret, are
 * encrypted at rest (operator/secrets). Injected by the edges that hold the key (the controller, the task runner);
 * returns `stored` itself when nothing in it is encrypted. Without it, templates see the stored form.
 */
export type OpenSecret = (execution: Execution, inputId: string, stored: unknown) => unknown;

/** The execution's inputs as templates see them: every input opened (`open`); the same object when nothing was sealed. */
export function openInputs(execution: Execution, open?: OpenSecret): Record<string, unknown> {
  const inputs = execution.inputs ?? {};
  if (!open) return inputs;
  let out: Record<string, unknown> | undefined;
  for (const [id, stored] of Object.entries(inputs)) {
    const opened = open(execution, id, stored);
    if (opened === stored) continue;
    out ??= { ...inputs };
    out[id] = opened;
  }
  return out ?? inputs;
}

/** Dotted input ids (`a.b`) are readable both as `inputs['a.b']` and `inputs.a.b`. */
export function nestInputs(inputs: Record<string, unknown>): Record<string, unknown> {
  const out = dictFrom(Object.entries(inputs));
  for (const [key, value] of Object.entries(inputs)) {
    if (!key.includes('.')) continue;
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) {
      const next = Object.hasOwn(node, p) ? node[p] : undefined;
      // A value that is not a prototype-free map (a scalar, a list, a parsed JSON object) is replaced by one.
      if (next === null || typeof next !== 'object' || Object.getPrototypeOf(next) !== null) {
        node[p] = next !== null && typeof next === 'object' && !Array.isArray(next) ? dictFrom(Object.entries(next)) : dict();
      }
      node = node[p] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]!] = value;
  }
  return out;
}

/** Loop values from the outermost loop down to this run (runs created by a loop carry `value`). */
export function valuePath(runsById: RunLookup<TaskRun>, run: TaskRun): string[] {
  const values: string[] = [];
  for (let r: TaskRun | undefined = run; r; r = r.parentTaskRunId ? runsById.get(r.parentTaskRunId) : undefined) {
    if (r.value !== undefined) values.unshift(r.value);
  }
  return values;
}

/** The container a path step leads to, made (prototype-free) when missing or when a value sits there. */
function childNode(node: Record<string, unknown>, key: string): Record<string, unknown> {
  const cur = Object.hasOwn(node, key) ? node[key] : undefined;
  if (cur !== null && typeof cur === 'object' && Object.getPrototypeOf(cur) === null) return cur as Record<string, unknown>;
  return (node[key] = dict());
}

/** Puts a run's outputs at `<taskId>` or `<taskId>[<loop value>]...` of an outputs tree. */
function placeOutputs(tree: Record<string, unknown>, byId: RunLookup<TaskRun>, run: TaskRun): void {
  if (!run.outputs) return;
  const path = valuePath(byId, run);
  if (path.length === 0) { tree[run.taskId] = run.outputs; return; }
  let node = childNode(tree, run.taskId);
  for (const v of path.slice(0, -1)) node = childNode(node, v);
  node[path[path.length - 1]!] = run.outputs;
}

/**
 * `outputs.<taskId>` (or `outputs.<taskId>[<loop value>]...` inside loops) for every run that has outputs (later runs
 * win). Built once per index: a record snapshot's tree is shared by every attempt launched from it. Each task id's
 * branch is made on first read (keyed.ts lazyProperty) from the runs with outputs then: a template reads a few of
 * them, and placing the outputs of 100,000 runs took ~0.3 s in each step that rendered one. Where those runs are comes
 * from the index's log (run-index.ts `withOutputs`), handed on from step to step: the tree of a step costs its task
 * ids, not a walk of its runs. The keys, their order and every value read are those of the tree placed whole.
 */
export function buildOutputs(execution: Execution, index: RunIndex = snapshotIndex(execution)): Record<string, unknown> {
  if (index.outputs) return index.outputs;
  const log = (index.withOutputs ??= outputsLog(execution.taskRunList));
  const list = execution.taskRunList;
  const tree = dict();
  // Task ids in the order of their first run with outputs in the run list, as a walk of it places them.
  for (const [taskId, first] of [...log].map(([id, e]) => [id, e.first] as const).sort((a, b) => a[1] - b[1])) {
    lazyProperty(tree, taskId, () => branchOf(taskId, runsWithOutputs(list, log.get(taskId)!), index.byId));
  }
  return (index.outputs = tree);
}

/** The log of a walk of the run list: where the runs with outputs are, by task id. */
function outputsLog(runs: readonly TaskRun[]): OutputsLog {
  const log: OutputsLog = new Map();
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    if (run.outputs === undefined) continue;
    const e = log.get(run.taskId);
    if (e) { e.at.push(i); e.length++; } else log.set(run.taskId, { at: [i], length: 1, first: i });
  }
  return log;
}

/** The runs at the positions of a log entry that have outputs, each once, in run-list order. */
function runsWithOutputs(list: readonly TaskRun[], e: OutputsAt): TaskRun[] {
  const at = e.at.slice(0, e.length).sort((a, b) => a - b);
  const runs: TaskRun[] = [];
  for (let k = 0; k < at.length; k++) {
    if (k > 0 && at[k] === at[k - 1]) continue;
    const run = list[at[k]!];
    if (run?.outputs !== undefined) runs.push(run);
  }
  return runs;
}

/** The outputs tree's branch of one task id: its runs' outputs placed in creation order. */
function branchOf(taskId: string, runs: readonly TaskRun[], byId: RunLookup<TaskRun>): unknown {
  const holder = dict();
  for (const run of runs) placeOutputs(holder, byId, run);
  return holder[taskId];
}

/**
 * Sets a run's outputs and keeps the index in line: a run that had none is added to its log; in a tree built already,
 * a branch not made yet reads them from the run list when it is made, a branch made (or a task id new to the tree)
 * is given them at their path.
 */
export function setRunOutputs(index: RunIndex, run: TaskRun, outputs: Record<string, unknown>): void {
  const had = run.outputs !== undefined;
  run.outputs = outputs;
  const at = had ? undefined : index.places.get(run.id)?.list;
  if (at !== undefined) logOutputs(index, run.taskId, at);
  const tree = index.outputs;
  if (!tree) return;
  const desc = Object.getOwnPropertyDescriptor(tree, run.taskId);
  if (desc?.get) return; // not made yet: made from the log and the run list, which hold this run
  placeOutputs(tree, index.byId, run);
}

function taskrunVars(run: TaskRun, byId: RunLookup<TaskRun>) {
  let value: string | undefined;
  for (let r: TaskRun | undefined = run; r && value === undefined; r = r.parentTaskRunId ? byId.get(r.parentTaskRunId) : undefined) value = r.value;
  return {
    id: run.id,
    startDate: run.state.startDate,
    value: value ?? null,
    items: run.items ?? null,
    iteration: run.iteration ?? null,
    parentId: run.parentTaskRunId ?? null,
    attemptsCount: Math.max(0, run.attempts.length - 1),
  };
}

/**
 * The variables of a template rendered for `run` (or for the execution). `index` is the live index of an engine step;
 * without it the record is taken as a snapshot (indexed once, see run-index.ts). `open` reads encrypted inputs in clear.
 */
export function buildVariables(
  flow: Flow, execution: Execution, run?: TaskRun, task?: Task,
  { open, index = snapshotIndex(execution) }: { open?: OpenSecret; index?: RunIndex } = {},
): Record<string, unknown> {
  const vars: Record<string, unknown> = {
    flow: { id: flow.id, namespace: flow.namespace, revision: flow.revision ?? execution.flowRevision },
    execution: {
      id: execution.id, startDate: execution.state.startDate, originalId: execution.originalId, state: execution.ending?.state ?? execution.state.current,
    },
    labels: dictFrom(execution.labels.map((l) => [l.key, l.value] as const)),
    inputs: nestInputs(openInputs(execution, open)),
    // Built here, not on first read: an accessor on the variables made each rendering ~3x slower (21 µs against 6-9 µs
    // for a 3-task record, docs/performance.md), far more than the walk it saves once per step of a wide loop.
    outputs: buildOutputs(execution, index),
    vars: flow.variables ?? {},
    trigger: execution.trigger?.variables ?? {},
  };
  // Kestra's namespace variables (`namespace.<name>`): only when the flow's namespace (or a parent) is stored.
  if (flow.namespaceContext) vars.namespace = flow.namespaceContext.variables;
  if (!run) return vars;
  const { byId } = index;
  vars.task = { id: run.taskId, type: task?.type ?? null };
  vars.taskrun = taskrunVars(run, byId);
  const parents: Record<string, unknown>[] = [];
  for (let p = run.parentTaskRunId ? byId.get(run.parentTaskRunId) : undefined; p; p = p.parentTaskRunId ? byId.get(p.parentTaskRunId) : undefined) {
    parents.push({ taskrun: taskrunVars(p, byId), task: { id: p.taskId } });
  }
  vars.parents = parents;
  vars.parent = parents[0] ?? null;
  return vars;
}
