// Tests of core.templating.TemplatedTask: the rendered spec runs as another runnable task.
import { afterEach, describe, expect, it } from 'vitest';
import { getRunnable } from './index.js';
import { makeTestContext, type TestContext } from './testing.js';

const TYPE = 'ai.service.plugin.core.templating.TemplatedTask';
let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

describe('core.templating.TemplatedTask', () => {
  const plugin = getRunnable(TYPE)!;

  it('renders the spec, then runs the task it describes with the templated id', async () => {
    t = makeTestContext({
      task: { id: 'tpl', type: TYPE, spec: 'type: ai.service.plugin.core.debug.Return\nformat: "{{ vars.word }} {{ task.id }}"' },
      variables: { vars: { word: 'hi' } },
    });
    const r = await plugin.run(t.ctx);
    expect(r).toEqual({ state: 'SUCCESS', outputs: { value: 'hi tpl' } });
  });

  it('accepts the Kestra type name of a runnable task', async () => {
    t = makeTestContext({ task: { id: 'tpl', type: TYPE, spec: 'id: inner\ntype: io.kestra.plugin.core.log.Log\nmessage: hello' } });
    expect((await plugin.run(t.ctx)).state).toBe('SUCCESS');
    expect(t.messages('INFO')).toEqual(['hello']);
  });

  it.each([
    ['type: ai.service.plugin.core.flow.Sequential\ntasks: []', "'ai.service.plugin.core.flow.Sequential' is not a runnable task"],
    [`type: ${TYPE}\nspec: x`, 'cannot be of type TemplatedTask'],
    ['- just\n- a list', 'expected a YAML map'],
    ['format: x', "missing 'type'"],
    ['type: ai.service.plugin.core.debug.Return\nformat: x\nconstructor: { prototype: 1 }', 'constructor: the key `constructor` uses the reserved name `constructor`'],
    ['id: prototype\ntype: ai.service.plugin.core.debug.Return\nformat: x', 'id: `prototype` uses the reserved name `prototype`'],
    ['type: ai.service.plugin.core.debug.Return\nformat: x\nformt: y', 'formt'],
    ...['retry: { type: constant, interval: PT1S, maxAttempt: 2 }', 'timeout: PT1S', 'runIf: "false"', 'allowWarning: true',
      'allowFailure: true', 'disabled: true', 'logLevel: ERROR', 'logToFile: true', 'workerGroup: { key: gpu }'].map((prop): [string, string] => [
      `type: ai.service.plugin.core.debug.Return\nformat: x\n${prop}`,
      `\`${prop.split(':')[0]}\` cannot be honoured inside a rendered spec`,
    ]),
  ])('refuses %j', async (spec, message) => {
    t = makeTestContext({ task: { id: 'tpl', type: TYPE, spec } });
    const r = await plugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain(message);
    await t.cleanup();
    t = undefined;
  });
});
