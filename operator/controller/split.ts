// ForEachItem's internal runnables: `<id>_split` cuts the items file (one item per line) into batch files in internal
// storage, by `batch.rows` (default 1), `batch.bytes` or `batch.partitions`; `<id>_merge` gathers the outputs of the
// batches' subflow executions into one file (Kestra's `subflowOutputs`: one line per subflow, in batch order).
import type { RunnablePlugin } from '../plugins/types.js';
import { FOR_EACH_ITEM_MERGE, FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import { batchFileName, SPLITS_FILE } from '../core/foreach-item.js';
import type { ChildSlot } from '../core/subflow.js';
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
      uris.push(await ctx.storage.put(`${ctx.storagePrefix}/${batchFileName(i)}`, Buffer.from(batches[i]!.join('\n') + '\n')));
    }
    // Kestra's output: `splits`, a file listing the batch files one URI a line (the engine derives each batch's URI from it).
    const splits = await ctx.storage.put(`${ctx.storagePrefix}/${SPLITS_FILE}`, Buffer.from(uris.join('\n')));
    ctx.logger.info(`Split ${lines.length} items into ${batches.length} batches`);
    return { state: 'SUCCESS', outputs: { splits, numberOfBatches: batches.length } };
  },
};

export const mergePlugin: RunnablePlugin = {
  type: FOR_EACH_ITEM_MERGE,
  async run(ctx) {
    const itemsId = `${ctx.taskRun.taskId.slice(0, -'_merge'.length)}_items`;
    const items = ctx.execution.taskRunList.find((r) => r.taskId === itemsId && r.parentTaskRunId === ctx.taskRun.parentTaskRunId);
    const batches = (items?.flowableState?.batches ?? []) as ChildSlot[];
    // One JSON object a line: Ion text reads it as is (Kestra writes each subflow's outputs as one Ion value a line).
    const lines = batches.filter((b) => b.ended && b.childOutputs && Object.keys(b.childOutputs).length).map((b) => JSON.stringify(b.childOutputs));
    if (lines.length === 0) return { state: 'SUCCESS' }; // Kestra: no subflow outputs, no file
    const subflowOutputs = await ctx.storage.put(`${ctx.storagePrefix}/outputs.ion`, Buffer.from(lines.join('\n') + '\n'));
    ctx.logger.info(`Merged the outputs of ${lines.length} subflow executions`);
    return { state: 'SUCCESS', outputs: { subflowOutputs } };
  },
};
