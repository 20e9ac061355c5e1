// Reserved names refused at save (`__proto__`, `constructor`, `prototype`, core/keyed.ts): as any map key of a flow
// document or a dot-separated segment of one (variables, pluginDefaults values, Subflow and trigger inputs, env,
// headers, inputFiles, label maps...: every map a flow declares becomes an object keyed by its keys), and as a segment
// of every id-like value that becomes a key: input, output, task, trigger and condition ids, label keys of label
// lists, outputFiles names. Tolerant of malformed documents (runs beside the JSON Schema).
import { reservedSegment } from '../core/keyed.js';
import type { ValidationIssue } from './errors.js';
import { keySegment, locateAllTasks } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const child = (path: string, key: string): string => (path === '' ? keySegment(key).replace(/^\./, '') : path + keySegment(key));

function checkValue(value: unknown, path: string, out: ValidationIssue[], separator = '.'): void {
  if (typeof value !== 'string') return;
  const reserved = reservedSegment(value, separator);
  if (reserved !== undefined) out.push({ path, message: `\`${value}\` uses the reserved name \`${reserved}\`` });
}

/**
 * Every map key of the document at any depth, and the `key` of every item of a label list (a `labels` property that
 * is a list; label maps are keys already). Iterative: documents may be deep.
 */
function checkKeys(doc: Obj, out: ValidationIssue[]): void {
  const stack: [unknown, string][] = [[doc, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    const next: [unknown, string][] = [];
    if (Array.isArray(node)) node.forEach((item, i) => next.push([item, `${path}[${i}]`]));
    else if (isObj(node)) {
      for (const key of Object.keys(node)) {
        const at = child(path, key);
        const reserved = reservedSegment(key);
        if (reserved !== undefined) out.push({ path: at, message: `the key \`${key}\` uses the reserved name \`${reserved}\`` });
        if (key === 'labels') list(node[key]).forEach((l, i) => { if (isObj(l)) checkValue(l.key, `${at}[${i}].key`, out); });
        next.push([node[key], at]);
      }
    }
    stack.push(...next.reverse()); // document order
  }
}

function checkIds(items: unknown, path: string, out: ValidationIssue[]): void {
  list(items).forEach((item, i) => { if (isObj(item)) checkValue(item.id, `${path}[${i}].id`, out); });
}

/** Condition ids (MultipleCondition), through nested lists and maps of conditions. */
function checkConditions(conditions: unknown, path: string, out: ValidationIssue[]): void {
  const entries: [string, unknown][] = Array.isArray(conditions)
    ? conditions.map((c, i) => [`${path}[${i}]`, c])
    : isObj(conditions) ? Object.keys(conditions).map((k) => [path + keySegment(k), conditions[k]]) : [];
  for (const [p, c] of entries) {
    if (!isObj(c)) continue;
    checkValue(c.id, `${p}.id`, out);
    checkConditions(c.conditions, `${p}.conditions`, out);
  }
}

/** Every use of a reserved name where a flow document names something that becomes an object key. */
export function reservedNameIssues(flow: Obj): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  checkKeys(flow, out);
  checkIds(flow.inputs, 'inputs', out);
  checkIds(flow.outputs, 'outputs', out);
  checkIds(flow.triggers, 'triggers', out);
  for (const { task, path } of locateAllTasks(flow)) {
    checkValue(task.id, `${path}.id`, out);
    checkIds(task.onResume, `${path}.onResume`, out);
    list(task.outputFiles).forEach((name, i) => checkValue(name, `${path}.outputFiles[${i}]`, out, '/'));
  }
  list(flow.triggers).forEach((t, i) => {
    if (!isObj(t)) return;
    checkConditions(t.conditions, `triggers[${i}].conditions`, out);
    checkConditions(t.scheduleConditions, `triggers[${i}].scheduleConditions`, out);
  });
  return out;
}
