// What the leader's sweeper does with one Execution resource: nothing yet, archive its record, or delete it (archived and
// past EXECUTION_TTL_SECONDS after its end). Pure: the facts of the resource and the time in, a decision out.
import { type ExecutionState, isTerminal } from '../../core/types.js';

export interface SweepFacts {
  state: ExecutionState;
  /** End of the execution (ISO); absent or unreadable: the resource's creation is used. */
  endDate?: string;
  created?: string;
  /** Commands not yet consumed (a restart queued on a finished execution moves it on). */
  pendingCommands: number;
  resourceVersion: number;
  /** Version the archive holds of it (undefined: not archived). */
  archivedVersion?: number;
  /** It is a Subflow/ForEachItem child whose parent is still running: the parent may still read it. */
  parentRunning: boolean;
  /** Being deleted already (deletionTimestamp). */
  deleting: boolean;
}

export type SweepDecision = 'keep' | 'archive' | 'delete';

export function decideSweep(f: SweepFacts, nowMs: number, ttlMs: number): SweepDecision {
  if (f.deleting || !isTerminal(f.state) || f.pendingCommands > 0) return 'keep';
  if (f.archivedVersion !== f.resourceVersion) return 'archive';
  if (f.parentRunning) return 'keep';
  const end = [f.endDate, f.created].map((s) => (s ? Date.parse(s) : NaN)).find(Number.isFinite);
  if (end === undefined) return 'keep';
  return nowMs >= end + ttlMs ? 'delete' : 'keep';
}
