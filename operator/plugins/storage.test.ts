// Tests of core.storage.Write against the real local internal storage.
import { afterEach, expect, it } from 'vitest';
import { storageWritePlugin } from './storage.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

it('writes rendered content and returns its uri', async () => {
  t = makeTestContext({ task: { id: 'w', type: storageWritePlugin.type, content: 'id={{ execution.id }}', extension: 'txt' } });
  const r = await storageWritePlugin.run(t.ctx);
  const uri = r.outputs?.uri as string;
  expect(uri).toMatch(/^kestra:\/\/\/company\/team\/flow1\/executions\/exec1\/tasks\/w\/tr1\/[0-9a-f-]+\.txt$/);
  expect((await t.stores.storage.get(uri)).toString()).toBe('id=exec1');
});
