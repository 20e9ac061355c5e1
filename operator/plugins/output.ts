// core.output.OutputValues: renders the `values` map and exposes it as the `values` output.
import type { RunContext, TaskResult } from './types.js';
import { isRecord, plugin } from './util.js';

async function runOutputValues(ctx: RunContext): Promise<TaskResult> {
  const raw = ctx.task.values ?? {};
  const values = typeof raw === 'string' ? ctx.renderTyped(raw) : ctx.renderValue(raw);
  if (!isRecord(values)) throw new Error("Property 'values' must be a map");
  return { state: 'SUCCESS', outputs: { values } };
}

export const outputValuesPlugin = plugin('core.output.OutputValues', runOutputValues, { inline: true });
