// Tests of core.execution.Assert.
import { afterEach, expect, it } from 'vitest';
import { assertPlugin } from './assert.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

it('succeeds when every condition is true', async () => {
  t = makeTestContext({ task: { id: 'a', type: assertPlugin.type, conditions: ["{{ flow.id == 'flow1' }}", true] } });
  expect(await assertPlugin.run(t.ctx)).toEqual({ state: 'SUCCESS' });
});

it('fails, logging each false condition and the error message', async () => {
  t = makeTestContext({
    task: { id: 'a', type: assertPlugin.type, conditions: ['{{ 1 > 2 }}', '{{ 2 > 1 }}', '{{ false }}'], errorMessage: 'bad {{ task.id }}' },
  });
  expect(await assertPlugin.run(t.ctx)).toEqual({ state: 'FAILED', error: '2 assertions failed!' });
  expect(t.messages('ERROR')).toEqual(['Assertion `{{ 1 > 2 }}` failed!', 'Assertion `{{ false }}` failed!', 'bad a']);
});
