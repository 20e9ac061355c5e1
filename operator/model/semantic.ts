// Flow checks that JSON Schema cannot express: unique ids across the whole flow, DAG dependencies and cycles,
// retry limits, Subflow and ForEachItem self-calls, input declarations (defaults, ranges, validators) and templates.
import { NAMESPACE_FILES_SEGMENT } from '../core/storage-layout.js';
import type { Input } from '../core/types.js';
import type { ValidationIssue } from './errors.js';
import { coerceInputValue, rangeKey, RANGED_TYPES, validatorIssue } from './input-coerce.js';
import { conditionIssues, listenerConditionIssues } from './semantic-conditions.js';
import { selfCallIssues } from './semantic-subflow.js';
import { taskPropIssues, triggerWorkerGroupIssues } from './semantic-task-props.js';
import { templateIssues } from './semantic-templates.js';
import { triggerIssues } from './semantic-triggers.js';
import { normalizeType, PREFIX } from './task-types.js';
import { locateAllTasks, type LocatedTask } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const isTemplate = (v: unknown): boolean => typeof v === 'string' && v.includes('{{');

function uniqueIds(items: { id: unknown; path: string }[], what: string, out: ValidationIssue[]): void {
  const first = new Map<string, string>();
  for (const { id, path } of items) {
    if (typeof id !== 'string') continue;
    const prev = first.get(id);
    if (prev !== undefined) out.push({ path: `${path}.id`, message: `duplicate ${what} id \`${id}\` (also used at ${prev})` });
    else first.set(id, path);
  }
}

function checkDag(task: Obj, path: string, out: ValidationIssue[]): void {
  const entries = list(task.tasks).filter(isObj);
  const ids = new Set(entries.map((e) => (isObj(e.task) ? e.task.id : undefined)).filter((x): x is string => typeof x === 'string'));
  const deps = new Map<string, string[]>();
  list(task.tasks).forEach((e, i) => {
    if (!isObj(e) || !isObj(e.task) || typeof e.task.id !== 'string') return;
    const dependsOn = list(e.dependsOn).filter((d): d is string => typeof d === 'string');
    dependsOn.forEach((d, j) => {
      if (!ids.has(d)) out.push({ path: `${path}.tasks[${i}].dependsOn[${j}]`, message: `unknown task \`${d}\`: dependsOn must name a task of this DAG` });
    });
    deps.set(e.task.id, dependsOn.filter((d) => ids.has(d)));
  });
  const cycle = findCycle(deps);
  if (cycle) out.push({ path: `${path}.tasks`, message: `dependency cycle: ${cycle.join(' → ')}` });
}

/** A cycle in a dependency graph as [a, b, ..., a], or undefined. */
export function findCycle(deps: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'visiting') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of deps.get(node) ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of deps.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

function checkRetry(retry: unknown, path: string, out: ValidationIssue[]): void {
  if (!isObj(retry)) return;
  if (retry.maxAttempt === undefined && retry.maxDuration === undefined) {
    out.push({ path, message: 'a retry needs `maxAttempt` or `maxDuration` (or both)' });
  }
}

function checkTask({ task, path }: LocatedTask, out: ValidationIssue[]): void {
  checkRetry(task.retry, `${path}.retry`, out);
  const type = typeof task.type === 'string' ? normalizeType(task.type) : '';
  if (type === `${PREFIX}core.flow.DAG`) checkDag(task, path, out);
  if (type === `${PREFIX}core.flow.Pause`) checkInputs(task.onResume, `${path}.onResume`, out);
  out.push(...taskPropIssues({ task, path }));
}

function checkInputRange(input: Input, path: string, out: ValidationIssue[]): void {
  for (const bound of ['min', 'max'] as const) {
    const v = input[bound];
    if (v === undefined) continue;
    if (!RANGED_TYPES.includes(input.type)) {
      out.push({ path: `${path}.${bound}`, message: `\`${bound}\` is only allowed on ${RANGED_TYPES.join(', ')} inputs` });
    } else if (rangeKey(input.type, v) === undefined) {
      out.push({ path: `${path}.${bound}`, message: `\`${String(v)}\` is not a valid ${input.type} value` });
    }
  }
}

