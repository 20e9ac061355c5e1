// Tests of the python script tasks with real python3 processes, including the bundled `kestra` module.
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestContext, type TestContext } from '../testing.js';
import { installCommands, pythonCommandsPlugin, pythonScriptPlugin } from './python.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

describe('scripts.python.Script', () => {
  it('runs the rendered script; Kestra.outputs/counter/timer/logger become vars, metrics and logs', async () => {
    t = makeTestContext({
      task: {
        id: 'py', type: pythonScriptPlugin.type,
        script: [
          'from kestra import Kestra',
          'import sys',
          'print("flow {{ flow.id }}")',
          'Kestra.outputs({"total": 42, "items": ["a", "b"]})',
          'Kestra.counter("rows", 3, {"source": "db"})',
          'Kestra.timer("step", 0.25)',
          'Kestra.logger().warning("watch out")',
          'print("to stderr", file=sys.stderr)',
        ].join('\n'),
      },
    });
    const r = await pythonScriptPlugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs).toEqual({ exitCode: 0, vars: { total: 42, items: ['a', 'b'] } });
    expect(r.metrics).toEqual([
      { name: 'rows', type: 'counter', value: 3, tags: { source: 'db' } },
      { name: 'step', type: 'timer', value: 0.25, tags: {} },
    ]);
    expect(t.messages('INFO')).toEqual(['flow flow1']);
    expect(t.messages('WARN')).toEqual(['watch out']);
    expect(t.messages('ERROR')).toEqual(['to stderr']);
  });

  it('fails with the exit code of an exception, the traceback logged at ERROR', async () => {
    t = makeTestContext({ task: { id: 'py', type: pythonScriptPlugin.type, script: 'raise ValueError("boom")' } });
    const r = await pythonScriptPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toBe('Command failed with exit code 1');
    expect(t.messages('ERROR').some((m) => m.includes('ValueError: boom'))).toBe(true);
  });
});

describe('scripts.python.Commands', () => {
  it('runs shell commands that call python3 on input files, and collects output files', async () => {
    t = makeTestContext({
      task: {
        id: 'pyc', type: pythonCommandsPlugin.type,
        inputFiles: { 'main.py': 'import json\njson.dump({"n": 1}, open("result.json", "w"))\nprint("::" + json.dumps({"outputs": {"ok": True}}) + "::")' },
        beforeCommands: ['echo preparing'],
        commands: ['python3 main.py'],
        outputFiles: ['*.json'],
      },
    });
    const r = await pythonCommandsPlugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.vars).toEqual({ ok: true });
    const files = r.outputs?.outputFiles as Record<string, string>;
    expect(JSON.parse((await t.stores.storage.get(files['result.json']!)).toString())).toEqual({ n: 1 });
    expect(t.messages('INFO')).toEqual(['preparing']);
  });
});

describe('dependencies', () => {
  it('become one quoted pip install command', () => {
    t = makeTestContext({ task: { id: 'py', type: pythonScriptPlugin.type, dependencies: ['requests>=2', "odd'name"] } });
    expect(installCommands(t.ctx, { workingDir: '/w', outputDir: '/o' })).toEqual([
      `python3 -m pip install --quiet --disable-pip-version-check 'requests>=2' 'odd'\\''name'`,
    ]);
  });
});
