// core.debug.Return: renders `format` and returns it as the `value` output.
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderString } from './util.js';

async function runReturn(ctx: RunContext): Promise<TaskResult> {
  const value = renderString(ctx, ctx.task.format);
  return { state: 'SUCCESS', outputs: value === undefined ? {} : { value } };
}

export const returnPlugin = plugin('core.debug.Return', runReturn, { inline: true });
