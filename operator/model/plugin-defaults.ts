// Plugin defaults (flow `pluginDefaults`, and those of the flow's namespace and its parents): values applied to every
// task of a type or of a type prefix. Non-forced defaults fill what the task leaves out; forced defaults override the
// task; maps are merged deeply.
import { dictFrom } from '../core/keyed.js';
import type { Flow, PluginDefault, Task } from '../core/types.js';
import { normalizeType } from './task-types.js';

/** A map (plain or prototype-free), as opposed to a list, a scalar or a class instance. */
const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Deep merge: `over` wins; maps present on both sides are merged key by key; arrays are replaced. The merged maps are
 * prototype-free and only own keys are read, so a `__proto__` or `constructor` key is an ordinary key, never a path
 * into a prototype.
 */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = dictFrom(Object.entries(base));
  for (const [key, value] of Object.entries(over)) {
    const prev = Object.hasOwn(out, key) ? out[key] : undefined;
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

/** Does a default's `type` (exact name or package prefix) apply to this task type? */
export function defaultMatches(defaultType: string, taskType: string): boolean {
  const d = normalizeType(defaultType);
  const t = normalizeType(taskType);
  if (d === t) return true;
  const prefix = d.endsWith('.') ? d : `${d}.`;
  return t.startsWith(prefix);
}

/**
 * Defaults that apply to `type`, least important first: layers from the last (the farthest namespace) to the first
 * (the flow), then prefixes before exact names within a layer, list order kept otherwise.
 */
function matching(layers: PluginDefault[][], type: string): PluginDefault[] {
  return layers
    .flatMap((defaults, layer) => defaults.map((d, i) => ({ d, i, layer })))
    .filter(({ d }) => d && typeof d.type === 'string' && isPlainObject(d.values) && defaultMatches(d.type, type))
    .sort((a, b) => b.layer - a.layer || normalizeType(a.d.type).length - normalizeType(b.d.type).length || a.i - b.i)
    .map(({ d }) => d);
}

/**
 * The task with plugin defaults applied, Kestra's precedence: forced defaults > the task's own values > non-forced
 * defaults; between defaults, the flow's `defaults` win over `inherited` layers (its namespace, then the parents).
 */
export function applyPluginDefaults(task: Task, defaults: PluginDefault[] | undefined, inherited: PluginDefault[][] = []): Task {
  const layers = defaults?.length ? [defaults, ...inherited] : inherited;
  if (!layers.some((l) => l.length > 0) || typeof task?.type !== 'string') return task;
  const applicable = matching(layers, task.type);
  if (applicable.length === 0) return task;
  const merge = (list: PluginDefault[]) =>
    list.reduce<Record<string, unknown>>((acc, d) => deepMerge(acc, structuredClone(d.values)), {});
  const soft = merge(applicable.filter((d) => !d.forced));
  const forced = merge(applicable.filter((d) => d.forced));
  const merged = deepMerge(deepMerge(soft, task), forced);
  // id and type always come from the task itself.
  return { ...merged, id: task.id, type: task.type } as Task;
}

/** The task as it runs in `flow`: the flow's plugin defaults, then those of its namespaces (when the controller attached them). */
export function applyFlowDefaults(task: Task, flow: Flow): Task {
  return applyPluginDefaults(task, flow.pluginDefaults, flow.namespaceContext?.pluginDefaults);
}
