// Live progress of one execution from the follow stream (/executions/{id}/follow): a line per task run as it starts
// and ends, and on a terminal a status line rewritten in place; optionally its log lines (/logs/{id}/follow). Writes
// to stderr, so stdout keeps only the result. Resolves with the execution's final record.
import { isTerminal, type ExecutionState } from '../operator/core/types.js';
import type { ApiClient } from './client.js';
import { CliError, ExitCodes } from './errors.js';

export interface ExecutionJson {
  id: string; namespace: string; flowId: string; flowRevision?: number;
  state: { current: ExecutionState; duration?: string; startDate?: string; endDate?: string };
  outputs?: Record<string, unknown>;
  taskRunList?: { id: string; taskId: string; value?: string; state: { current: string; duration?: string } }[];
}

export interface LogLineJson { timestamp: string; level: string; taskId?: string; message: string }

export const logLineText = (l: LogLineJson): string => `${l.timestamp} ${l.level.padEnd(5)} ${l.taskId ?? '-'} ${l.message}`;

const clock = (): string => new Date().toISOString().slice(11, 19);
const TASK_ENDED = new Set(['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'RETRIED']);

export interface ProgressOptions {
  /** Also print the execution's log lines. */
  logs?: boolean;
  minLevel?: string;
  /** Where lines go (stderr by default); a TTY also gets the status line. */
  out?: NodeJS.WriteStream;
}

/** Follows execution `id` to its end, printing progress; the final record. */
export async function followExecution(client: ApiClient, id: string, opts: ProgressOptions = {}): Promise<ExecutionJson> {
  const out = opts.out ?? process.stderr;
  const tty = !!out.isTTY;
  let status = '';
  const write = (line: string): void => {
    out.write(tty && status ? `\r\x1b[K${line}\n${status}` : `${line}\n`);
  };
  const setStatus = (text: string): void => {
    if (!tty) return;
    status = text;
    out.write(`\r\x1b[K${status}`);
  };
  const seen = new Map<string, string>();
  const show = (e: ExecutionJson): void => {
    const runs = e.taskRunList ?? [];
    for (const run of runs) {
      const before = seen.get(run.id);
      const now = run.state.current;
      if (before === now) continue;
      seen.set(run.id, now);
      const name = run.value !== undefined ? `${run.taskId} [${run.value}]` : run.taskId;
      if (TASK_ENDED.has(now)) write(`${clock()} ${name} ${now}${run.state.duration ? ` (${run.state.duration})` : ''}`);
      else if (now === 'RUNNING' && before === undefined || now === 'RUNNING' && before === 'CREATED') write(`${clock()} ${name} started`);
    }
    const ended = runs.filter((r) => TASK_ENDED.has(r.state.current)).length;
    setStatus(`${e.state.current}  ${ended}/${runs.length} task runs ended  ${e.namespace}.${e.flowId} ${e.id}`);
  };

  const abort = new AbortController();
  const logsDone = opts.logs ? printLogs(client, id, opts.minLevel, write, abort.signal) : Promise.resolve();
  let last: ExecutionJson | undefined;
  for await (const ev of client.events(`/executions/${encodeURIComponent(id)}/follow`)) {
    if (ev.id === 'start') continue;
    last = ev.data as ExecutionJson;
    show(last);
    if (ev.id === 'end') break;
  }
  if (!last || !isTerminal(last.state.current)) {
    last = await client.json<ExecutionJson>('GET', `/executions/${encodeURIComponent(id)}`);
    if (!isTerminal(last.state.current)) {
      abort.abort();
      throw new CliError(`the follow stream of execution ${id} ended while it is ${last.state.current}: run 'flowpilot execution get ${id} --wait' to carry on`, ExitCodes.CONNECTION);
    }
    show(last);
  }
  await logsDone; // the log follow ends by itself once the execution has ended and its last lines were sent
  if (tty) out.write('\r\x1b[K');
  return last;
}

/** Prints the log lines of execution `id` as they come, until the stream ends. */
export async function printLogs(client: ApiClient, id: string, minLevel: string | undefined, write: (line: string) => void, signal?: AbortSignal): Promise<void> {
  for await (const ev of client.events(`/logs/${encodeURIComponent(id)}/follow`, { minLevel }, signal)) {
    if (ev.id === 'progress') write(logLineText(ev.data as LogLineJson));
  }
}
