// Checks of the properties every task shares that JSON Schema cannot express: where `retry` can be honoured (on a
// flowable it retries the failed tasks it contains, so it needs one it can retry), `workerGroup` (refused: one pool)
// and WorkingDirectory `outputFiles` (refused: not collected).
import type { Task } from '../core/types.js';
import type { ValidationIssue } from './errors.js';
import { normalizeType, PREFIX } from './task-types.js';
import { type LocatedTask, taskSlots, walkTaskList } from './traverse.js';

/** Tasks with attempts of their own: every runnable, and the flowables Fail, Subflow and ForEachItem (its batches). */
const SELF_ATTEMPTED = new Set(['core.execution.Fail', 'core.flow.Subflow', 'core.flow.ForEachItem'].map((t) => PREFIX + t));
const PAUSE = `${PREFIX}core.flow.Pause`;
const WORKING_DIRECTORY = `${PREFIX}core.flow.WorkingDirectory`;

const typeOf = (task: Task): string => (typeof task.type === 'string' ? normalizeType(task.type) : '');

/** A task a `retry` can make new attempts of: one with attempts of its own (not Pause, whose wait is not retried). */
function retryable(task: Task): boolean {
  const type = typeOf(task);
  if (type === PAUSE) return false;
  return SELF_ATTEMPTED.has(type) || taskSlots(task).length === 0;
}

const WORKER_GROUP_MESSAGE = '`workerGroup` is not supported: flowpilot has a single pool of workers (embedded: local '
  + 'processes; cluster: a Job per attempt on any node the operator may use), so no task or trigger can be sent to a '
  + 'group; remove it';

export function taskPropIssues({ task, path }: LocatedTask): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (task.workerGroup !== undefined) out.push({ path: `${path}.workerGroup`, message: WORKER_GROUP_MESSAGE });
  if (task.outputFiles !== undefined && typeOf(task) === WORKING_DIRECTORY) {
    out.push({ path: `${path}.outputFiles`, message: '`outputFiles` on WorkingDirectory is not supported (its files are not collected): list them in the `outputFiles` of the child task that writes them' });
  }
  if (task.retry === undefined) return out;
  const type = typeOf(task);
  if (type === PAUSE) {
    out.push({ path: `${path}.retry`, message: '`retry` is not supported on Pause: a pause has no attempt to retry' });
  } else if (!SELF_ATTEMPTED.has(type) && taskSlots(task).length > 0) {
    const inside = taskSlots(task).flatMap((s) => walkTaskList(s.tasks, ''));
    if (!inside.some((l) => retryable(l.task))) {
      out.push({ path: `${path}.retry`, message: `\`retry\` on a flowable retries the failed tasks it contains (each gets new attempts), and \`${String(task.id)}\` contains none that can be retried` });
    }
  }
  return out;
}

export function triggerWorkerGroupIssues(triggers: unknown): ValidationIssue[] {
  if (!Array.isArray(triggers)) return [];
  return triggers.flatMap((t, i) => (typeof t === 'object' && t !== null && (t as Record<string, unknown>).workerGroup !== undefined
    ? [{ path: `triggers[${i}].workerGroup`, message: WORKER_GROUP_MESSAGE }] : []));
}
