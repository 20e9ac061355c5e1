// Creating executions: a new one for a flow (state CREATED, or FAILED at once for a disabled flow) and replays.
import { newState, transition } from './state.js';
import type { Execution, ExecutionMetadata, ExecutionTrigger, Flow, Label, ParentLink, TaskRun } from './types.js';
import { isSystemLabel, isTerminal } from './types.js';

export const DISABLED_MESSAGE = 'Cannot execute a flow which is disabled';

export function flowLabels(flow: Flow): Label[] {
  if (!flow.labels) return [];
  if (Array.isArray(flow.labels)) return flow.labels.map((l) => ({ key: l.key, value: String(l.value) }));
  return Object.entries(flow.labels).map(([key, value]) => ({ key, value: String(value) }));
}

/** Labels merged by key, later lists winning. */
export function mergeLabels(...lists: (Label[] | undefined)[]): Label[] {
  const map = new Map<string, string>();
  for (const list of lists) for (const l of list ?? []) map.set(l.key, l.value);
  return [...map].map(([key, value]) => ({ key, value }));
}

/** The execution's metadata; a record written before metadata existed counts as the first attempt, created at its start. */
export function metadataOf(exec: Pick<Execution, 'metadata' | 'state'>): ExecutionMetadata {
  const m = exec.metadata;
  const attemptNumber = typeof m?.attemptNumber === 'number' && Number.isSafeInteger(m.attemptNumber) && m.attemptNumber > 0 ? m.attemptNumber : 1;
  const originalCreatedDate = typeof m?.originalCreatedDate === 'string' && Number.isFinite(Date.parse(m.originalCreatedDate)) ? m.originalCreatedDate : exec.state.startDate;
  return { attemptNumber, originalCreatedDate };
}

/**
 * The labels of a terminated execution set by a caller (Kestra's rule): `requested` replaces the caller's labels, the
 * existing system labels stay; a system label that is not already there, as it is, is refused (`offending`).
 */
export function replaceLabels(existing: Label[], requested: Label[]): { labels: Label[] } | { offending: Label } {
  const system = existing.filter((l) => isSystemLabel(l.key));
  const offending = requested.find((l) => isSystemLabel(l.key) && !system.some((s) => s.key === l.key && s.value === l.value));
  if (offending) return { offending };
  const kept = system.filter((s) => !requested.some((l) => l.key === s.key));
  return { labels: mergeLabels(requested, kept).filter((l) => l.key !== '' || l.value !== '') };
}

/** Subflow/ForEachItem ancestors of an execution (0 for a root; a malformed value counts as 0, never below). */
export function depthOf(exec: Pick<Execution, 'depth'>): number {
  const d = exec.depth;
  return typeof d === 'number' && Number.isSafeInteger(d) && d > 0 ? d : 0;
}

/** Depth of the executions a Subflow or ForEachItem of `parent` creates. */
export const childDepth = (parent: Pick<Execution, 'depth'>): number => depthOf(parent) + 1;

export function newExecution(a: {
  id: string; flow: Flow; inputs: Record<string, unknown>; labels?: Label[]; trigger?: ExecutionTrigger;
  parent?: ParentLink; originalId?: string; depth?: number; legacyOutputs?: Record<string, unknown>; now: Date;
  /** Flow-level retry: the metadata of the new execution (default: attempt 1, created now). */
  metadata?: ExecutionMetadata;
  /** Not started before this date (ISO): a Subflow's `scheduleDate`, a delayed flow retry. */
  scheduleDate?: string;
}): Execution {
  const exec: Execution = {
    id: a.id,
    namespace: a.flow.namespace,
    flowId: a.flow.id,
    flowRevision: a.flow.revision ?? 1,
    state: newState('CREATED', a.now),
    originalId: a.originalId ?? a.id,
    labels: mergeLabels(flowLabels(a.flow), a.labels),
    inputs: a.inputs,
    taskRunList: [],
    metadata: a.metadata ?? { attemptNumber: 1, originalCreatedDate: a.now.toISOString() },
  };
  if (a.trigger) exec.trigger = a.trigger;
  if (a.parent) exec.parent = a.parent;
  if (a.depth) exec.depth = depthOf(a);
  if (a.legacyOutputs && Object.keys(a.legacyOutputs).length) exec.legacyOutputs = a.legacyOutputs;
  if (a.scheduleDate) exec.scheduleDate = a.scheduleDate;
  if (a.flow.disabled) {
    transition(exec.state, 'FAILED', a.now);
    exec.error = DISABLED_MESSAGE;
  }
  return exec;
}

