// Tests of the other-language script tasks, with a real Node.js process (the interpreter always present).
import { afterEach, describe, expect, it } from 'vitest';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

describe('scripts.node', () => {
  it('runs a Node script whose @kestra-io/libs calls become outputs, metrics and logs', async () => {
    const type = 'ai.service.plugin.scripts.node.Script';
    t = makeTestContext({
      task: {
        id: 'js', type,
        script: [
          "const Kestra = require('@kestra-io/libs');",
          "console.log('flow {{ flow.id }}');",
          'Kestra.outputs({ sum: 1 + 2 });',
          "Kestra.counter('n', 2, { a: 'b' });",
          "Kestra.logger().warn('hmm');",
        ].join('\n'),
      },
    });
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs).toEqual({ exitCode: 0, vars: { sum: 3 } });
    expect(r.metrics).toEqual([{ name: 'n', type: 'counter', value: 2, tags: { a: 'b' } }]);
    expect(t.visibleLogs()).toEqual([{ level: 'INFO', message: 'flow flow1' }, { level: 'WARN', message: 'hmm' }]);
  });

  it('runs Node commands in the shell', async () => {
    const type = 'ai.service.plugin.scripts.node.Commands';
    t = makeTestContext({
      task: { id: 'js', type, inputFiles: { 'main.js': 'console.log(process.argv[2])' }, commands: [`"${process.execPath}" main.js hi`] },
    });
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(t.messages('INFO')).toEqual(['hi']);
  });
});
