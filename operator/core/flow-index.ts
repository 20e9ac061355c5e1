// Indexes a flow's task tree: task definitions by id and the names of flowable types the engine evaluates itself.
import { FLOWABLES, type FlowableName } from '../model/flowable-types.js';
import { PREFIX as P } from '../model/task-types.js';
import type { Flow, Task } from './types.js';

/** Canonical type of each flowable, by short name (from the declarations of model/flowable-types.ts). */
export const FLOWABLE = Object.fromEntries(Object.entries(FLOWABLES).map(([name, f]) => [name, P + f.type])) as {
  readonly [K in FlowableName]: `${typeof P}${(typeof FLOWABLES)[K]['type']}`
};

/** Internal runnable created by ForEachItem (`<id>_split`) to split its items file into batches (Kestra's class name). */
export const FOR_EACH_ITEM_SPLIT = `${P}core.flow.ForEachItem$ForEachItemSplit`;
/** Internal child of ForEachItem (`<id>_items`): one task run starting a subflow execution per batch. */
export const FOR_EACH_ITEM_BATCH = `${P}core.flow.ForEachItem$ForEachItemExecutable`;
/** Internal runnable created by ForEachItem (`<id>_merge`): merges the subflows' outputs into one file. */
export const FOR_EACH_ITEM_MERGE = `${P}core.flow.ForEachItem$ForEachItemMergeOutputs`;

/**
 * The three task runs a ForEachItem records, as Kestra does: `<id>_split` cuts the items into batch files,
 * `<id>_items` starts one subflow execution per batch, `<id>_merge` gathers their outputs into one file.
 */
export function forEachItemParts(task: Task): { split: Task; items: Task; merge: Task } {
  return {
    split: { ...task, id: `${task.id}_split`, type: FOR_EACH_ITEM_SPLIT, retry: undefined, timeout: undefined },
    items: { ...task, id: `${task.id}_items`, type: FOR_EACH_ITEM_BATCH, retry: undefined },
    merge: { id: `${task.id}_merge`, type: FOR_EACH_ITEM_MERGE },
  };
}

const FLOWABLE_SET: ReadonlySet<string> = new Set([...Object.values(FLOWABLE), FOR_EACH_ITEM_BATCH]);
export const isFlowableType = (type: string): boolean => FLOWABLE_SET.has(type);

export interface FlowIndex { byId: Map<string, Task> }

const cache = new WeakMap<Flow, FlowIndex>();

/** Every nested task list of a task (tasks, then, else, cases, defaults, errors, finally, DAG tasks). */
export function nestedLists(task: Task): Task[][] {
  const lists: Task[][] = [];
  const push = (v: unknown) => { if (Array.isArray(v)) lists.push(v as Task[]); };
  if (task.type === FLOWABLE.DAG && Array.isArray(task.tasks)) {
    lists.push((task.tasks as { task: Task }[]).map((d) => d.task));
  } else push(task.tasks);
  push(task.then); push(task.else); push(task.defaults); push(task.errors); push(task.finally);
  if (task.cases && typeof task.cases === 'object') for (const v of Object.values(task.cases as object)) push(v);
  return lists;
}

export function indexFlow(flow: Flow): FlowIndex {
  let idx = cache.get(flow);
  if (idx) return idx;
  const byId = new Map<string, Task>();
  const visit = (tasks: Task[] | undefined) => {
    for (const t of tasks ?? []) { byId.set(t.id, t); for (const l of nestedLists(t)) visit(l); }
  };
  visit(flow.tasks); visit(flow.errors); visit(flow.finally); visit(flow.afterExecution);
  for (const l of flow.listeners ?? []) visit(l.tasks);
  idx = { byId };
  cache.set(flow, idx);
  return idx;
}

/** Tasks of a list that are not disabled. */
export const enabled = (tasks: Task[] | undefined): Task[] => (tasks ?? []).filter((t) => t.disabled !== true);
