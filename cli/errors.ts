// The CLI's exit codes (one table, documented in docs/cli.md) and its error type: one line saying what failed, why,
// and what to do, never a stack trace.
import { isTerminal, type ExecutionState } from '../operator/core/types.js';

/** Exit codes of every command; `run --wait`, `execution get --wait`... map an execution's final state to one. */
export const ExitCodes = {
  SUCCESS: 0,
  /** An execution ended FAILED, a flow is invalid, or a command failed for a reason of its own. */
  FAILED: 1,
  /** Wrong command line: unknown command or option, missing argument, malformed value. */
  USAGE: 2,
  /** An execution ended KILLED or CANCELLED. */
  KILLED: 3,
  /** An execution ended WARNING. */
  WARNING: 4,
  /** The server could not be reached (refused, DNS, TLS, timeout). */
  CONNECTION: 5,
  /** The server refused the request (4xx other than 401/403, or 5xx). */
  SERVER: 6,
  /** Authentication or permission refused (401, 403). */
  AUTH: 7,
} as const;
export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/** What each code means, in the order of the table (docs/cli.md is generated from it). */
export const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCodes, string> = {
  SUCCESS: 'the command did what it was asked; an execution waited for ended SUCCESS',
  FAILED: 'an execution waited for ended FAILED; a flow is invalid (`flow validate`, `flow deploy`); any other failure',
  USAGE: 'wrong command line: unknown command or option, missing argument, malformed value',
  KILLED: 'an execution waited for ended KILLED or CANCELLED',
  WARNING: 'an execution waited for ended WARNING',
  CONNECTION: 'the server could not be reached (connection refused, name not found, timeout)',
  SERVER: 'the server refused the request (a 4xx other than 401/403, or a 5xx); its message is shown',
  AUTH: 'authentication or permission refused (401/403): give `--token` or `--user`',
};

export class CliError extends Error {
  constructor(message: string, readonly code: ExitCode = ExitCodes.FAILED) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(message, ExitCodes.USAGE);

/** The exit code of an execution's final state (undefined while it is not terminal). */
export function exitCodeOfState(state: ExecutionState): ExitCode | undefined {
  if (!isTerminal(state)) return undefined;
  const byState: Partial<Record<ExecutionState, ExitCode>> = {
    SUCCESS: ExitCodes.SUCCESS, WARNING: ExitCodes.WARNING, KILLED: ExitCodes.KILLED, CANCELLED: ExitCodes.KILLED,
  };
  return byState[state] ?? ExitCodes.FAILED;
}
