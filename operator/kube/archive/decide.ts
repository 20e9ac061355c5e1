// What the leader's sweeper does with one Execution resource: nothing yet, archive its record, label it archived (out
// of the informer caches) or remove that label from one that moves on again, or delete it (archived and past EXECUTION_TTL_SECONDS after its end). Pure: the facts of
// the resource and the time in, a decision out.
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
  /**
   * Labelled archived (LABELS.archived): the label was set by a patch conditional on the archived version, and every
   * write of ours that moves the execution on removes it, so the archive holds this record.
   */
  labelled?: boolean;
  /** It is a Subflow/ForEachItem child whose parent is still running: the parent may still read it. */
  parentRunning: boolean;
  /** Being deleted already (deletionTimestamp). */
  deleting: boolean;
}

export type SweepDecision = 'keep' | 'archive' | 'label' | 'unlabel' | 'delete';

export function decideSweep(f: SweepFacts, nowMs: number, ttlMs: number): SweepDecision {
  if (f.deleting) return 'keep';
  // Labelled yet moving on (a command appended or the state edited by a writer that kept the label): live again.
  if (!isTerminal(f.state) || f.pendingCommands > 0) return f.labelled ? 'unlabel' : 'keep';
  if (!f.labelled && f.archivedVersion !== f.resourceVersion) return 'archive';
  if (f.parentRunning) return 'keep';
  const end = [f.endDate, f.created].map((s) => (s ? Date.parse(s) : NaN)).find(Number.isFinite);
  const expired = end !== undefined && nowMs >= end + ttlMs;
  if (expired) return 'delete';
  return f.labelled ? 'keep' : 'label';
}