/**
 * An execution created without a flow revision (an Execution resource written by hand with kubectl) is bound to the
 * flow's latest revision when it starts: its inputs resolved against that revision (`resolved`), flow labels merged;
 * or it fails with why (flow missing, inputs invalid). Pure: the caller loads the flow and resolves the inputs.
 */
export function bindToRevision(exec: Execution, flow: Flow | undefined, resolved: { inputs: Record<string, unknown> } | { error: string }, now: Date): Execution {
  const next: Execution = structuredClone(exec);
  const failure = !flow ? `Flow ${exec.namespace}.${exec.flowId} not found` : 'error' in resolved ? resolved.error : flow.disabled ? DISABLED_MESSAGE : undefined;
  if (flow) {
    next.flowRevision = flow.revision ?? 1;
    next.labels = mergeLabels(flowLabels(flow), exec.labels);
    if ('inputs' in resolved) next.inputs = resolved.inputs;
  }
  if (failure) {
    transition(next.state, 'FAILED', now);
    next.error = failure;
  }
  return next;
}

/**
 * A replay is a new execution of the same flow revision with the same inputs. With `taskRunId`, task runs that
 * finished before that one are kept (their outputs stay readable) and the execution resumes from it.
 */
export function replayExecution(a: { original: Execution; id: string; taskRunId?: string; now: Date }): Execution {
  const { original } = a;
  const exec: Execution = {
    id: a.id,
    namespace: original.namespace,
    flowId: original.flowId,
    flowRevision: original.flowRevision,
    state: newState('CREATED', a.now),
    originalId: original.originalId,
    labels: original.labels.map((l) => ({ ...l })),
    inputs: structuredClone(original.inputs),
    taskRunList: [],
    // A replay starts its own flow-retry chain.
    metadata: { attemptNumber: 1, originalCreatedDate: a.now.toISOString() },
  };
  if (original.trigger) exec.trigger = structuredClone(original.trigger);
  if (depthOf(original)) exec.depth = depthOf(original);
  if (!a.taskRunId) return exec;
  const list = original.taskRunList;
  const target = list.findIndex((r) => r.id === a.taskRunId);
  if (target < 0) throw new Error(`Task run '${a.taskRunId}' does not exist in execution '${original.id}'`);
  const byId = new Map(list.map((r) => [r.id, r]));
  const ancestors = new Set<string>();
  for (let p = list[target]!.parentTaskRunId; p; p = byId.get(p)?.parentTaskRunId) ancestors.add(p);
  const idMap = new Map<string, string>();
  const kept: TaskRun[] = [];
  list.slice(0, target).forEach((run, i) => {
    const isAncestor = ancestors.has(run.id);
    if (!isAncestor && (!isTerminal(run.state.current) || (run.parentTaskRunId && !idMap.has(run.parentTaskRunId)))) return;
    const copy = structuredClone(run);
    copy.id = `${a.id.slice(0, 12)}${String(i).padStart(10, '0')}`;
    idMap.set(run.id, copy.id);
    copy.executionId = a.id;
    if (copy.parentTaskRunId) copy.parentTaskRunId = idMap.get(copy.parentTaskRunId);
    if (isAncestor) {
      copy.state = newState('RUNNING', a.now);
      copy.attempts = [];
      delete copy.outputs;
    }
    kept.push(copy);
  });
  exec.taskRunList = kept;
  return exec;
}

/**
 * Why an ended execution failed, for the task run that waited on it: its own error (a disabled flow, a limit, its
 * outputs), else its first failed task run's `<taskId>: <error>`, else undefined.
 */
export function failureReason(exec: Pick<Execution, 'error' | 'taskRunList'>): string | undefined {
  if (exec.error) return exec.error;
  const run = exec.taskRunList.find((r) => r.state.current === 'FAILED' && r.error)
    ?? exec.taskRunList.find((r) => r.error && (r.state.current === 'KILLED' || r.state.current === 'WARNING'));
  return run ? `${run.taskId}: ${run.error}` : undefined;
}
