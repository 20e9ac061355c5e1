// Tests of core.output.OutputValues.
import { afterEach, expect, it } from 'vitest';
import { outputValuesPlugin } from './output.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

it('renders the values map into the values output', async () => {
  t = makeTestContext({ task: { id: 'o', type: outputValuesPlugin.type, values: { a: '{{ flow.id }}', n: 1, list: ['{{ task.id }}'] } } });
  expect(await outputValuesPlugin.run(t.ctx)).toEqual({ state: 'SUCCESS', outputs: { values: { a: 'flow1', n: 1, list: ['o'] } } });
});
