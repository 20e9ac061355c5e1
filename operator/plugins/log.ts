// core.log.Log: renders one message or a list of messages and writes them to the task log at the given level.
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderString, toLogLevel } from './util.js';

async function runLog(ctx: RunContext): Promise<TaskResult> {
  const levelProp = ctx.task.level === undefined ? 'INFO' : renderString(ctx, ctx.task.level);
  const level = toLogLevel(levelProp);
  const raw = ctx.task.message;
  const messages = Array.isArray(raw) ? raw : [raw];
  for (const m of messages) {
    const text = renderString(ctx, m) ?? '';
    ctx.logger.log(level, text);
  }
  return { state: 'SUCCESS' };
}

export const logPlugin = plugin('core.log.Log', runLog);
