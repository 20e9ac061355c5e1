// Subflow, and the child executions it shares with ForEachItem: requests rendered for the controller (deterministic
// ids), the bookkeeping of each child (a "slot"), and how a child's end is transmitted to the task run that waited.
import { boolProp, SUBFLOW_OUTPUTS_DEPRECATED, SUBFLOW_OUTPUTS_WITHOUT_WAIT, TRANSMIT_WITHOUT_WAIT } from '../model/index.js';
import { depthOverflow } from './budget.js';
import { derivedId } from './ids.js';
import type { ChildEnd, StepContext, SubflowRequest } from './engine-types.js';
import { FOR_EACH_ITEM_BATCH } from './flow-index.js';
import type { Resolution } from './flowables.js';
import { DISABLED_MESSAGE, mergeLabels } from './execution.js';
import { log, variablesFor } from './runs.js';
import { newState, transition } from './state.js';
import type { Label, Task, TaskRun, TaskRunState } from './types.js';
import { isTerminal } from './types.js';

function labelsOf(v: unknown): Label[] {
  if (!v) return [];
  if (Array.isArray(v)) return (v as Label[]).map((l) => ({ key: String(l.key), value: String(l.value) }));
  return Object.entries(v as Record<string, unknown>).map(([key, value]) => ({ key, value: String(value) }));
}

const flag = boolProp;

/** `wait` and `transmitFailed` as they act: ForEachItem waits and transmits by default; nothing is transmitted without `wait`. */
export function subflowSettings(task: Task): { wait: boolean; transmitFailed: boolean } {
  const batch = task.type === FOR_EACH_ITEM_BATCH;
  const wait = flag(task.wait, batch);
  return { wait, transmitFailed: wait && flag(task.transmitFailed, batch) };
}

/**
 * The bookkeeping of one child execution: a Subflow run's `flowableState` itself, or one entry of a ForEachItem
 * `_items` run's `flowableState.batches`.
 */
export interface ChildSlot {
  executionId?: string;
  requested?: boolean;
  created?: boolean;
  ended?: boolean;
  childState?: string;
  childOutputs?: Record<string, unknown>;
  childError?: string;
  /** Kept so that a restarted controller can create the child if the crash came first. */
  request?: SubflowRequest;
  /** Why the child could not be created (flow not found, inputs refused): the task run fails, as in Kestra. */
  error?: string;
  /** Attempts at this batch (a restart of a failed batch starts a new child). */
  attempt?: number;
}

/** The slots of a run with their child ids (empty for runs that start no child execution). */
export function childSlots(run: TaskRun): { slot: ChildSlot; executionId: string; iteration?: number }[] {
  const fs = run.flowableState;
  if (!fs) return [];
  if (Array.isArray(fs.batches)) {
    return (fs.batches as ChildSlot[]).flatMap((slot, iteration) => (slot.executionId ? [{ slot, executionId: slot.executionId, iteration }] : []));
  }
  return run.subflowExecutionId ? [{ slot: fs as ChildSlot, executionId: run.subflowExecutionId }] : [];
}

/** The children of a run that were asked for and whose end its parent has not heard of yet. */
export function pendingChildren(run: TaskRun): { slot: ChildSlot; executionId: string; iteration?: number }[] {
  return childSlots(run).filter((c) => c.slot.requested && !c.slot.ended && c.slot.error === undefined);
}

/** The slot a report about child `executionId` is for (a stale report, for an older child, finds none). */
export function slotFor(run: TaskRun, executionId: string, iteration?: number): ChildSlot | undefined {
  const fs = run.flowableState;
  if (Array.isArray(fs?.batches)) {
    const slot = iteration === undefined ? undefined : (fs.batches as ChildSlot[])[iteration];
    return slot?.executionId === executionId ? slot : undefined;
  }
  return run.subflowExecutionId === executionId ? ((run.flowableState ??= {}) as ChildSlot) : undefined;
}

