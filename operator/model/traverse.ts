// Walking a flow's task tree: the nested task lists of each flowable task, and every task of a flow
// depth-first with its readable path ("tasks[0].then[1]"). Tolerant of malformed input (used before validation).
import type { Flow, Task } from '../core/types.js';
import { normalizeType, PREFIX } from './task-types.js';

/** One nested task list of a task: its name ("tasks", "cases.a", "errors") and where each item lives. */
export interface TaskSlot {
  name: string;
  tasks: Task[];
  /** Readable path of item i relative to the parent task. */
  pathOf(i: number): string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asTasks = (v: unknown): Task[] => (Array.isArray(v) ? v.filter(isObj) as Task[] : []);

/** Readable path segment for a map key. */
export function keySegment(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function listSlot(task: Task, field: string): TaskSlot[] {
  const v = task[field];
  if (!Array.isArray(v)) return [];
  return [{ name: field, tasks: asTasks(v), pathOf: (i) => `.${field}[${i}]` }];
}

function dagSlot(task: Task): TaskSlot[] {
  const v = task.tasks;
  if (!Array.isArray(v)) return [];
  const entries = v.map((e, i) => ({ e, i })).filter(({ e }) => isObj(e) && isObj(e.task));
  return [{
    name: 'tasks',
    tasks: entries.map(({ e }) => (e as { task: Task }).task),
    pathOf: (k) => `.tasks[${entries[k]?.i ?? k}].task`,
  }];
}

function switchSlots(task: Task): TaskSlot[] {
  const cases = task.cases;
  if (!isObj(cases)) return [];
  return Object.entries(cases).filter(([, v]) => Array.isArray(v)).map(([key, v]) => ({
    name: `cases.${key}`,
    tasks: asTasks(v),
    pathOf: (i: number) => `.cases${keySegment(key)}[${i}]`,
  }));
}

/** Main lists of each flowable type, in execution order (errors/finally are added for every flowable). */
const MAIN_SLOTS: Record<string, (task: Task) => TaskSlot[]> = {
  'core.flow.Sequential': (t) => listSlot(t, 'tasks'),
  'core.flow.Parallel': (t) => listSlot(t, 'tasks'),
  'core.flow.Switch': (t) => [...switchSlots(t), ...listSlot(t, 'defaults')],
  'core.flow.If': (t) => [...listSlot(t, 'then'), ...listSlot(t, 'else')],
  'core.flow.EachSequential': (t) => listSlot(t, 'tasks'),
  'core.flow.EachParallel': (t) => listSlot(t, 'tasks'),
  'core.flow.AllowFailure': (t) => listSlot(t, 'tasks'),
  'core.flow.WorkingDirectory': (t) => listSlot(t, 'tasks'),
  'core.flow.DAG': dagSlot,
  'core.flow.ForEach': (t) => listSlot(t, 'tasks'),
  'core.flow.LoopUntil': (t) => listSlot(t, 'tasks'),
  'core.flow.Pause': (t) => listSlot(t, 'tasks'),
};

/** Nested task lists of a task with where they live (empty for runnable tasks, Subflow, ForEachItem...). */
export function taskSlots(task: Task): TaskSlot[] {
  if (!isObj(task) || typeof task.type !== 'string') return [];
  const type = normalizeType(task.type);
  const short = type.startsWith(PREFIX) ? type.slice(PREFIX.length) : undefined;
  // Own entries only: a type named `ai.service.plugin.constructor` is not a flowable task.
  const main = short !== undefined && Object.hasOwn(MAIN_SLOTS, short) ? MAIN_SLOTS[short] : undefined;
  if (!main) return [];
  return [...main(task), ...listSlot(task, 'errors'), ...listSlot(task, 'finally')];
}

/** Nested task lists of a flowable task (for traversal); [] for runnable tasks. */
export function childTaskLists(task: Task): { name: string; tasks: Task[] }[] {
  return taskSlots(task).map(({ name, tasks }) => ({ name, tasks }));
}

export interface LocatedTask { task: Task; path: string }

/** Every task under a list, depth-first (parent before its children), with its path. */
export function walkTaskList(list: unknown, path: string, out: LocatedTask[] = []): LocatedTask[] {
  if (!Array.isArray(list)) return out;
  list.forEach((task, i) => {
    if (!isObj(task)) return;
    walkTask(task as Task, `${path}[${i}]`, out);
  });
  return out;
}

function walkTask(task: Task, path: string, out: LocatedTask[]): void {
  out.push({ task, path });
  for (const slot of taskSlots(task)) {
    slot.tasks.forEach((child, i) => walkTask(child, path + slot.pathOf(i), out));
  }
}

/**
 * Every task of a flow with its path, each list depth-first: tasks, errors, finally, afterExecution, then the tasks
 * of the deprecated `listeners` (`listeners[0].tasks[1]`).
 */
export function locateAllTasks(flow: Partial<Flow> | Record<string, unknown>): LocatedTask[] {
  const out: LocatedTask[] = [];
  const f = flow as Record<string, unknown>;
  for (const field of ['tasks', 'errors', 'finally', 'afterExecution'] as const) walkTaskList(f[field], field, out);
  if (Array.isArray(f.listeners)) f.listeners.forEach((l, i) => { if (isObj(l)) walkTaskList(l.tasks, `listeners[${i}].tasks`, out); });
  return out;
}

/** Every task of a flow, depth-first, including errors/finally and nested ones. */
export function allTasks(flow: Flow): Task[] {
  return locateAllTasks(flow).map((l) => l.task);
}
