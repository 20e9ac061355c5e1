// Child process of test/controller/split-memory.test.ts: writes a large items file to real local internal storage
// (streamed, never held), runs ForEachItem's `_split` over it under the heap cap the parent gave, and prints the outcome.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { FOR_EACH_ITEM_SPLIT } from '../../operator/core/flow-index.js';
import { splitPlugin } from '../../operator/controller/split.js';
import { makeTestContext } from '../../operator/plugins/testing.js';

const [rows, lineCount, lineBytes] = process.argv.slice(2).map(Number) as [number, number, number];
const ITEMS = 'company/team/flow1/executions/exec1/inputs/items.txt';

/** `lineCount` lines of `lineBytes` bytes (newline included), generated chunk by chunk. */
function items(): Readable {
  let i = 0;
  return new Readable({
    read() {
      if (i >= lineCount) { this.push(null); return; }
      const chunk: string[] = [];
      for (let k = 0; k < 1000 && i < lineCount; k++, i++) chunk.push(`item-${String(i).padStart(10, '0')}`.padEnd(lineBytes - 1, 'x'));
      this.push(chunk.join('\n') + '\n');
    },
  });
}

const t = makeTestContext({ task: { id: 'each_split', type: FOR_EACH_ITEM_SPLIT, items: `kestra:///${ITEMS}`, batch: { rows } } });
try {
  const uri = await t.stores.storage.put(ITEMS, items());
  const r = await splitPlugin.run(t.ctx);
  // The first line of every batch, read as a stream.
  const splits = (await t.stores.storage.get(String(r.outputs?.splits))).toString().split('\n');
  const firsts: string[] = [];
  let total = 0;
  for (const batch of splits) {
    let first = '';
    for await (const chunk of createReadStream(t.stores.storage.localPath!(batch)!)) {
      if (!first) first = (chunk as Buffer).toString('utf8', 0, 15);
      total += (chunk as Buffer).length;
    }
    firsts.push(first);
  }
  const heapLimit = (await import('node:v8')).getHeapStatistics().heap_size_limit;
  process.stdout.write(JSON.stringify({ state: r.state, numberOfBatches: r.outputs?.numberOfBatches, firsts, total, itemsBytes: await t.stores.storage.size(uri), heapLimit }));
} finally {
  await t.cleanup();
}
