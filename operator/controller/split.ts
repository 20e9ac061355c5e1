// ForEachItem's internal split task: cuts the items file (one item per line) into batch files in internal storage,
// by `batch.rows` (default 1), `batch.bytes` or `batch.partitions`.
import type { RunnablePlugin } from '../plugins/types.js';
import { FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import { parseByteSize } from '../plugins/storage.js';

export function splitLines(lines: string[], batch: { rows?: unknown; bytes?: unknown; partitions?: unknown } = {}): string[][] {
  if (batch.partitions !== undefined) {
    const n = Math.max(1, Number(batch.partitions));
    const size = Math.ceil(lines.length / n);
    return Array.from({ length: Math.min(n, lines.length) }, (_, i) => lines.slice(i * size, (i + 1) * size)).filter((b) => b.length);
  }
  if (batch.bytes !== undefined) {
    const max = parseByteSize(batch.bytes, 'batch.bytes');
    const out: string[][] = [];
    let cur: string[] = [];
    let size = 0;
    for (const line of lines) {
      const len = Buffer.byteLength(line) + 1;
      if (cur.length && size + len > max) { out.push(cur); cur = []; size = 0; }
      cur.push(line); size += len;
    }
    if (cur.length) out.push(cur);
    return out;
  }
  const rows = Math.max(1, Number(batch.rows ?? 1));
  const out: string[][] = [];
  for (let i = 0; i < lines.length; i += rows) out.push(lines.slice(i, i + rows));
  return out;
}

export const splitPlugin: RunnablePlugin = {
  type: FOR_EACH_ITEM_SPLIT,
  async run(ctx) {
    const uri = ctx.render(String(ctx.task.items));
    const text = (await ctx.storage.get(uri)).toString('utf8');
    const lines = text.split('\n').filter((l, i, all) => l.length > 0 || i < all.length - 1);
    const batch = (ctx.renderValue(ctx.task.batch ?? {}) ?? {}) as Record<string, unknown>;
    const batches = splitLines(lines, batch);
    const uris: string[] = [];
    for (let i = 0; i < batches.length; i++) {
      uris.push(await ctx.storage.put(`${ctx.storagePrefix}/batch-${i + 1}.txt`, Buffer.from(batches[i]!.join('\n') + '\n')));
    }
    ctx.logger.info(`Split ${lines.length} items into ${batches.length} batches`);
    return { state: 'SUCCESS', outputs: { batches: uris, numberOfBatches: batches.length } };
  },
};
