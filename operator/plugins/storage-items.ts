// core.storage.FilterItems and DeduplicateItems: Kestra's tasks over row files (one item a line). Items are JSON
// objects, one a line (Kestra's ION rows, Ion text or its JSON subset: operator/storage/ion.ts); their fields are
// variables of the task's expression (timestamps as text). Both
// stream the file (DeduplicateItems reads it twice and keeps one hash per distinct key, bounded by
// STORAGE_MAX_DISTINCT_KEYS) and write the kept lines to a new `.ion` file of the task run.
import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { limitError, limitsFromEnv, type Limits } from '../core/limits.js';
import { truthy } from '../expr/values.js';
import { parseIon } from '../storage/ion.js';
import { LineFile, readLines } from '../storage/lines.js';
import { STRING } from '../model/schema-common.js';
import { definePlugin, p } from './define.js';
import type { RunContext } from './types.js';
import { errorMessage, isRecord } from './util.js';

const FILTER_TYPES = ['INCLUDE', 'EXCLUDE'] as const;
const ERROR_OR_NULL = ['FAIL', 'INCLUDE', 'EXCLUDE'] as const;

/** An expression property rendered per item: Kestra takes it as written (not rendered before the items). */
const expressionProperty = (what: string) => p.raw(STRING).required().describe(what);

function expression(v: unknown, name: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new Error(`Missing required property '${name}'`);
  return v;
}

const from = () => p.string().required().describe('The row file (kestra:/// URI; one JSON object a line).');
const ITEM_OUTPUTS = {
  uri: { type: 'uri', description: 'The file of the kept items.' },
  processedItemsTotal: { type: 'integer', description: 'Items read.' },
  droppedItemsTotal: { type: 'integer', description: 'Items not kept.' },
} as const;

/** The fields of one item, as variables. */
function itemVariables(line: string, at: number): Record<string, unknown> {
  let item: unknown;
  try { item = parseIon(line, 'plain'); } catch (err) { throw new Error(`Item ${at + 1} is not an ION row: ${errorMessage(err)}`); }
  if (!isRecord(item)) throw new Error(`Item ${at + 1} is not an object`);
  return item;
}

/** Reads `from` line by line and writes the kept lines to a new file; `keep` decides per item. */
async function rewrite(ctx: RunContext, from: string, limits: Limits, keep: (line: string, at: number) => boolean): Promise<{ uri: string; processed: number; dropped: number }> {
  const file = new LineFile(join(ctx.workingDir, `items-${randomUUID()}.ion`));
  let processed = 0;
  let dropped = 0;
  try {
    for await (const line of readLines(await ctx.storage.stream(from), limits, `core.storage items of '${from}'`)) {
      if (keep(line, processed)) await file.write(line + '\n');
      else dropped++;
      processed++;
    }
    await file.close();
    const uri = await ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}.ion`, file.read());
    return { uri, processed, dropped };
  } finally {
    await file.close().catch(() => {});
    await rm(file.path, { force: true });
  }
}

export const filterItemsDefinition = definePlugin({
  type: 'core.storage.FilterItems',
  title: 'Filter items',
  description: 'Keeps (INCLUDE) or drops (EXCLUDE) the items of a row file for which `filterCondition` is true; the item\'s fields are the expression\'s variables. Streams the file.',
  properties: {
    from: from(),
    filterCondition: expressionProperty('The condition, rendered for each item (not before).'),
    filterType: p.enum(FILTER_TYPES).default('INCLUDE').describe('Keep (INCLUDE) or drop (EXCLUDE) the matching items.'),
    errorOrNullBehavior: p.enum(ERROR_OR_NULL).default('FAIL').describe('When the condition fails or yields null: fail, or include or exclude the item.'),
  },
  outputs: ITEM_OUTPUTS,
  examples: [{ title: 'Keep the large orders', code: 'id: big\ntype: ai.service.plugin.core.storage.FilterItems\nfrom: "{{ outputs.orders.uri }}"\nfilterCondition: "{{ amount > 100 }}"\n' }],
  async run(ctx, props) {
    const condition = expression(props.filterCondition, 'filterCondition');
    const filterType = props.filterType;
    const onErrorOrNull = props.errorOrNullBehavior;
    const result = await rewrite(ctx, props.from, limitsFromEnv(process.env), (line, at) => {
      let value: unknown;
      try {
        value = ctx.renderTyped(condition, itemVariables(line, at));
      } catch (err) {
        if (onErrorOrNull === 'FAIL') throw err;
        return onErrorOrNull === 'INCLUDE';
      }
      if (value === null || value === undefined) {
        if (onErrorOrNull === 'FAIL') throw new Error(`Expression \`${condition}\` returned null on item ${at + 1}`);
        return onErrorOrNull === 'INCLUDE';
      }
      const match = truthy(typeof value === 'string' ? value.trim() : value);
      return match === (filterType === 'INCLUDE');
    });
    return { state: 'SUCCESS', outputs: { uri: result.uri, processedItemsTotal: result.processed, droppedItemsTotal: result.dropped } };
  },
});

/** A fixed-size stand-in for a key, so memory grows with the number of keys, not their length. */
const keyHash = (key: string): string => createHash('sha256').update(key).digest('base64');

export const deduplicateItemsDefinition = definePlugin({
  type: 'core.storage.DeduplicateItems',
  title: 'Deduplicate items',
  description: 'Keeps the last item of each key `expr` renders to (the item\'s fields are its variables). Reads the file twice, keeping one hash per distinct key (at most STORAGE_MAX_DISTINCT_KEYS).',
  properties: {
    from: from(),
    expr: expressionProperty('The key of an item, rendered for each item (not before).'),
  },
  outputs: { ...ITEM_OUTPUTS, numKeys: { type: 'integer', description: 'Distinct keys.' } },
  examples: [{ title: 'One row per id', code: 'id: dedup\ntype: ai.service.plugin.core.storage.DeduplicateItems\nfrom: "{{ outputs.rows.uri }}"\nexpr: "{{ id }}"\n' }],
  async run(ctx, props) {
    const from = props.from;
    const expr = expression(props.expr, 'expr');
    const limits = limitsFromEnv(process.env);
    const keyOf = (line: string, at: number): string => keyHash(ctx.render(expr, itemVariables(line, at)));
    // First pass: the last position of each key. Second pass: keep the item at that position (Kestra's "keep last").
    const last = new Map<string, number>();
    let at = 0;
    for await (const line of readLines(await ctx.storage.stream(from), limits, `core.storage.DeduplicateItems of '${from}'`)) {
      const key = keyOf(line, at);
      if (!last.has(key) && last.size >= limits.storageMaxDistinctKeys) {
        throw limitError('storageMaxDistinctKeys', `core.storage.DeduplicateItems of '${from}' has more distinct keys`, limits);
      }
      last.set(key, at++);
    }
    const result = await rewrite(ctx, from, limits, (line, i) => last.get(keyOf(line, i)) === i);
    return { state: 'SUCCESS', outputs: { uri: result.uri, numKeys: last.size, processedItemsTotal: result.processed, droppedItemsTotal: result.dropped } };
  },
});

export const filterItemsPlugin = filterItemsDefinition.runnable;
export const deduplicateItemsPlugin = deduplicateItemsDefinition.runnable;
