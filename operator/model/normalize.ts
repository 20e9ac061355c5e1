// Normalization of a parsed flow document before validation: canonical plugin type names everywhere a type
// appears (tasks, task runners, triggers, conditions, plugin defaults), and the non-templated flow defaults.
import { normalizeType } from './task-types.js';
import { locateAllTasks } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function normalizeTypeField(o: unknown): void {
  if (isObj(o) && typeof o.type === 'string') o.type = normalizeType(o.type);
}

/** Conditions: a list, or (MultipleCondition) a map name → condition; nested Not/Or conditions too. */
function normalizeConditions(conditions: unknown): void {
  const list = Array.isArray(conditions) ? conditions : isObj(conditions) ? Object.values(conditions) : [];
  for (const c of list) {
    normalizeTypeField(c);
    if (isObj(c)) normalizeConditions(c.conditions);
  }
}

function normalizeTriggers(triggers: unknown): void {
  if (!Array.isArray(triggers)) return;
  for (const t of triggers) {
    normalizeTypeField(t);
    if (!isObj(t)) continue;
    normalizeConditions(t.conditions);
    normalizeConditions(t.scheduleConditions);
  }
}

function labelsToStrings(labels: unknown): unknown {
  const str = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v);
  if (Array.isArray(labels)) return labels.map((l) => (isObj(l) ? { ...l, value: str(l.value) } : l));
  if (isObj(labels)) return Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, str(v)]));
  return labels;
}

/** `key:` with no value (null) means "not set", as in Kestra: drop such keys of an object (not deeper). */
function dropNullKeys(o: unknown): void {
  if (!isObj(o)) return;
  for (const [k, v] of Object.entries(o)) if (v === null) delete o[k];
}

function dropNullKeysOfItems(list: unknown): void {
  if (Array.isArray(list)) list.forEach(dropNullKeys);
}

/** Kestra's current docs spell it `maxAttempts`; the contract says `maxAttempt`. Both are accepted. */
function normalizeRetry(retry: unknown): void {
  if (isObj(retry) && retry.maxAttempts !== undefined && retry.maxAttempt === undefined) {
    retry.maxAttempt = retry.maxAttempts;
    delete retry.maxAttempts;
  }
}

/** A task's `when`: Kestra's newer spelling of `runIf`. Both with different values are left for validation to refuse. */
function normalizeWhen(task: Obj): void {
  if (task.when === undefined) return;
  if (task.runIf === undefined) task.runIf = task.when;
  if (task.runIf === task.when) delete task.when;
}

/** An input's `name`: Kestra's spelling of `id` before 0.15, still accepted. Two different values are left for validation. */
function normalizeInputName(input: unknown): void {
  if (!isObj(input) || input.name === undefined) return;
  if (input.id === undefined) input.id = input.name;
  if (input.id === input.name) delete input.name;
}

/** A normalized deep copy of a flow document; anything malformed is left for validation to report. */
export function normalizeFlowDocument(doc: Obj): Obj {
  const flow = structuredClone(doc);
  dropNullKeys(flow);
  if (flow.taskDefaults !== undefined && flow.pluginDefaults === undefined) {
    flow.pluginDefaults = flow.taskDefaults; // Kestra's former name of pluginDefaults
    delete flow.taskDefaults;
  }
  for (const { task } of locateAllTasks(flow)) {
    dropNullKeys(task);
    normalizeTypeField(task);
    normalizeTypeField(task.taskRunner);
    normalizeRetry(task.retry);
    normalizeWhen(task);
  }
  normalizeRetry(flow.retry);
  [flow.triggers, flow.inputs, flow.outputs].forEach(dropNullKeysOfItems);
  if (Array.isArray(flow.inputs)) flow.inputs.forEach(normalizeInputName);
  normalizeTriggers(flow.triggers);
  if (Array.isArray(flow.listeners)) flow.listeners.forEach((l) => { if (isObj(l)) normalizeConditions(l.conditions); });
  if (Array.isArray(flow.pluginDefaults)) flow.pluginDefaults.forEach(normalizeTypeField);
  if (flow.labels !== undefined) flow.labels = labelsToStrings(flow.labels);
  if (isObj(flow.concurrency) && flow.concurrency.behavior === undefined) flow.concurrency.behavior = 'QUEUE';
  return flow;
}
