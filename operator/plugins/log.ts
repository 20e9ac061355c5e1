// core.log.Log: renders one message or a list of messages and writes them to the task log at the given level (and
// Kestra's deprecated core.debug.Echo, the same with its `format`); core.log.Fetch: an execution's log lines as a row file.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { limitsFromEnv } from '../core/limits.js';
import type { LogLine } from '../core/types.js';
import { LOG_LEVEL, STRING } from '../model/schema-common.js';
import { definePlugin, p, type PropValues } from './define.js';
import type { RunContext, TaskResult } from './types.js';
import { renderString, toLogLevel } from './util.js';

/** `level`: one of Kestra's log levels (WARNING is read as WARN). */
const level = () => p.raw(LOG_LEVEL).describe('The log level: TRACE, DEBUG, INFO, WARN or ERROR.');

/** Writes the messages (one, or a list; each rendered) at `level` (default INFO). */
function logMessages(ctx: RunContext, raw: unknown, levelProp: unknown): TaskResult {
  const lvl = toLogLevel(levelProp === undefined ? 'INFO' : renderString(ctx, levelProp));
  const messages = Array.isArray(raw) ? raw : [raw];
  for (const m of messages) ctx.logger.log(lvl, renderString(ctx, m) ?? '');
  return { state: 'SUCCESS' };
}

export const logDefinition = definePlugin({
  type: 'core.log.Log',
  title: 'Log',
  description: 'Writes one message, or each message of a list, to the task log at the given level.',
  properties: {
    // Each item is rendered as text on its own (a message that looks like JSON stays one message).
    message: p.raw({ type: ['string', 'array'], items: STRING }).required().describe('The message, or a list of messages (expressions allowed).'),
    level: level(),
  },
  examples: [{ title: 'Log an input', code: 'id: hello\ntype: ai.service.plugin.core.log.Log\nmessage: "Hello {{ inputs.name }}"\nlevel: INFO\n' }],
  inline: true,
  async run(ctx, props) { return logMessages(ctx, props.message, props.level); },
});
export const logPlugin = logDefinition.runnable;

export const ECHO_DEPRECATED = 'core.debug.Echo is deprecated (Kestra 0.15): use core.log.Log with `message`';

/** core.debug.Echo: Kestra's former Log, its `format` written at `level`; no outputs. */
export const echoDefinition = definePlugin({
  type: 'core.debug.Echo',
  title: 'Echo (deprecated)',
  description: 'Kestra\'s former Log task: writes `format` to the task log at `level`, with a deprecation warning. Use core.log.Log.',
  properties: {
    format: p.raw({ type: ['string', 'number', 'boolean'] }).required().describe('The message (expressions allowed).'),
    level: level(),
  },
  examples: [{ title: 'Echo a message', code: 'id: echo\ntype: ai.service.plugin.core.debug.Echo\nformat: "{{ execution.id }}"\n' }],
  inline: true,
  async run(ctx, props) {
    ctx.logger.warn(ECHO_DEPRECATED);
    return logMessages(ctx, props.format, props.level);
  },
});
export const echoPlugin = echoDefinition.runnable;

const fetchProperties = {
  namespace: p.string().describe('Namespace of the execution `executionId` names (default: this flow\'s).'),
  flowId: p.string().describe('Flow of the execution `executionId` names (default: this flow).'),
  executionId: p.string().describe('The execution whose logs are fetched (default: this one).'),
  tasksId: p.stringList().describe('Only the logs of these task ids.'),
  level: p.string().describe('The lowest level fetched (default INFO).'),
};

/** Task ids of `tasksId`, each a non-empty id. */
function taskIds(list: string[] | undefined): string[] | undefined {
  return list?.map((v, i) => {
    if (v === '') throw new Error(`tasksId[${i}] must be a task id`);
    return v;
  });
}

/**
 * core.log.Fetch: the log lines of this execution (or of `executionId`, of this flow unless `namespace` / `flowId`
 * say otherwise; another namespace only as ALLOWED_NAMESPACES grants) at `level` or above, optionally of `tasksId`,
 * written as rows (one JSON object a line) to an `.ion` file; outputs `uri` and `size` (lines). At most
 * LOGS_MAX_LINES lines are written; beyond that the task warns and stops.
 */
async function runFetch(ctx: RunContext, props: PropValues<typeof fetchProperties>): Promise<TaskResult> {
  const executionId = props.executionId;
  const target = {
    namespace: props.namespace ?? ctx.execution.namespace,
    flowId: props.flowId ?? ctx.execution.flowId,
    executionId: executionId ?? ctx.execution.id,
  };
  if (!executionId && (target.namespace !== ctx.execution.namespace || target.flowId !== ctx.execution.flowId)) {
    throw new Error("core.log.Fetch: 'namespace' and 'flowId' only apply with 'executionId'");
  }
  const minLevel = toLogLevel(props.level ?? 'INFO');
  const max = limitsFromEnv(process.env).logsMaxLines;
  const tasks = taskIds(props.tasksId);
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

export const logFetchDefinition = definePlugin({
  type: 'core.log.Fetch',
  title: 'Fetch logs',
  description: 'Writes the log lines of this execution (or of `executionId`; another namespace only as ALLOWED_NAMESPACES grants) at `level` or above, optionally of some tasks only, as rows (one JSON object a line) to an `.ion` file. At most LOGS_MAX_LINES lines are written; beyond that the task warns and stops.',
  properties: fetchProperties,
  outputs: {
    uri: { type: 'uri', description: 'The row file of log lines.' },
    size: { type: 'integer', description: 'How many lines it holds.' },
  },
  examples: [{ title: 'Fetch this execution\'s warnings', code: 'id: fetch\ntype: ai.service.plugin.core.log.Fetch\nlevel: WARN\n' }],
  run: runFetch,
});
export const logFetchPlugin = logFetchDefinition.runnable;
