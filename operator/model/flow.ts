// parseFlow / validateFlow: YAML text or a parsed object → a normalized, fully validated Flow.
// Order: YAML parse → normalize type names and defaults → JSON Schema (ajv, plugin defaults applied) → semantic checks
// (reserved names on the document as written, so paths name what the author wrote).
import { Ajv, type ValidateFunction } from 'ajv';
import { parseDocument } from 'yaml';
import type { Flow, PluginDefault, Task } from '../core/types.js';
import { convertAjvErrors, pointerSegments, type LocatedIssue } from './ajv-errors.js';
import { isDuration } from './duration.js';
import { FlowValidationError, type ValidationIssue } from './errors.js';
import { normalizeFlowDocument } from './normalize.js';
import { applyPluginDefaults } from './plugin-defaults.js';
import { memoByCatalog } from '../plugins/catalog.js';
import { flowJsonSchema } from './schema-flow.js';
import { semanticIssues } from './semantic.js';
import { reservedNameIssues } from './semantic-keys.js';
import { locateAllTasks } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasTemplate = (s: string): boolean => s.includes('{{') || s.includes('{%');

/** The compiled flow schema (ajv, all errors, with our two string formats), compiled again after the schema changed. */
const validator: () => ValidateFunction = memoByCatalog(() => {
  const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true, strictRequired: false });
  ajv.addFormat('iso-duration', { type: 'string', validate: (s: string) => hasTemplate(s) || isDuration(s) });
  ajv.addFormat('template', { type: 'string', validate: hasTemplate });
  return ajv.compile(flowJsonSchema());
});

/**
 * Compiles the flow schema now rather than when the first flow is read: the compile takes ~0.8-1.5 s of CPU in one
 * piece, which in a serving process holds every request that long. The servers call it before they listen.
 */
export function prepareFlowValidation(): void {
  validator();
}

/** Copies the keys of `source` onto `target` as own data properties (a `__proto__` key never reaches a setter). */
function assignOwn(target: object, source: Obj): void {
  for (const key of Object.keys(source)) {
    Object.defineProperty(target, key, { value: source[key], writable: true, enumerable: true, configurable: true });
  }
}

/**
 * A copy of the flow with plugin defaults applied to every task (its own, then the `inherited` layers of its
 * namespaces), so that required values may come from defaults.
 */
function withDefaults(flow: Obj, inherited: PluginDefault[][]): Obj {
  const copy = structuredClone(flow);
  const defaults = Array.isArray(copy.pluginDefaults) ? (copy.pluginDefaults as PluginDefault[]) : undefined;
  if (!defaults?.length && !inherited.some((l) => l.length > 0)) return copy;
  for (const { task } of locateAllTasks(copy)) {
    const merged = applyPluginDefaults(task, defaults, inherited);
    if (merged !== task) assignOwn(task, merged);
  }
  return copy;
}

function valueAt(doc: unknown, pointer: string): unknown {
  let node: unknown = doc;
  for (const seg of pointerSegments(pointer)) {
    node = (isObj(node) || Array.isArray(node)) && Object.hasOwn(node, seg) ? (node as Obj)[seg] : undefined; // own keys only
  }
  return node;
}

/** Unknown properties that only came from (possibly prefix-matched) plugin defaults are not the task's fault. */
function fromDefaultsOnly(issue: LocatedIssue, written: Obj): boolean {
  return issue.keyword === 'additionalProperties' && valueAt(written, issue.pointer) === undefined;
}

function schemaIssues(original: Obj, written: Obj, checked: Obj): ValidationIssue[] {
  const validate = validator();
  if (validate(checked)) return [];
  return convertAjvErrors(validate.errors, checked, original)
    .filter((i) => !fromDefaultsOnly(i, written))
    .map(({ path, message }) => ({ path, message }));
}

/**
 * Validate an already-parsed flow document (e.g. a CRD spec); returns the normalized Flow or throws FlowValidationError.
 * `inherited`: the plugin defaults of the flow's namespace and its parents (nearest first), which may supply values.
 */
export function validateFlow(doc: unknown, inherited: PluginDefault[][] = []): Flow {
  if (!isObj(doc)) {
    throw new FlowValidationError([{ path: '', message: 'a flow must be a map with at least id, namespace and tasks' }]);
  }
  const flow = normalizeFlowDocument(doc);
  const checked = withDefaults(flow, inherited);
  const seen = new Set<string>();
  const errors = [...schemaIssues(doc, flow, checked), ...semanticIssues(checked), ...reservedNameIssues(doc)].filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  if (errors.length > 0) throw new FlowValidationError(errors);
  return flow as unknown as Flow;
}

/** Parse flow YAML and validate it (`inherited` as in validateFlow); YAML syntax errors are reported with path "" and line/column. */
export function parseFlow(source: string, inherited: PluginDefault[][] = []): Flow {
  const doc = parseDocument(String(source ?? ''), { prettyErrors: true, merge: true });
  if (doc.errors.length > 0) {
    // The first line holds the reason and "at line L, column C"; the rest is a source excerpt.
    const message = (e: Error) => `Invalid YAML: ${e.message.split('\n')[0].replace(/:$/, '')}`;
    throw new FlowValidationError(doc.errors.map((e) => ({ path: '', message: message(e) })));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    // e.g. "Excessive alias count" (alias bombs)
    throw new FlowValidationError([{ path: '', message: `Invalid YAML: ${(err as Error).message}` }]);
  }
  return validateFlow(value, inherited);
}

/**
 * Validate one task document on its own (e.g. the rendered spec of a TemplatedTask): normalized Task or
 * FlowValidationError with paths relative to the task ("uri", "tasks[0].message").
 */
export function validateTask(doc: unknown): Task {
  try {
    return validateFlow({ id: 'task', namespace: 'task', tasks: [doc] }).tasks[0];
  } catch (err) {
    if (!(err instanceof FlowValidationError)) throw err;
    throw new FlowValidationError(err.errors.map((i) => ({
      path: i.path.replace(/^tasks\[0\]\.?/, ''),
      message: i.message,
    })));
  }
}
