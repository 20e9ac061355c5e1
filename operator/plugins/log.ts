// core.log.Log: renders one message or a list of messages and writes them to the task log at the given level (and
// Kestra's deprecated core.debug.Echo, the same with its `format`); core.log.Fetch: an execution's log lines as a row file.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { limitsFromEnv } from '../core/limits.js';
import type { LogLine } from '../core/types.js';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderString, toLogLevel } from './util.js';

/** Writes the messages held by property `prop` (one, or a list) at the task's `level` (default INFO). */
function logMessages(ctx: RunContext, prop: 'message' | 'format'): TaskResult {
  const levelProp = ctx.task.level === undefined ? 'INFO' : renderString(ctx, ctx.task.level);
  const level = toLogLevel(levelProp);
  const raw = ctx.task[prop];
  const messages = Array.isArray(raw) ? raw : [raw];
  for (const m of messages) {
    const text = renderString(ctx, m) ?? '';
    ctx.logger.log(level, text);
  }
  return { state: 'SUCCESS' };
}

export const logPlugin = plugin('core.log.Log', async (ctx) => logMessages(ctx, 'message'), { inline: true });

export const ECHO_DEPRECATED = 'core.debug.Echo is deprecated (Kestra 0.15): use core.log.Log with `message`';

/** core.debug.Echo: Kestra's former Log, its `format` written at `level`; no outputs. */
export const echoPlugin = plugin('core.debug.Echo', async (ctx) => {
  ctx.logger.warn(ECHO_DEPRECATED);
  return logMessages(ctx, 'format');
}, { inline: true });

/** Task ids of `tasksId`: a list, or an expression yielding one. */
function taskIds(ctx: RunContext): string[] | undefined {
  const raw = ctx.task.tasksId;
  if (raw === undefined || raw === null) return undefined;
  const value = Array.isArray(raw) ? raw.map((v) => renderString(ctx, v)) : ctx.renderTyped(raw);
  const list = Array.isArray(value) ? value : [value];
  return list.map((v, i) => {
    if (typeof v !== 'string' || v === '') throw new Error(`tasksId[${i}] must be a task id`);
    return v;
  });
}

/**
 * core.log.Fetch: the log lines of this execution (or of `executionId`, of this flow unless `namespace` / `flowId`
 * say otherwise; another namespace only as ALLOWED_NAMESPACES grants) at `level` or above, optionally of `tasksId`,
 * written as rows (one JSON object a line) to an `.ion` file; outputs `uri` and `size` (lines). At most
 * LOGS_MAX_LINES lines are written; beyond that the task warns and stops.
 */
async function runFetch(ctx: RunContext): Promise<TaskResult> {
  const executionId = renderString(ctx, ctx.task.executionId);
  const target = {
    namespace: renderString(ctx, ctx.task.namespace) ?? ctx.execution.namespace,
    flowId: renderString(ctx, ctx.task.flowId) ?? ctx.execution.flowId,
    executionId: executionId ?? ctx.execution.id,
  };
  if (!executionId && (target.namespace !== ctx.execution.namespace || target.flowId !== ctx.execution.flowId)) {
    throw new Error("core.log.Fetch: 'namespace' and 'flowId' only apply with 'executionId'");
  }
  const minLevel = toLogLevel(ctx.task.level === undefined ? 'INFO' : renderString(ctx, ctx.task.level));
  const max = limitsFromEnv(process.env).logsMaxLines;
  const tasks = taskIds(ctx);
  const logs = ctx.logs;
  let size = 0;
  let truncated = false;
  async function* rows(): AsyncGenerator<Buffer> {
    for (const taskId of tasks ?? [undefined]) {
      for await (const page of logs.pages(target, { minLevel, ...(taskId !== undefined ? { taskId } : {}) })) {
        if (size >= max) { truncated = true; return; }
        const take = page.slice(0, max - size);
        size += take.length;
        yield Buffer.from(take.map((l) => JSON.stringify(logRow(l)) + '\n').join(''), 'utf8');
        if (take.length < page.length) { truncated = true; return; }
      }
    }
  }
  const uri = await ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}.ion`, Readable.from(rows()));
  if (truncated) ctx.logger.warn(`core.log.Fetch stopped at ${max} lines (setting LOGS_MAX_LINES)`);
  return { state: 'SUCCESS', outputs: { uri, size } };
}

/** A log line as Kestra's LogEntry rows name its fields. */
export function logRow(l: LogLine): Record<string, unknown> {
  return {
    namespace: l.namespace, flowId: l.flowId, taskId: l.taskId ?? null, executionId: l.executionId,
    taskRunId: l.taskRunId ?? null, attemptNumber: l.attemptNumber ?? null, timestamp: l.timestamp, level: l.level,
    message: l.message,
  };
}

export const logFetchPlugin = plugin('core.log.Fetch', runFetch);
