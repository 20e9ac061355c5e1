// ForEachItem's internal runnables: `<id>_split` streams the items file (one item per line) into batch files in
// internal storage, by `batch.rows` (default 1), `batch.bytes` or `batch.partitions` (core.storage.Split's code); `<id>_merge` gathers the outputs of the
// batches' subflow executions into one file (Kestra's `subflowOutputs`: one line per subflow, in batch order).
import type { RunnablePlugin } from '../plugins/types.js';
import { FOR_EACH_ITEM_MERGE, FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import { batchFileName, SPLITS_FILE } from '../core/foreach-item.js';
import type { ChildSlot } from '../core/subflow.js';
import { limitError, limitsFromEnv } from '../core/limits.js';
import { parseByteSize, splitRows, type SplitMode } from '../plugins/storage.js';
import { readLines } from '../storage/lines.js';

/**
 * How ForEachItem's `batch` cuts (the core.storage.Split modes): `partitions` first, else `bytes`, else `rows`
 * (default 1 row a batch).
 */
export function batchMode(batch: { rows?: unknown; bytes?: unknown; partitions?: unknown } = {}): SplitMode {
  const int = (v: unknown, field: string): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${field}: expected an integer >= 1, got '${String(v)}'`);
    return n;
  };
  if (batch.partitions !== undefined && batch.partitions !== null) return { kind: 'partitions', count: int(batch.partitions, 'batch.partitions') };
  if (batch.bytes !== undefined && batch.bytes !== null) return { kind: 'bytes', max: parseByteSize(batch.bytes, 'batch.bytes') };
  return { kind: 'rows', max: batch.rows === undefined || batch.rows === null ? 1 : int(batch.rows, 'batch.rows') };
}

export const splitPlugin: RunnablePlugin = {
  type: FOR_EACH_ITEM_SPLIT,
  async run(ctx) {
    const uri = ctx.render(String(ctx.task.items));
    const mode = batchMode((ctx.renderValue(ctx.task.batch ?? {}) ?? {}) as Record<string, unknown>);
    const limits = limitsFromEnv(process.env);
    // Streamed: one batch file (or the partitions' bounded buffer) at a time, never the whole items file.
    let items = 0;
    const lines = readLines(await ctx.storage.stream(uri), limits, `ForEachItem items '${uri}'`);
    const counted = (async function* () { for await (const line of lines) { items++; yield line; } })();
    const uris = await splitRows(ctx, counted, mode, '\n', {
      // Deterministic names: the engine derives each batch's URI from the splits file's (core/foreach-item.ts batchUri).
      pathOf: (i) => `${ctx.storagePrefix}/${batchFileName(i)}`,
      // Each batch is a child execution counted as a task run: no more files than the engine would accept.
      tooMany: (count) => (count > limits.maxTaskRuns
        ? limitError('maxTaskRuns', `ForEachItem '${ctx.taskRun.taskId.replace(/_split$/, '')}' would create ${count} batches`, limits) : undefined),
    });
    // Kestra's output: `splits`, a file listing the batch files one URI a line (the engine derives each batch's URI from it).
    const splits = await ctx.storage.put(`${ctx.storagePrefix}/${SPLITS_FILE}`, Buffer.from(uris.join('\n')));
    ctx.logger.info(`Split ${items} items into ${uris.length} batches`);
    return { state: 'SUCCESS', outputs: { splits, numberOfBatches: uris.length } };
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
