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
import type { RunContext, TaskResult } from './types.js';
import { errorMessage, isRecord, plugin, renderString, requireString } from './util.js';

const FILTER_TYPES = ['INCLUDE', 'EXCLUDE'] as const;
const ERROR_OR_NULL = ['FAIL', 'INCLUDE', 'EXCLUDE'] as const;

function enumProperty<T extends string>(ctx: RunContext, name: string, values: readonly T[], fallback: T): T {
  const v = renderString(ctx, ctx.task[name]) ?? fallback;
  if (!(values as readonly string[]).includes(v)) throw new Error(`Property '${name}' must be one of ${values.join(', ')}, got '${v}'`);
  return v as T;
}

/** An expression property rendered per item: Kestra takes it as written (not rendered before the items). */
function expressionProperty(ctx: RunContext, name: string): string {
  const v = ctx.task[name];
  if (typeof v !== 'string' || v.trim() === '') throw new Error(`Missing required property '${name}' on task '${ctx.task.id}'`);
  return v;
}

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

async function runFilter(ctx: RunContext): Promise<TaskResult> {
  const from = requireString(ctx, 'from');
  const condition = expressionProperty(ctx, 'filterCondition');
  const filterType = enumProperty(ctx, 'filterType', FILTER_TYPES, 'INCLUDE');
  const onErrorOrNull = enumProperty(ctx, 'errorOrNullBehavior', ERROR_OR_NULL, 'FAIL');
  const result = await rewrite(ctx, from, limitsFromEnv(process.env), (line, at) => {
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
}

/** A fixed-size stand-in for a key, so memory grows with the number of keys, not their length. */
const keyHash = (key: string): string => createHash('sha256').update(key).digest('base64');

async function runDeduplicate(ctx: RunContext): Promise<TaskResult> {
  const from = requireString(ctx, 'from');
  const expr = expressionProperty(ctx, 'expr');
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
}

export const filterItemsPlugin = plugin('core.storage.FilterItems', runFilter);
export const deduplicateItemsPlugin = plugin('core.storage.DeduplicateItems', runDeduplicate);
