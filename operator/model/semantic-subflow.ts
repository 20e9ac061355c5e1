// Save-time refusal of a Subflow or ForEachItem that calls its own flow by literal name (recursion without end).
// Templated names are known only at run time, where MAX_SUBFLOW_DEPTH bounds the nesting (core/budget.ts).
import type { ValidationIssue } from './errors.js';
import { normalizeType, PREFIX } from './task-types.js';
import type { LocatedTask } from './traverse.js';

/** Task types that call another flow (Subflow, ForEachItem). */
export const CALLERS: ReadonlySet<string> = new Set([`${PREFIX}core.flow.Subflow`, `${PREFIX}core.flow.ForEachItem`]);

export function selfCallIssues(flow: Record<string, unknown>, tasks: LocatedTask[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const { task, path } of tasks) {
    if (typeof task.type !== 'string' || !CALLERS.has(normalizeType(task.type))) continue;
    if (task.namespace !== flow.namespace || task.flowId !== flow.id) continue;
    out.push({
      path: `${path}.flowId`,
      message: `a flow cannot call itself (${String(flow.namespace)}.${String(flow.id)}): the calls would nest until MAX_SUBFLOW_DEPTH; call another flow`,
    });
  }
  return out;
}
