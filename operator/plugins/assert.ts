// core.execution.Assert: every rendered condition must be true, else the task fails (each failure logged at ERROR).
import type { RunContext, TaskResult } from './types.js';
import { failed, plugin, renderString, renderStringList } from './util.js';

function isTrue(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

async function runAssert(ctx: RunContext): Promise<TaskResult> {
  const raw = ctx.task.conditions;
  const conditions = Array.isArray(raw) ? raw : renderStringList(ctx, raw);
  if (conditions.length === 0) throw new Error("Missing required property 'conditions'");
  let failures = 0;
  for (const condition of conditions) {
    const value = typeof condition === 'string' ? ctx.renderTyped(condition) : condition;
    if (isTrue(value)) continue;
    failures++;
    ctx.logger.error(`Assertion \`${String(condition)}\` failed!`);
  }
  if (failures === 0) return { state: 'SUCCESS' };
  const message = renderString(ctx, ctx.task.errorMessage);
  if (message) ctx.logger.error(message);
  return failed(`${failures} assertion${failures > 1 ? 's' : ''} failed!`);
}

export const assertPlugin = plugin('core.execution.Assert', runAssert, { inline: true });
