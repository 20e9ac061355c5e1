// core.execution.Labels: sets or overrides execution labels at runtime (map or list of {key, value}).
import { dict, parseJsonSafe } from '../core/keyed.js';
import type { Label } from '../core/types.js';
import type { RunContext, TaskResult } from './types.js';
import { isRecord, plugin } from './util.js';

function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Normalises the `labels` property (already rendered) into a list of labels; later duplicates win. */
export function toLabels(raw: unknown): Label[] {
  const byKey = new Map<string, string>();
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (!isRecord(item) || item.key === undefined) throw new Error('Each label must be a {key, value} object');
      byKey.set(stringify(item.key), stringify(item.value));
    }
  } else if (isRecord(raw)) {
    for (const [k, v] of Object.entries(raw)) byKey.set(k, stringify(v));
  } else {
    throw new Error("Property 'labels' must be a map or a list of {key, value}");
  }
  return [...byKey].map(([key, value]) => ({ key, value }));
}

async function runLabels(ctx: RunContext): Promise<TaskResult> {
  const raw = ctx.task.labels;
  if (raw === undefined || raw === null) throw new Error("Missing required property 'labels'");
  let rendered = typeof raw === 'string' ? ctx.renderTyped(raw) : ctx.renderValue(raw);
  if (typeof rendered === 'string') rendered = parseJsonSafe(rendered);
  const labels = toLabels(isRecord(rendered) ? renderKeys(ctx, rendered) : rendered);
  if (labels.length === 0) throw new Error('No labels to set');
  for (const l of labels) {
    if (l.key.trim() === '') throw new Error('Label keys must not be empty');
  }
  return { state: 'SUCCESS', executionLabels: labels };
}

function renderKeys(ctx: RunContext, map: Record<string, unknown>): Record<string, unknown> {
  const out = dict();
  for (const [k, v] of Object.entries(map)) out[ctx.render(k)] = v;
  return out;
}

export const labelsPlugin = plugin('core.execution.Labels', runLabels, { inline: true });
