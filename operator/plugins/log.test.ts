// Tests of core.log.Log, core.debug.Return and core.execution.Labels against a real RunContext.
import { afterEach, describe, expect, it } from 'vitest';
import { labelsPlugin } from './labels.js';
import { logPlugin } from './log.js';
import { returnPlugin } from './return.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

describe('core.log.Log', () => {
  it('logs a rendered message at INFO by default', async () => {
    t = makeTestContext({ task: { id: 'l', type: logPlugin.type, message: 'hello {{ flow.id }}' } });
    const r = await logPlugin.run(t.ctx);
    expect(r).toEqual({ state: 'SUCCESS' });
    expect(t.logs).toEqual([{ level: 'INFO', message: 'hello flow1' }]);
  });

  it('logs every message of a list at the given level, secrets masked', async () => {
    t = makeTestContext({
      task: { id: 'l', type: logPlugin.type, level: 'WARN', message: ['a {{ vars.pw }}', 'b'] },
      variables: { vars: { pw: 'hunter2' } }, secrets: ['hunter2'],
    });
    await logPlugin.run(t.ctx);
    expect(t.logs).toEqual([{ level: 'WARN', message: 'a ******' }, { level: 'WARN', message: 'b' }]);
  });

  it('fails with the render error message', async () => {
    t = makeTestContext({ task: { id: 'l', type: logPlugin.type, message: '{{ nope.x }}' } });
    const r = await logPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('nope.x');
  });

  it('rejects an unknown level', async () => {
    t = makeTestContext({ task: { id: 'l', type: logPlugin.type, level: 'LOUD', message: 'x' } });
    expect((await logPlugin.run(t.ctx)).error).toBe("Invalid log level 'LOUD'");
  });
});

describe('core.debug.Return', () => {
  it('returns the rendered format as value', async () => {
    t = makeTestContext({ task: { id: 'r', type: returnPlugin.type, format: '{{ task.id }} > {{ taskrun.id }}' } });
    expect(await returnPlugin.run(t.ctx)).toEqual({ state: 'SUCCESS', outputs: { value: 'r > tr1' } });
  });
});

describe('core.execution.Labels', () => {
  it('accepts a map, rendering and stringifying values', async () => {
    t = makeTestContext({
      task: { id: 'lb', type: labelsPlugin.type, labels: { env: '{{ vars.env }}', n: 3 } }, variables: { vars: { env: 'prod' } },
    });
    const r = await labelsPlugin.run(t.ctx);
    expect(r).toEqual({ state: 'SUCCESS', executionLabels: [{ key: 'env', value: 'prod' }, { key: 'n', value: '3' }] });
  });

  it('accepts a list of key/value pairs', async () => {
    t = makeTestContext({ task: { id: 'lb', type: labelsPlugin.type, labels: [{ key: 'a', value: 'x' }, { key: 'a', value: 'y' }] } });
    expect((await labelsPlugin.run(t.ctx)).executionLabels).toEqual([{ key: 'a', value: 'y' }]);
  });

  it('fails without labels', async () => {
    t = makeTestContext({ task: { id: 'lb', type: labelsPlugin.type } });
    expect((await labelsPlugin.run(t.ctx)).state).toBe('FAILED');
  });
});