/** Records a child's end in its slot. */
export function endSlot(slot: ChildSlot, child: ChildEnd): void {
  Object.assign(slot, { ended: true, created: true, childState: child.state, childOutputs: child.outputs ?? {} });
  if (child.error) slot.childError = child.error; else delete slot.childError;
}

/**
 * The state a child's end gives the task run that waited on it (Kestra's guess): its failure, kill or warning when
 * `transmitFailed`, else SUCCESS. A CANCELLED child counts as failed. A child that could not run because its flow is
 * disabled fails the task run whatever `transmitFailed` says (Kestra refuses to start it).
 */
export function transmittedState(slot: ChildSlot, transmitFailed: boolean): 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED' {
  if (slot.error !== undefined || slot.childError === DISABLED_MESSAGE) return 'FAILED';
  if (!transmitFailed) return 'SUCCESS';
  const s = slot.childState;
  if (s === 'FAILED' || s === 'CANCELLED') return 'FAILED';
  if (s === 'KILLED' || s === 'WARNING') return s;
  return 'SUCCESS';
}

/** What the parent's task run says of a child that did not succeed: its id, state and why. */
export function childFailure(slot: ChildSlot, executionId: string): string {
  const state = slot.childError === DISABLED_MESSAGE && slot.childState !== 'FAILED' ? 'FAILED' : String(slot.childState);
  return `Subflow execution '${executionId}' ended ${state}${slot.childError ? `: ${slot.childError}` : ''}`;
}

/** Renders a child request: target flow, inputs and labels (`extra` adds variables, e.g. a batch's `taskrun.items`). */
export function childRequest(
  ctx: StepContext, run: TaskRun, task: Task, executionId: string,
  extra: { taskrun?: Record<string, unknown>; iteration?: number; base?: Record<string, unknown> } = {},
): SubflowRequest {
  const base = extra.base ?? variablesFor(ctx, run, task);
  const vars = extra.taskrun ? { ...base, taskrun: { ...(base.taskrun as object), ...extra.taskrun } } : base;
  const namespace = ctx.deps.renderer.render(String(task.namespace), vars);
  const flowId = ctx.deps.renderer.render(String(task.flowId), vars);
  const inputs = (ctx.deps.renderer.renderTyped(task.inputs ?? {}, vars) ?? {}) as Record<string, unknown>;
  const own = labelsOf(ctx.deps.renderer.renderValue(task.labels, vars));
  const labels = flag(task.inheritLabels, false) ? mergeLabels(ctx.exec.labels, own) : own;
  const { wait } = subflowSettings(task);
  const scheduleDate = scheduleDateOf(ctx.deps.renderer.renderValue(task.scheduleDate, vars));
  return {
    taskRunId: run.id, taskId: run.taskId, taskType: task.type, executionId, namespace, flowId,
    ...(extra.iteration !== undefined ? { iteration: extra.iteration } : {}),
    ...(task.revision !== undefined ? { revision: Number(task.revision) } : {}),
    inputs, labels, wait,
    ...(scheduleDate ? { scheduleDate } : {}),
  };
}

/** An ISO 8601 date-time with its offset (Kestra's ZonedDateTime), optionally followed by a region in brackets. */
const ZONED_DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))(?:\[[\w/+-]{1,64}\])?$/;

/**
 * Subflow / ForEachItem `scheduleDate`, rendered: the date the child execution is created for (it stays CREATED until
 * then, as an execution with a `scheduleDate` does: engine `start`, work.ts `start-due`). Undefined when unset.
 */
export function scheduleDateOf(rendered: unknown): string | undefined {
  if (rendered === undefined || rendered === null || rendered === '') return undefined;
  const text = String(rendered).trim();
  const m = ZONED_DATE_TIME.exec(text);
  const ms = m ? Date.parse(m[1]!) : NaN;
  if (Number.isNaN(ms)) throw new Error(`scheduleDate: expected an ISO 8601 date-time with an offset (e.g. 2030-01-01T10:00:00+01:00), got '${text.slice(0, 100)}'`);
  return new Date(ms).toISOString();
}

