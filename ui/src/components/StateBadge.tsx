// An execution or task-run state as a coloured badge (text always shown: colour is never the only signal).
import type { StateType } from '../api';

const TONE: Partial<Record<StateType, string>> = {
  SUCCESS: 'ok', WARNING: 'warn', FAILED: 'bad', KILLED: 'bad', KILLING: 'warn', CANCELLED: 'muted', SKIPPED: 'muted',
  RUNNING: 'run', CREATED: 'muted', QUEUED: 'muted', PAUSED: 'warn', RESTARTED: 'run', RETRYING: 'run', RETRIED: 'muted',
  BREAKPOINT: 'warn', RESUBMITTED: 'muted', SUBMITTED: 'muted',
};

export function StateBadge({ state }: { state: StateType | string }) {
  return <span className={`badge badge-${TONE[state as StateType] ?? 'muted'}`}>{state}</span>;
}
