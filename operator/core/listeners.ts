// Kestra's deprecated flow `listeners`: which of them run once an execution ended. A listener runs when all its
// conditions hold for the ended execution; the conditions a listener may hold are the execution ones (status, flow,
// namespace, labels, and Not/Or of these), checked with the trigger conditions' own pure functions. Other condition
// types are refused when the flow is saved (model/semantic-listeners.ts), so none is ignored here.
import type { StepContext } from './engine-types.js';
import { log, variablesFor } from './runs.js';
import type { Ending } from './types.js';
import { executionFlow, executionLabels, executionNamespace, executionStatus, type ExecutionView } from './execution-conditions.js';
import { LISTENER_CONDITIONS, type ListenerCondition, normalizeType, PREFIX } from '../model/task-types.js';

type Obj = Record<string, unknown>;
type Check = (c: Obj, view: ExecutionView, render: (v: unknown) => unknown) => boolean;

const children = (c: Obj): Obj[] => (Array.isArray(c.conditions) ? c.conditions.filter((x): x is Obj => !!x && typeof x === 'object') : []);

const CHECKS: Record<ListenerCondition, Check> = {
  ExecutionStatusCondition: (c, view, r) => executionStatus(view, r(c.in), r(c.notIn)),
  ExecutionFlowCondition: (c, view, r) => executionFlow(view, r(c.namespace), r(c.flowId)),
  ExecutionNamespaceCondition: (c, view, r) => executionNamespace(view, r(c.namespace), r(c.comparison), c.prefix),
  ExecutionLabelsCondition: (c, view, r) => executionLabels(view, r(c.labels)),
  NotCondition: (c, view, r) => !children(c).some((x) => holds(x, view, r)),
  OrCondition: (c, view, r) => children(c).some((x) => holds(x, view, r)),
};

/** The condition's short name when a listener may hold it (`ExecutionStatusCondition`), else undefined. */
export function listenerConditionName(type: unknown): ListenerCondition | undefined {
  if (typeof type !== 'string') return undefined;
  const t = normalizeType(type);
  const prefix = `${PREFIX}core.condition.`;
  const name = t.startsWith(prefix) ? t.slice(prefix.length) : '';
  return (LISTENER_CONDITIONS as readonly string[]).includes(name) ? (name as ListenerCondition) : undefined;
}

function holds(c: Obj, view: ExecutionView, render: (v: unknown) => unknown): boolean {
  const name = listenerConditionName(c.type);
  if (!name) throw new Error(`condition type '${String(c.type)}' cannot be checked by a listener`);
  return CHECKS[name](c, view, render);
}

/** Indexes of the flow's listeners whose conditions all hold for the execution ending in `state`. */
export function matchingListeners(ctx: StepContext, state: Ending['state']): number[] {
  const { exec, flow, deps } = ctx;
  const view: ExecutionView = { namespace: exec.namespace, flowId: exec.flowId, labels: exec.labels, outputs: exec.outputs, state: { current: state } };
  const base = variablesFor(ctx, undefined);
  const vars = { ...base, execution: { ...(base.execution as Obj), state } };
  const render = (v: unknown): unknown => (typeof v === 'string' ? deps.renderer.renderTyped(v, vars) : v);
  const out: number[] = [];
  (flow.listeners ?? []).forEach((listener, i) => {
    try {
      if ((listener.conditions ?? []).every((c) => holds(c, view, render))) out.push(i);
    } catch (err) {
      log(ctx, 'ERROR', `listeners[${i}]: its conditions could not be checked, it does not run: ${(err as Error).message}`);
    }
  });
  return out;
}
