// Test helpers of the serdes converters: run a definition over a file put into real local internal storage, read
// its output back (as bytes, text or ION rows).
import { Readable } from 'node:stream';
import type { PluginDefinition } from '../define.js';
import { makeTestContext, type TestContext } from '../testing.js';
import type { TaskResult } from '../types.js';
import { readIonRows } from '../../storage/ion.js';

export interface Converted { r: TaskResult; t: TestContext; bytes(): Promise<Buffer>; text(): Promise<string>; rows(): Promise<unknown[]> }

const opened: TestContext[] = [];

/** Closes every context `convert` opened (call in afterEach). */
export async function cleanupConverted(): Promise<void> {
  for (const t of opened.splice(0)) await t.cleanup();
}

/** Runs `def` with `props` and `from` set to a file holding `input` (bytes, text, or the output of an earlier run). */
export async function convert(def: PluginDefinition, props: Record<string, unknown>, input: Buffer | string | Converted, name = 'input.bin'): Promise<Converted> {
  const t = makeTestContext({ task: { id: 'conv', type: def.type, ...props } });
  opened.push(t);
  const data = typeof input === 'object' && 'r' in input ? await input.bytes() : Buffer.isBuffer(input) ? input : Buffer.from(input);
  const from = await t.stores.storage.put(`company/team/flow1/executions/exec1/${name}`, data);
  t.ctx.task = { ...t.ctx.task, from };
  const r = await def.runnable.run(t.ctx);
  const bytes = async (): Promise<Buffer> => {
    if (r.state !== 'SUCCESS') throw new Error(`conversion failed: ${r.error}`);
    return t.stores.storage.get(r.outputs!.uri as string);
  };
  return {
    r, t, bytes,
    text: async () => (await bytes()).toString('utf8'),
    rows: async () => {
      const out: unknown[] = [];
      for await (const row of readIonRows(Readable.from([await bytes()]), { storageMaxItemBytes: 1 << 30 }, 'output')) out.push(row);
      return out;
    },
  };
}

/** JSON-like copy (timestamps and decimals as text), for comparing rows. */
export const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
