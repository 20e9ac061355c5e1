// What the *Execution notification tasks say about an execution (Kestra's ExecutionService.executionMap): its ids and
// state, the duration (HH:mm:ss.SSS), the last task run (the failed one when the execution failed), a link to its page
// built from PUBLIC_URL, and the flow's customMessage / customFields. The execution is the current one by default, or
// one `executionId` names (a Flow trigger's `{{ trigger.executionId }}`) that this execution may read (ctx.executions).
import type { Execution, TaskRun } from '../../core/types.js';
import { p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';

/** The server setting the execution link starts with (Kestra's `kestra.url`). */
export const PUBLIC_URL_SETTING = 'PUBLIC_URL';

export const executionProps = {
  executionId: p.string().describe('The execution to summarise; default: the current execution ({{ execution.id }}).'),
  customFields: p.map().describe('Extra fields added to the notification (name → value).'),
  customMessage: p.string().describe('An extra message added to the notification.'),
};
export type ExecutionProps = PropValues<typeof executionProps>;

export interface ExecutionSummary {
  execution: Execution;
  /** Kestra's humanDuration: HH:mm:ss.SSS from the start to the end (or now). */
  duration: string;
  startDate: string;
  /** `<PUBLIC_URL>/ui/executions/<namespace>/<flowId>/<id>`, when PUBLIC_URL is set. */
  link?: string;
  /** The last FAILED task run when the execution has one, else false. */
  firstFailed: TaskRun | false;
  /** The last task run in the state that decided the outcome (FAILED when one failed, else SUCCESS). */
  lastTask?: TaskRun;
  customMessage?: string;
  customFields?: Record<string, unknown>;
}

/** The server's public URL (PUBLIC_URL), without a trailing slash; undefined when unset. */
export function publicUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env[PUBLIC_URL_SETTING]?.trim();
  if (!raw) return undefined;
  let u: URL;
  try { u = new URL(raw); } catch { throw new Error(`${PUBLIC_URL_SETTING} must be an http(s) URL such as https://flowpilot.example.com, got '${raw}'`); }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${PUBLIC_URL_SETTING} must be an http(s) URL, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}

export function executionLink(base: string | undefined, e: Pick<Execution, 'namespace' | 'flowId' | 'id'>): string | undefined {
  if (!base) return undefined;
  return `${base}/ui/executions/${[e.namespace, e.flowId, e.id].map(encodeURIComponent).join('/')}`;
}

/** DurationFormatUtils.formatDurationHMS: `HH:mm:ss.SSS` (hours grow past 99). */
export function humanDuration(ms: number): string {
  const n = Math.max(0, Math.round(ms));
  const pad = (v: number, w = 2) => String(v).padStart(w, '0');
  return `${pad(Math.floor(n / 3_600_000))}:${pad(Math.floor(n / 60_000) % 60)}:${pad(Math.floor(n / 1000) % 60)}.${pad(n % 1000, 3)}`;
}

/** Reads the execution to summarise: the current one, or another this execution may read. */
export async function targetExecution(ctx: RunContext, executionId: string | undefined): Promise<Execution> {
  const id = executionId?.trim() || ctx.execution.id;
  if (id === ctx.execution.id) return ctx.execution;
  let found: Execution | undefined;
  try { found = await ctx.executions.get(id); } catch (err) { throw new Error(`Cannot read execution '${id}': ${(err as Error).message}`); }
  if (!found) throw new Error(`Execution '${id}' not found in a namespace this flow may read (its own, or one ALLOWED_NAMESPACES grants)`);
  return found;
}

export function summarise(exec: Execution, props: ExecutionProps, now: Date, base: string | undefined): ExecutionSummary {
  const failed = exec.taskRunList.some((r) => r.state.current === 'FAILED');
  const deciding = exec.taskRunList.filter((r) => r.state.current === (failed ? 'FAILED' : 'SUCCESS'));
  const lastTask = deciding.at(-1);
  const start = Date.parse(exec.state.startDate);
  const end = exec.state.endDate ? Date.parse(exec.state.endDate) : now.getTime();
  const link = executionLink(base, exec);
  return {
    execution: exec,
    duration: humanDuration(end - start),
    startDate: exec.state.startDate,
    ...(link ? { link } : {}),
    firstFailed: lastTask && lastTask.state.current === 'FAILED' ? lastTask : false,
    ...(lastTask ? { lastTask } : {}),
    ...(props.customMessage !== undefined ? { customMessage: props.customMessage } : {}),
    ...(props.customFields && Object.keys(props.customFields).length ? { customFields: props.customFields } : {}),
  };
}

/** The summary of the execution the task's properties name. */
export async function executionSummary(ctx: RunContext, props: ExecutionProps): Promise<ExecutionSummary> {
  return summarise(await targetExecution(ctx, props.executionId), props, new Date(), publicUrl());
}

/** `[namespace] flowId ➛ STATE` */
export const headline = (s: ExecutionSummary): string => `[${s.execution.namespace}] ${s.execution.flowId} ➛ ${s.execution.state.current}`;

/** `Succeeded after 00:00:01.250` or ``Failed on task `x` after ...`` (Kestra's wording, markdown code for the task). */
export const outcomeLine = (s: ExecutionSummary, code = (t: string) => `\`${t}\``): string =>
  `${s.firstFailed === false ? 'Succeeded' : `Failed on task ${code(s.firstFailed.taskId)}`} after ${s.duration}`;

/** A custom field's value as text (strings as they are, other values as JSON). */
export const fieldText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? 'null');

/** The state's colour: green, orange or red (Slack's good/warning/danger, hex for Teams and Discord). */
export function stateColor(s: ExecutionSummary): 'good' | 'warning' | 'danger' {
  const st = s.execution.state.current;
  return st === 'SUCCESS' ? 'good' : st === 'WARNING' ? 'warning' : 'danger';
}
