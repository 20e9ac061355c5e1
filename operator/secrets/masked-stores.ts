// The masking layer over the stores, applied once where text is persisted, whoever produced it: execution records
// (inputs sealed first: SECRET ones, and any input text holding a known secret; then labels, inputs, outputs, task-run values, outputs, errors and engine bookkeeping,
// trigger variables and the execution error masked), log lines and KV values. Every home composes its stores with it
// (embedded main, the cluster operator and API, the task runner).
import type { TaskOutcome } from '../core/engine-types.js';
import type { Execution, Input, TaskRun } from '../core/types.js';
import type { ExecutionStore, FlowStore, KVStore, LogStore, StoredExecution, Stores } from '../store/types.js';
import type { SecretLayer } from './layer.js';
import type { Masker } from './masker.js';
import { isSealed } from './sealed.js';

/** `inner` with some members replaced; the others read from (and methods bound to) `inner`, whatever its class. */
function override<T extends object>(inner: T, members: Partial<T>): T {
  return new Proxy(inner, {
    get(target, p) {
      if (Object.hasOwn(members, p)) return (members as Record<PropertyKey, unknown>)[p];
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const VALUES_ONLY = { keys: false } as const;

/** Words of the engine's own in a run's bookkeeping (pause status, a child's state): never masked. */
const ENGINE_WORDS = ['status', 'childState', 'onExpiry'] as const;
/** Identifiers of a Subflow request (what a restarted controller creates the child from): never masked. */
const REQUEST_IDS = ['taskRunId', 'taskId', 'taskType', 'iteration', 'executionId', 'namespace', 'flowId', 'revision'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A run's engine bookkeeping with what flows put in it masked (loop values, Subflow inputs and labels, resume inputs),
 * but the decisions the engine reads back kept: its own words, a Switch case that matched (a key of the flow source,
 * so no secret), a Subflow request's identifiers.
 */
function maskBookkeeping(fs: Record<string, unknown> | undefined, m: Masker, keep?: RequestKeeper): Record<string, unknown> | undefined {
  const masked = m.maskDeep(fs, VALUES_ONLY);
  if (!fs || masked === fs) return fs;
  const sealInputs: RequestSealer | undefined = keep && ((inputs, iteration) => keep.layer.sealRequestInputs(keep.executionId, keep.runId, iteration, inputs));
  for (const k of ENGINE_WORDS) if (Object.hasOwn(fs, k)) masked![k] = fs[k];
  if (isObject(fs.switch) && fs.switch.defaults === false) masked!.switch = fs.switch;
  keepRequestIds(fs, masked!, sealInputs);
  // ForEachItem `_items`: one slot per batch, each with the same engine words and request as a Subflow's.
  if (Array.isArray(fs.batches) && Array.isArray(masked!.batches)) {
    masked!.batches = (masked!.batches as unknown[]).map((m, i) => {
      const orig = (fs.batches as unknown[])[i];
      if (!isObject(m) || !isObject(orig) || m === orig) return m;
      const slot = { ...m };
      for (const k of [...ENGINE_WORDS, 'executionId'] as const) if (Object.hasOwn(orig, k)) slot[k] = orig[k];
      keepRequestIds(orig, slot, sealInputs && ((inputs) => sealInputs(inputs, i)));
      return slot;
    });
  }
  return masked;
}

/** Seals the inputs of a run's kept Subflow request (of ForEachItem batch `iteration`): SecretLayer.sealRequestInputs. */
type RequestSealer = (inputs: unknown, iteration?: number) => unknown;
/** The layer (with a key) and the run whose kept requests' inputs are sealed. */
interface RequestKeeper { layer: SecretLayer; executionId: string; runId: string }

function keepRequestIds(orig: Record<string, unknown>, masked: Record<string, unknown>, sealInputs?: (inputs: unknown) => unknown): void {
  if (!isObject(orig.request) || !isObject(masked.request)) return;
  const request = { ...masked.request };
  for (const k of REQUEST_IDS) if (Object.hasOwn(orig.request, k)) request[k] = orig.request[k];
  // With a key, the inputs are sealed rather than masked: a child created from the request after a crash gets them.
  if (sealInputs && Object.hasOwn(orig.request, 'inputs')) request.inputs = sealInputs(orig.request.inputs);
  masked.request = request;
}

function maskRun(run: TaskRun, m: Masker, layer: SecretLayer | undefined, executionId: string): TaskRun {
  const value = run.value === undefined ? undefined : m.mask(run.value);
  const outputs = m.maskDeep(run.outputs);
  const error = run.error === undefined ? undefined : m.mask(run.error);
  const flowableState = maskBookkeeping(run.flowableState, m, layer?.box ? { layer, executionId, runId: run.id } : undefined);
  if (value === run.value && outputs === run.outputs && error === run.error && flowableState === run.flowableState) return run;
  return { ...run, ...(value !== undefined ? { value } : {}), ...(outputs ? { outputs } : {}), ...(error !== undefined ? { error } : {}), ...(flowableState ? { flowableState } : {}) };
}

/**
 * The record with every text a flow, a task or a caller put in it masked: labels, inputs (not the sealed values; with
 * a key, `SecretLayer.sealInputs` has sealed every input text this would change), outputs, trigger variables, the error, and each task run's loop value, outputs, error and bookkeeping.
 * Identifiers, states and dates are the engine's and stay. With `layer` and its key, a kept Subflow request's inputs are
 * sealed instead (SecretLayer.sealRequestInputs). The same record when nothing changed.
 */
export function maskExecution(exec: Execution, m: Masker, layer?: SecretLayer): Execution {
  if (m.size === 0) return exec;
  const labels = m.maskDeep(exec.labels, VALUES_ONLY);
  const inputs = m.maskDeep(exec.inputs, { keep: isSealed });
  const outputs = m.maskDeep(exec.outputs);
  const variables = m.maskDeep(exec.trigger?.variables);
  const error = exec.error === undefined ? undefined : m.mask(exec.error);
  let runs: TaskRun[] | undefined;
  exec.taskRunList.forEach((run, i) => {
    const masked = maskRun(run, m, layer, exec.id);
    if (masked === run) return;
    runs ??= [...exec.taskRunList];
    runs[i] = masked;
  });
  if (labels === exec.labels && inputs === exec.inputs && outputs === exec.outputs && variables === exec.trigger?.variables
    && error === exec.error && !runs) return exec;
  const out: Execution = { ...exec, labels, inputs, taskRunList: runs ?? exec.taskRunList };
  if (outputs !== undefined) out.outputs = outputs;
  if (error !== undefined) out.error = error;
  if (exec.trigger) out.trigger = { ...exec.trigger, ...(variables !== undefined ? { variables } : {}) };
  return out;
}

/** A record as the store keeps it: its inputs sealed (`defs`: its flow revision's inputs), then masked. */
export function storedForm(layer: SecretLayer, exec: Execution, defs: Input[] | undefined): Execution {
  const sealed = layer.sealInputs(exec, defs);
  return maskExecution(sealed, layer.masker(sealed.id), layer);
}

/** A task attempt's outcome with its outputs and error masked (the runner's result file). */
export function maskOutcome(outcome: TaskOutcome, m: Masker): TaskOutcome {
  if (m.size === 0) return outcome;
  const out: TaskOutcome = { ...outcome };
  if (outcome.outputs) out.outputs = m.maskDeep(outcome.outputs);
  if (outcome.error !== undefined) out.error = m.mask(outcome.error);
  if (outcome.executionLabels) out.executionLabels = m.maskDeep(outcome.executionLabels, VALUES_ONLY);
  return out;
}

const MAX_CACHED_FLOWS = 1000;

function maskedExecutions(inner: ExecutionStore, flows: FlowStore, layer: SecretLayer): ExecutionStore {
  // Input declarations by flow revision (revisions never change).
  const inputsOf = new Map<string, Input[] | undefined>();
  const declared = async (exec: Execution): Promise<Input[] | undefined> => {
    if (!(exec.flowRevision >= 1)) return undefined; // not bound to a revision yet: its inputs are resolved (and sealed) when it is
    const key = JSON.stringify([exec.namespace, exec.flowId, exec.flowRevision]);
    if (inputsOf.has(key)) return inputsOf.get(key);
    const rec = await flows.get(exec.namespace, exec.flowId, exec.flowRevision);
    if (!rec) return undefined;
    inputsOf.set(key, rec.flow.inputs);
    if (inputsOf.size > MAX_CACHED_FLOWS) inputsOf.delete(inputsOf.keys().next().value!);
    return rec.flow.inputs;
  };
  const prepare = async (exec: Execution): Promise<Execution> => storedForm(layer, exec, await declared(exec));
  const seen = <T extends StoredExecution | undefined>(s: T): T => { if (s) layer.track(s.execution); return s; };
  return override(inner, {
    create: async (exec) => seen(await inner.create(await prepare(exec))),
    update: async (exec, expected, acks) => seen(await inner.update(await prepare(exec), expected, acks)),
    get: async (id) => seen(await inner.get(id)),
    // The run texts are stored masked; the record is learnt as a read of `get` learns it.
    getRunsJson: inner.getRunsJson && (async (id) => {
      const read = await inner.getRunsJson!(id);
      if (read) seen(read.stored);
      return read;
    }),
    listActive: async () => { const all = await inner.listActive(); for (const s of all) seen(s); return all; },
    // Summaries hold no input, output or run: nothing to mask or track (a record is tracked when it is loaded, `get`).
    listActiveSummaries: () => inner.listActiveSummaries(),
  });
}

function maskedLogs(inner: LogStore, layer: SecretLayer): LogStore {
  return override(inner, {
    append: (lines) => inner.append(lines.map((l) => {
      const message = layer.masker(l.executionId).mask(l.message);
      return message === l.message ? l : { ...l, message };
    })),
  });
}

function maskedKV(inner: KVStore, masker: () => Masker): KVStore {
  return override(inner, { set: (entry) => inner.set({ ...entry, value: masker().maskDeep(entry.value) }) });
}

export type MaskedStores<S extends Stores> = S & { secrets: SecretLayer };

/** The stores with the masking layer in front of every sink (and `secrets`, the layer, for those who read inputs). */
export function maskedStores<S extends Stores>(stores: S, layer: SecretLayer): MaskedStores<S> {
  return override(stores, {
    executions: maskedExecutions(stores.executions, stores.flows, layer),
    logs: maskedLogs(stores.logs, layer),
    kv: maskedKV(stores.kv, () => layer.masker()),
    secrets: layer,
  } as Partial<S>) as MaskedStores<S>;
}

/** The KV store as a task of `executionId` uses it: values it sets are masked with that execution's secrets too. */
export function executionKV(stores: Stores, executionId: string): KVStore {
  const layer = stores.secrets;
  return layer ? maskedKV(stores.kv, () => layer.masker(executionId)) : stores.kv;
}
