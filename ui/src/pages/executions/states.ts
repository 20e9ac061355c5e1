// Execution and task-run states as the executions pages use them: which are terminal, which can be restarted, and a
// task run's label (its task id and loop value).
import type { StateType } from '../../api';

const TERMINAL = new Set<string>(['SUCCESS', 'WARNING', 'FAILED', 'RETRIED', 'CANCELLED', 'KILLED', 'SKIPPED']);
export const isTerminalState = (s: string): boolean => TERMINAL.has(s);

/** The states the restart route accepts (api/routes/execution-actions.ts RESTARTABLE). */
export const RESTARTABLE: ReadonlySet<string> = new Set<StateType>(['FAILED', 'KILLED', 'CANCELLED']);

export const EXECUTION_STATES: StateType[] = ['CREATED', 'QUEUED', 'RUNNING', 'PAUSED', 'SUCCESS', 'WARNING', 'FAILED',
  'RETRYING', 'RETRIED', 'RESTARTED', 'CANCELLED', 'KILLING', 'KILLED'];

/** `taskId` or `taskId [value]` for a loop iteration. */
export const runLabel = (r: { taskId: string; value?: string }): string => (r.value !== undefined ? `${r.taskId} [${r.value}]` : r.taskId);
