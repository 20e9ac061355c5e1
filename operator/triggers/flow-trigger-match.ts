// Pure parts of the Flow trigger (`core.trigger.Flow`): which state transition of an execution is an event and its
// stable key, which triggers listen to it (`states`, self-trigger guard), the `trigger.*` variables of the started
// execution, and `preconditions` (newer Kestra) expressed as a MultipleCondition over the upstream flows.
import { dictFrom } from '../core/keyed.js';
import { isTerminal, type Execution, type ExecutionState, type Flow, type Trigger } from '../core/types.js';
import { normalizeType, TRIGGER_TYPES } from '../model/task-types.js';
import { FILTER_CONDITION, MULTIPLE_CONDITION, UPSTREAM_CONDITION } from './conditions/evaluator.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Kestra's default `states`: every terminal state. */
export const DEFAULT_STATES: readonly ExecutionState[] = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED', 'RETRIED'];

export const isFlowTrigger = (t: Trigger): boolean => normalizeType(t.type) === TRIGGER_TYPES.flow;

export function triggerStates(t: Trigger): readonly string[] {
  return Array.isArray(t.states) && t.states.length > 0 ? t.states.map((s) => String(s).toUpperCase()) : DEFAULT_STATES;
}

/**
 * Stable key of the execution's latest transition: the execution id for its first terminal state (so a Flow trigger
 * fires once per finished execution, also across restarts), `<id>#<n>` when it ends again after a restart, and
 * `<id>:<STATE>#<n>` for the n-th entry into a non-terminal state (PAUSED).
 */
export function transitionKey(exec: Execution): string {
  const current = exec.state.current;
  const histories = exec.state.histories ?? [];
  if (isTerminal(current)) {
    const n = histories.filter((h) => isTerminal(h.state)).length;
    return n <= 1 ? exec.id : `${exec.id}#${n}`;
  }
  return `${exec.id}:${current}#${histories.filter((h) => h.state === current).length}`;
}

/** When the latest transition happened (end date, or the date of the last state change). */
export function transitionDate(exec: Execution): string {
  const last = exec.state.histories?.[exec.state.histories.length - 1]?.date;
  return (isTerminal(exec.state.current) ? exec.state.endDate : undefined) ?? last ?? exec.state.startDate;
}

const labelMap = (exec: Execution): Record<string, string> => dictFrom((exec.labels ?? []).map((l) => [l.key, l.value] as const));

/** `trigger.*` of an execution started by a Flow trigger (Kestra's Flow.Output names, plus `labels`). */
export function flowTriggerVariables(exec: Execution): Record<string, unknown> {
  const runs = exec.taskRunList ?? [];
  return {
    executionId: exec.id,
    namespace: exec.namespace,
    flowId: exec.flowId,
    flowRevision: exec.flowRevision,
    state: exec.state.current,
    startDate: exec.state.startDate,
    ...(exec.state.endDate ? { endDate: exec.state.endDate } : {}),
    labels: labelMap(exec),
    executionLabels: labelMap(exec),
    outputs: exec.outputs ?? {},
    ...(runs.some((r) => r.state.current === 'FAILED') ? { firstFailedTaskId: runs.find((r) => r.state.current === 'FAILED')!.taskId } : {}),
    ...(runs.length ? { lastTaskId: runs[runs.length - 1]!.taskId } : {}),
  };
}

/**
 * Whether `flow`'s trigger may react to an execution of `exec` at all. A flow reacting to its own executions could
 * loop forever; Kestra allows it, we allow it only when the trigger names some conditions or preconditions (an
 * explicit choice, e.g. an ExecutionFlowCondition on itself with an ExecutionOutputsCondition to stop).
 */
export function mayReact(flow: Flow, trigger: Trigger, exec: Execution): boolean {
  if (!triggerStates(trigger).includes(exec.state.current)) return false;
  const own = exec.namespace === flow.namespace && exec.flowId === flow.id;
  const explicit = (Array.isArray(trigger.conditions) && trigger.conditions.length > 0) || isObj(trigger.preconditions);
  return !own || explicit;
}

/** One `preconditions.flows[]` entry as a condition: namespace, flow id, states (default SUCCESS) and labels all hold. */
function upstreamCondition(f: Obj): Obj {
  return {
    type: UPSTREAM_CONDITION,
    ...(typeof f.namespace === 'string' ? { namespace: f.namespace } : {}),
    ...(typeof f.flowId === 'string' ? { flowId: f.flowId } : {}),
    states: Array.isArray(f.states) && f.states.length ? f.states : ['SUCCESS'],
    ...(f.labels !== undefined ? { labels: f.labels } : {}),
  };
}

/**
 * `preconditions: {id, flows: [{namespace, flowId, states, labels}], where: [{id, operand, filters}], timeWindow:
 * {window, windowAdvance}, resetOnSuccess}` as one MultipleCondition: every upstream flow and every `where` entry
 * must be met by some execution inside the window.
 */
export function preconditionsCondition(pre: unknown): Obj | undefined {
  if (!isObj(pre)) return undefined;
  const flows = Array.isArray(pre.flows) ? pre.flows.filter(isObj) : [];
  const where = Array.isArray(pre.where) ? pre.where.filter(isObj) : [];
  if (flows.length === 0 && where.length === 0) return undefined;
  const tw = isObj(pre.timeWindow) ? pre.timeWindow : {};
  return {
    type: MULTIPLE_CONDITION,
    id: typeof pre.id === 'string' && pre.id ? `preconditions-${pre.id}` : 'preconditions',
    window: tw.window ?? 'P1D',
    windowAdvance: tw.windowAdvance ?? 'PT0S',
    resetOnSuccess: pre.resetOnSuccess !== false,
    conditions: Object.fromEntries([
      ...flows.map((f, i) => [`flow_${i}`, upstreamCondition(f)] as const),
      ...where.map((w, i) => [`where_${typeof w.id === 'string' ? w.id : i}`, { type: FILTER_CONDITION, operand: w.operand, filters: w.filters }] as const),
    ]),
  };
}
