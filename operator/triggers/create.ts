// Starting an execution from a trigger: render the trigger's `inputs` and `labels` against the event, resolve the
// flow's inputs, and durably create the execution. With `dedupeKey` the execution id is derived from (flow, trigger,
// key), so firing twice for the same event (after a crash, on a second replica) still creates one execution.
import type { Renderer } from '../core/engine-types.js';
import { newExecution } from '../core/execution.js';
import { derivedId, newId } from '../core/ids.js';
import type { Execution, Flow, Label, Trigger } from '../core/types.js';
import { resolveInputs } from '../model/index.js';
import type { StoredExecution, Stores } from '../store/types.js';
import { fileReadDenied } from '../tenancy/files.js';
import { NO_GRANTS, type NamespaceGrants } from '../tenancy/namespaces.js';

export interface TriggeredStart {
  flow: Flow;
  trigger: Trigger;
  /** The `trigger.*` variables of the new execution. */
  variables: Record<string, unknown>;
  dedupeKey?: string;
  /** Inputs given on top of the trigger's rendered `inputs` (backfill inputs). */
  inputs?: Record<string, unknown>;
  labels?: Label[];
  now: Date;
}

/** Variables trigger properties are rendered with. */
export function triggerRenderVars(flow: Flow, variables: Record<string, unknown>): Record<string, unknown> {
  return { flow: { id: flow.id, namespace: flow.namespace, revision: flow.revision }, trigger: variables, vars: flow.variables ?? {} };
}

function labelList(raw: unknown): Label[] {
  if (Array.isArray(raw)) return raw.filter((l): l is Label => !!l && typeof l === 'object' && 'key' in l).map((l) => ({ key: String(l.key), value: String(l.value) }));
  if (raw && typeof raw === 'object') return Object.entries(raw).map(([key, value]) => ({ key, value: String(value) }));
  return [];
}

/** FILE inputs of a triggered execution: files of its namespace (or a granted one), or of the execution that triggered it. */
function triggerFileRule(start: TriggeredStart, grants: NamespaceGrants): (uri: string) => string | undefined {
  const v = start.variables;
  const source = typeof v.executionId === 'string' && typeof v.namespace === 'string' && typeof v.flowId === 'string'
    ? [{ namespace: v.namespace, flowId: v.flowId, id: v.executionId }] : [];
  return (uri) => fileReadDenied({ namespace: start.flow.namespace, related: () => source }, uri, grants);
}

/** Builds the execution (throws a ValidationError naming `inputs.<id>` when rendered inputs do not fit the flow). */
export function buildTriggeredExecution(start: TriggeredStart, renderer: Renderer, grants: NamespaceGrants = NO_GRANTS): Execution {
  const { flow, trigger } = start;
  const vars = triggerRenderVars(flow, start.variables);
  const rendered = trigger.inputs && typeof trigger.inputs === 'object' ? renderer.renderValue(trigger.inputs as Record<string, unknown>, vars) : {};
  const inputs = resolveInputs(flow.inputs, { ...rendered, ...(start.inputs ?? {}) }, { fileUri: triggerFileRule(start, grants) });
  const labels = [...labelList(renderer.renderValue(trigger.labels, vars)), ...(start.labels ?? [])];
  const id = start.dedupeKey !== undefined ? derivedId(flow.namespace, flow.id, trigger.id, start.dedupeKey) : newId();
  return newExecution({
    id, flow, inputs, now: start.now, ...(labels.length ? { labels } : {}),
    trigger: { id: trigger.id, type: trigger.type, variables: start.variables },
  });
}

/** Creates the execution durably (idempotent when `dedupeKey` is given) and returns the stored record. */
export async function startTriggeredExecution(stores: Stores, start: TriggeredStart, renderer: Renderer, grants: NamespaceGrants = NO_GRANTS): Promise<StoredExecution> {
  return stores.executions.create(buildTriggeredExecution(start, renderer, grants));
}

/** Whether a trigger may fire: neither it nor its flow is disabled (in the source or through the API). */
export function triggerActive(flow: Flow, trigger: Trigger, apiDisabled = false): boolean {
  return !flow.disabled && !trigger.disabled && !apiDisabled;
}
