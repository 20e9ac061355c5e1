// Tests of the other-language script tasks with their real interpreters: Node.js (always present), Ruby and R (Debian's
// ruby and r-base-core, installed by scripts/install-services.sh); Julia and PowerShell, not in Debian, fail naming the way out.
import { afterEach, describe, expect, it } from 'vitest';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';

let t: TestContext | undefined;
const savedPath = process.env.PATH;
afterEach(async () => { await t?.cleanup(); t = undefined; process.env.PATH = savedPath; });

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

/** Runs a script task of `family` that reads an input file, writes an output file and prints the outputs protocol line. */
describe.each([
  ['ruby', [
    "data = File.read('in.txt').strip",
    "File.write('out.txt', data.upcase)",
    "puts 'ruby {{ flow.id }}'",
    'puts "::{\\"outputs\\":{\\"len\\":#{data.length},\\"lang\\":\\"ruby\\"}}::"',
  ]],
  ['r', [
    "data <- trimws(readLines('in.txt'))",
    "writeLines(toupper(data), 'out.txt')",
    "cat('r {{ flow.id }}\\n')",
    'cat(sprintf(\'::{"outputs":{"len":%d,"lang":"r"}}::\\n\', nchar(data)))',
  ]],
])('scripts.%s (real interpreter)', (family, script) => {
  it('runs a Script with inputFiles, outputFiles and ::{outputs}::', async () => {
    const type = `ai.service.plugin.scripts.${family}.Script`;
    t = makeTestContext({ task: { id: 's', type, inputFiles: { 'in.txt': 'hello\n' }, outputFiles: ['out.txt'], script: script.join('\n') } });
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.error).toBeUndefined();
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs!.vars).toEqual({ len: 5, lang: family });
    expect(t.messages('INFO')).toContain(`${family} flow1`);
    const uri = (r.outputs!.outputFiles as Record<string, string>)['out.txt']!;
    expect((await t.ctx.storage.get(uri)).toString().trim()).toBe('HELLO');
  });

  it('runs Commands calling the interpreter, and fails with its exit code', async () => {
    const type = `ai.service.plugin.scripts.${family}.Commands`;
    const commands = family === 'ruby' ? ["ruby -e 'puts 6 * 7'", "ruby -e 'exit 3'"] : ["Rscript -e 'cat(6 * 7)'", "Rscript -e 'quit(status = 3)'"];
    t = makeTestContext({ task: { id: 'c', type, commands } });
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toBe('Command failed with exit code 3');
    expect(t.messages('INFO')).toEqual(['42']);
  });
});

// (julia Commands run in the shell: nothing names julia before the command does, so the shell's message it is.)
describe('scripts without their interpreter', () => {
  it.each([['julia', 'julia', 'Script'], ['powershell', 'pwsh', 'Script'], ['powershell', 'pwsh', 'Commands']])('%s (%s) %s fails naming the interpreter and the Docker task runner way out', async (family, binary, kind) => {
    const type = `ai.service.plugin.scripts.${family}.${kind}`;
    process.env.PATH = '/usr/bin:/bin'; // neither is in Debian; make sure a developer's own install does not hide the message
    t = makeTestContext({ task: { id: 'x', type, script: 'println(1)', commands: ['Write-Output 1'] } });
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain(`The ${family} interpreter '${binary}' is not installed where this task runs`);
    expect(r.error).toContain('io.kestra.plugin.scripts.runner.docker.Docker');
    expect(r.error).toContain('containerImage');
  });
});
