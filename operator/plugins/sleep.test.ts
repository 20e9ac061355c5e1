// Tests of core.flow.Sleep: completes after its duration, stops when killed.
import { afterEach, expect, it } from 'vitest';
import { sleepPlugin } from './sleep.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

it('sleeps for a short duration', async () => {
  t = makeTestContext({ task: { id: 's', type: sleepPlugin.type, duration: 'PT0.01S' } });
  expect(await sleepPlugin.run(t.ctx)).toEqual({ state: 'SUCCESS' });
});

it('returns FAILED "Task killed" when aborted', async () => {
  t = makeTestContext({ task: { id: 's', type: sleepPlugin.type, duration: 'PT1H' } });
  const pending = sleepPlugin.run(t.ctx);
  t.controller.abort();
  expect(await pending).toEqual({ state: 'FAILED', error: 'Task killed' });
});

it('rejects an invalid duration', async () => {
  t = makeTestContext({ task: { id: 's', type: sleepPlugin.type, duration: 'soon' } });
  expect((await sleepPlugin.run(t.ctx)).error).toBe("Invalid ISO 8601 duration 'soon'");
});
