// core.execution.Labels: sets or overrides execution labels at runtime (map or list of {key, value}).
import { dict, parseJsonSafe } from '../core/keyed.js';
import type { Label } from '../core/types.js';
import { STRING } from '../model/schema-common.js';
import { definePlugin, p } from './define.js';
import type { RunContext } from './types.js';
import { isRecord } from './util.js';

/** The Labels task's labels: as flow labels, and a value may also be a map (stored as its JSON text, as Kestra does). */
const LABEL_VALUE = { type: ['string', 'number', 'boolean', 'object'] };
const TASK_LABELS = {
  type: ['object', 'array'],
  additionalProperties: LABEL_VALUE,
  items: { type: 'object', required: ['key', 'value'], properties: { key: STRING, value: LABEL_VALUE }, additionalProperties: false },
};

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

export const labelsDefinition = definePlugin({
  type: 'core.execution.Labels',
  title: 'Labels',
  description: 'Sets or overrides labels of the execution while it runs (keys and values rendered; a map value is stored as its JSON text).',
  properties: {
    // A map or a list of {key, value}; a string: JSON text of one, or an expression rendering to one (Kestra accepts both).
    // Rendered here: keys too.
    labels: p.raw({ anyOf: [TASK_LABELS, { type: 'string', format: 'template' }, { type: 'string', pattern: '^\\s*[[{]' }] })
      .required().describe('The labels: a map, or a list of {key, value}.'),
  },
  examples: [{ title: 'Label the execution', code: 'id: label\ntype: ai.service.plugin.core.execution.Labels\nlabels:\n  customer: "{{ inputs.customer }}"\n' }],
  inline: true,
  async run(ctx, props) {
    const raw = props.labels;
    let rendered = typeof raw === 'string' ? ctx.renderTyped(raw) : ctx.renderValue(raw);
    if (typeof rendered === 'string') rendered = parseJsonSafe(rendered);
    const labels = toLabels(isRecord(rendered) ? renderKeys(ctx, rendered) : rendered);
    if (labels.length === 0) throw new Error('No labels to set');
    for (const l of labels) {
      if (l.key.trim() === '') throw new Error('Label keys must not be empty');
    }
    return { state: 'SUCCESS', executionLabels: labels };
  },
});
export const labelsPlugin = labelsDefinition.runnable;

function renderKeys(ctx: RunContext, map: Record<string, unknown>): Record<string, unknown> {
  const out = dict();
  for (const [k, v] of Object.entries(map)) out[ctx.render(k)] = v;
  return out;
}

