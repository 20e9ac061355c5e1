// Kestra spellings a valid flow may hold that are accepted but act differently than written: deprecated properties
// (Kestra's `deprecationPaths`) and settings with no effect (`warnings`), reported by POST /flows/validate; the engine
// logs the same messages on the task run when it meets them.
import type { Flow } from '../core/types.js';
import { normalizeType, PREFIX } from './task-types.js';
import { locateAllTasks } from './traverse.js';

export const TRANSMIT_WITHOUT_WAIT = '`transmitFailed: true` has no effect without `wait: true` (as in Kestra): a failure of the subflow is not transmitted to this task';
export const SUBFLOW_OUTPUTS_DEPRECATED = 'Subflow property `outputs` is deprecated (Kestra 0.15): declare `outputs` in the subflow instead';
export const SUBFLOW_OUTPUTS_WITHOUT_WAIT = 'Subflow property `outputs` has no effect without `wait: true` (as in Kestra): no outputs are read from the subflow';

export const LISTENERS_DEPRECATED = 'Flow property `listeners` is deprecated (Kestra 0.21): use `afterExecution` tasks (with `runIf` on `execution.state`) instead';

/** Kestra's deprecated task types we run, by canonical type: their path goes into deprecationPaths. */
const DEPRECATED_TYPES: ReadonlySet<string> = new Set([`${PREFIX}core.debug.Echo`, `${PREFIX}core.storage.LocalFiles`]);

const SUBFLOW = `${PREFIX}core.flow.Subflow`;
const FOR_EACH_ITEM = `${PREFIX}core.flow.ForEachItem`;

/** A boolean property as the engine reads it (`true` or `'true'`), `dflt` when absent. */
export const boolProp = (v: unknown, dflt: boolean): boolean => (v === undefined || v === null ? dflt : v === true || v === 'true');

/** Whether a Subflow/ForEachItem waits for its children: ForEachItem by default, Subflow only when asked (the contract). */
export const waitsFor = (task: Record<string, unknown>, type: string): boolean => boolProp(task.wait, type === FOR_EACH_ITEM);

export interface FlowWarnings { deprecationPaths: string[]; warnings: string[] }

export function flowWarnings(flow: Partial<Flow> | Record<string, unknown>): FlowWarnings {
  const out: FlowWarnings = { deprecationPaths: [], warnings: [] };
  const listeners = (flow as Record<string, unknown>).listeners;
  if (Array.isArray(listeners) && listeners.length > 0) {
    out.deprecationPaths.push('listeners');
    out.warnings.push(`listeners: ${LISTENERS_DEPRECATED}`);
  }
  for (const { task, path } of locateAllTasks(flow)) {
    const type = typeof task.type === 'string' ? normalizeType(task.type) : '';
    if (DEPRECATED_TYPES.has(type)) out.deprecationPaths.push(path);
    if (type !== SUBFLOW && type !== FOR_EACH_ITEM) continue;
    const wait = waitsFor(task, type);
    if (boolProp(task.transmitFailed, false) && !wait) out.warnings.push(`${path}.transmitFailed: ${TRANSMIT_WITHOUT_WAIT}`);
    if (type === SUBFLOW && task.outputs !== undefined) {
      out.deprecationPaths.push(`${path}.outputs`);
      if (!wait) out.warnings.push(`${path}.outputs: ${SUBFLOW_OUTPUTS_WITHOUT_WAIT}`);
    }
  }
  return out;
}