/** The warnings Kestra's spellings earn when they are accepted but cannot act: logged once, at the request. */
export function settingWarnings(ctx: StepContext, run: TaskRun, task: Task): void {
  if (flag(task.transmitFailed, false) && !flag(task.wait, task.type === FOR_EACH_ITEM_BATCH)) {
    log(ctx, 'WARN', TRANSMIT_WITHOUT_WAIT, run);
  }
}

/** Deprecated Subflow `outputs`: why it cannot be honoured for this request, else undefined (then it rides along). */
function legacyOutputsRefusal(ctx: StepContext, request: SubflowRequest): string | undefined {
  if (request.namespace === ctx.exec.namespace) return undefined;
  return `Subflow property \`outputs\` (deprecated) renders its templates inside the subflow's execution: allowed only for a subflow of the same namespace (${ctx.exec.namespace} calls ${request.namespace}.${request.flowId}); declare \`outputs\` in that flow instead`;
}

function legacyOutputs(ctx: StepContext, run: TaskRun, task: Task, request: SubflowRequest, wait: boolean): string | undefined {
  const outputs = task.outputs;
  if (!outputs || typeof outputs !== 'object' || Object.keys(outputs).length === 0) return undefined;
  log(ctx, 'WARN', SUBFLOW_OUTPUTS_DEPRECATED, run);
  if (!wait) {
    log(ctx, 'WARN', SUBFLOW_OUTPUTS_WITHOUT_WAIT, run);
    return undefined;
  }
  const refused = legacyOutputsRefusal(ctx, request);
  if (refused) return refused;
  request.outputs = outputs as Record<string, unknown>;
  return undefined;
}

export function subflowResolver(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const fs = (run.flowableState ??= {}) as ChildSlot;
  const { wait, transmitFailed } = subflowSettings(task);
  if (typeof fs.error === 'string') return { create: [], state: 'FAILED', error: fs.error };
  const childId = run.subflowExecutionId;
  if (fs.ended && childId) {
    const childState = String(fs.childState);
    const state = transmittedState(fs, transmitFailed);
    if (state === 'FAILED' || state === 'KILLED') {
      return { create: [], state: 'FAILED', outputs: { executionId: childId, state: childState, ...(wait ? { outputs: fs.childOutputs ?? {} } : {}) }, error: childFailure(fs, childId) };
    }
    if (!wait) return { create: [], state: 'SUCCESS', outputs: { executionId: childId } };
    const outputs = { executionId: childId, state: childState, outputs: fs.childOutputs ?? {} };
    if (state === 'WARNING') log(ctx, 'WARN', childFailure(fs, childId), run);
    return { create: [], state, outputs };
  }
  if (!fs.requested) {
    const id = derivedId(ctx.exec.id, run.id, String(run.attempts.length + 1));
    const request = childRequest(ctx, run, task, id);
    const tooDeep = depthOverflow(ctx, run, task, `${request.namespace}.${request.flowId}`);
    if (tooDeep) return { create: [], state: 'FAILED', error: tooDeep.message };
    settingWarnings(ctx, run, task);
    const refused = legacyOutputs(ctx, run, task, request, wait);
    if (refused) return { create: [], state: 'FAILED', error: refused };
    run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
    run.subflowExecutionId = id;
    fs.requested = true;
    delete fs.created;
    fs.request = request;
    ctx.actions.push({ type: 'create-subflow', request });
    return { create: [] };
  }
  if (fs.created && !wait) return { create: [], state: 'SUCCESS', outputs: { executionId: childId } };
  return { create: [] };
}

/** Ends the live attempt of a subflow-like run along with the run (attempt states mirror the run). */
export function endSubflowAttempt(ctx: StepContext, run: TaskRun): void {
  const att = run.attempts[run.attempts.length - 1];
  if (att && !isTerminal(att.state.current) && isTerminal(run.state.current)) transition(att.state, run.state.current, ctx.deps.now);
}