function checkInput(input: Input, path: string, out: ValidationIssue[]): void {
  checkInputRange(input, path, out);
  if (input.validator !== undefined) {
    if (input.type !== 'STRING') out.push({ path: `${path}.validator`, message: '`validator` is only allowed on STRING inputs' });
    else if (typeof input.validator === 'string') {
      const issue = validatorIssue(input.validator);
      if (issue) out.push({ path: `${path}.validator`, message: `\`${input.validator}\` is not a valid regular expression: ${issue}` });
    }
  }
  if (input.defaults === undefined || input.defaults === null) return;
  if (input.type === 'FILE') {
    out.push({ path: `${path}.defaults`, message: 'FILE inputs do not support defaults' });
  } else if (!isTemplate(input.defaults)) {
    const r = coerceInputValue(input, input.defaults);
    if (!r.ok) out.push({ path: `${path}.defaults`, message: `invalid default value for type ${input.type}: ${r.message}` });
  }
}

function checkInputs(inputs: unknown, path: string, out: ValidationIssue[]): void {
  const items = list(inputs).map((input, i) => ({ input, path: `${path}[${i}]` })).filter((x) => isObj(x.input));
  uniqueIds(items.map((x) => ({ id: (x.input as Obj).id, path: x.path })), 'input', out);
  for (const { input, path: p } of items) {
    const { id, name } = input as Obj;
    if (name !== undefined) out.push({ path: `${p}.name`, message: `\`name\` is the former spelling of \`id\`: give one of them (here \`${String(name)}\` and \`${String(id)}\` differ)` });
    if (typeof (input as Obj).type === 'string') checkInput(input as unknown as Input, p, out);
  }
}

function located(v: unknown, path: string): { id: unknown; path: string }[] {
  return list(v).map((x, i) => ({ id: isObj(x) ? x.id : undefined, path: `${path}[${i}]` }));
}

/** The storage folder name between a flow and its executions' ids: as a flow id or a namespace segment it would make
 * another namespace's files look like this one's (internal storage lays files out as `<ns>/<flow>/executions/<id>`). */
const STORAGE_RESERVED = 'executions';
/** The folder of a namespace's files (`<ns>/_files/...`): as a namespace segment it would make one namespace's files
 * another's. (A flow id cannot start with `_`.) */
const FILES_RESERVED = NAMESPACE_FILES_SEGMENT;

function checkStorageNames(flow: Obj, out: ValidationIssue[]): void {
  if (flow.id === STORAGE_RESERVED) out.push({ path: 'id', message: `\`${STORAGE_RESERVED}\` is reserved (it names the executions folder of internal storage)` });
  const segments = typeof flow.namespace === 'string' ? flow.namespace.split('.') : [];
  if (segments.includes(STORAGE_RESERVED)) {
    out.push({ path: 'namespace', message: `\`${STORAGE_RESERVED}\` is reserved as a namespace segment (it names the executions folder of internal storage)` });
  }
  if (segments.includes(FILES_RESERVED)) {
    out.push({ path: 'namespace', message: `\`${FILES_RESERVED}\` is reserved as a namespace segment (it names the namespace files folder of internal storage)` });
  }
}

/** Every semantic problem of a (normalized) flow document; tolerant of malformed parts. */
export function semanticIssues(flow: Obj): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  checkStorageNames(flow, out);
  const tasks = locateAllTasks(flow);
  uniqueIds(tasks.map(({ task, path }) => ({ id: task.id, path })), 'task', out);
  tasks.forEach((t) => checkTask(t, out));
  out.push(...selfCallIssues(flow, tasks));
  checkRetry(flow.retry, 'retry', out);
  checkInputs(flow.inputs, 'inputs', out);
  uniqueIds(located(flow.outputs, 'outputs'), 'output', out);
  uniqueIds(located(flow.triggers, 'triggers'), 'trigger', out);
  out.push(...triggerIssues(flow.triggers));
  out.push(...triggerWorkerGroupIssues(flow.triggers));
  out.push(...conditionIssues(flow.triggers));
  out.push(...listenerConditionIssues(flow.listeners));
  out.push(...templateIssues(flow));
  return out;
}
