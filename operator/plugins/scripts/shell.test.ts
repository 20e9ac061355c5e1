// Tests of the shell script tasks with real /bin/sh processes: outputs protocol, metrics, logs, exit codes,
// stderr, env, beforeCommands, input/output files, outputDir and kill.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../core/types.js';
import { makeTestContext, type TestContext } from '../testing.js';
import { shellCommandsPlugin, shellScriptPlugin } from './shell.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

function commands(props: Partial<Task> & { commands?: unknown }, variables?: Record<string, unknown>): TestContext {
  t = makeTestContext({ task: { id: 'sh', type: shellCommandsPlugin.type, ...props }, variables });
  return t;
}

/** Running and not a zombie (an orphan stays a zombie until PID 1 reaps it). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

describe('scripts.shell.Commands', () => {
  it('logs stdout at INFO and returns exitCode and empty vars', async () => {
    const c = commands({ commands: ['echo hello {{ flow.id }}', 'echo second'] });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r).toEqual({ state: 'SUCCESS', outputs: { exitCode: 0, vars: {} } });
    expect(c.messages('INFO')).toEqual(['hello flow1', 'second']);
    expect(c.messages('DEBUG')[0]).toMatch(/^Starting command with pid \d+ \[\/bin\/sh -c \.\.\.\]$/);
  });

  it('turns protocol lines into vars, metrics and logs', async () => {
    const c = commands({
      commands: [
        `echo '::{"outputs":{"a":1,"nested":{"b":"x"}}}::'`,
        `echo '::{"outputs":{"c":true}}::'`,
        `echo '::{"metrics":[{"name":"rows","type":"counter","value":5,"tags":{"t":"v"}},{"name":"took","type":"timer","value":1.5}]}::'`,
        `echo '::{"logs":[{"level":"WARN","message":"careful"}]}::'`,
      ],
    });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.outputs?.vars).toEqual({ a: 1, nested: { b: 'x' }, c: true });
    expect(r.metrics).toEqual([
      { name: 'rows', type: 'counter', value: 5, tags: { t: 'v' } },
      { name: 'took', type: 'timer', value: 1.5 },
    ]);
    expect(c.visibleLogs()).toEqual([{ level: 'WARN', message: 'careful' }]);
  });

  it('fails with the exit code, keeping outputs; failFast stops at the first failing command', async () => {
    const c = commands({ commands: [`echo '::{"outputs":{"x":1}}::'`, 'exit 3', 'echo never'] });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toBe('Command failed with exit code 3');
    expect(r.outputs).toEqual({ exitCode: 3, vars: { x: 1 } });
    expect(c.messages('INFO')).not.toContain('never');
  });

  it('continues after a failing command when failFast is false', async () => {
    const c = commands({ commands: ['false', 'echo after'], failFast: false });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(c.messages('INFO')).toEqual(['after']);
  });

  it('logs stderr at ERROR; SUCCESS by default, WARNING with warningOnStdErr', async () => {
    const c = commands({ commands: ['echo oops >&2'] });
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('SUCCESS');
    expect(c.messages('ERROR')).toEqual(['oops']);
    c.ctx.task = { ...c.ctx.task, warningOnStdErr: true };
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('WARNING');
  });

  it('passes rendered env plus WORKING_DIR and OUTPUT_DIR, runs beforeCommands first in the same shell', async () => {
    const c = commands({
      env: { GREETING: 'hi {{ flow.namespace }}' },
      beforeCommands: ['export FROM_BEFORE=yes'],
      commands: ['echo "$GREETING $FROM_BEFORE"', 'pwd', 'echo "$WORKING_DIR"', 'echo "{{ workingDir }}"', 'test -d "$OUTPUT_DIR" && echo out-ok'],
    });
    await shellCommandsPlugin.run(c.ctx);
    const dir = c.ctx.workingDir;
    expect(c.messages('INFO')).toEqual(['hi company.team yes', dir, dir, dir, 'out-ok']);
  });

  it('accepts env and inputFiles given as expressions yielding maps', async () => {
    const c = commands(
      { env: '{{ vars.envs }}', inputFiles: '{{ vars.files }}', commands: ['echo "$A"', 'cat f.txt'] },
      { vars: { envs: { A: 'from-env' }, files: { 'f.txt': 'from-file' } } },
    );
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('SUCCESS');
    expect(c.messages('INFO')).toEqual(['from-env', 'from-file']);
  });

  it('masks secrets in every log line', async () => {
    t = makeTestContext({ task: { id: 'sh', type: shellCommandsPlugin.type, commands: ['echo token=s3cr3t', 'echo s3cr3t >&2'] }, secrets: ['s3cr3t'] });
    await shellCommandsPlugin.run(t.ctx);
    expect(t.messages()).toEqual(['token=******', '******']);
  });

  it('masks a secret read while rendering env', async () => {
    t = makeTestContext({
      task: { id: 'sh', type: shellCommandsPlugin.type, env: { TOKEN: "{{ secret('API_TOKEN') }}" }, commands: ['echo "t=$TOKEN"'] },
      secretValues: { API_TOKEN: 'abc123xyz' },
    });
    expect((await shellCommandsPlugin.run(t.ctx)).state).toBe('SUCCESS');
    expect(t.messages('INFO')).toEqual(['t=******']);
  });

  it('writes inputFiles (subdirectories, storage URIs) and uploads outputFiles globs and outputDir files', async () => {
    const c = commands({ commands: [] });
    const uri = await c.stores.storage.put('company/team/other-flow/executions/earlier/tasks/t/r/in.csv', Buffer.from('x,y\n'));
    c.ctx.task = {
      ...c.ctx.task,
      inputFiles: { 'data/input.txt': 'from {{ flow.id }}', 'copy.csv': uri },
      outputFiles: ['*.out', 'reports/**'],
      commands: [
        'cat data/input.txt > a.out', 'cat copy.csv > b.out', 'echo no > c.txt',
        'mkdir -p reports/2024 && echo r > reports/2024/r.txt', 'echo d > "{{ outputDir }}/d.json"',
      ],
    };
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    const files = r.outputs?.outputFiles as Record<string, string>;
    expect(Object.keys(files).sort()).toEqual(['a.out', 'b.out', 'd.json', 'reports/2024/r.txt']);
    expect((await c.stores.storage.get(files['a.out']!)).toString()).toBe('from flow1');
    expect((await c.stores.storage.get(files['b.out']!)).toString()).toBe('x,y\n');
    expect((await c.stores.storage.get(files['d.json']!)).toString()).toBe('d\n');
    expect(files['a.out']).toBe('kestra:///company/team/flow1/executions/exec1/tasks/sh/tr1/a.out');
  });

  it.each([
    ['another namespace', 'victim/ns/flow/executions/e1/tasks/t/r/secret.csv'],
    ['a path outside the executions layout', 'etc/passwd'],
  ])('refuses an inputFiles URI of %s, naming the URI and the rule, and runs nothing', async (_what, path) => {
    const c = commands({ commands: ['touch ran'] });
    const uri = await c.stores.storage.put(path, Buffer.from('theirs'));
    c.ctx.task = { ...c.ctx.task, inputFiles: { 'copy.csv': uri } };
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain(`Reading '${uri}' is not allowed`);
    expect(r.error).toContain("execution files of its namespace 'company.team'");
    expect(existsSync(join(c.ctx.workingDir, 'ran'))).toBe(false);
  });

  it.each(['../escape.txt', '/etc/evil', 'a/../../b'])('refuses the input file name %s', async (name) => {
    const c = commands({ commands: ['true'], inputFiles: { [name]: 'x' } });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('Invalid input file name');
    expect(existsSync(join(c.dir, 'escape.txt'))).toBe(false);
    await c.cleanup();
    t = undefined;
  });

  it('kills the whole process group on abort and returns FAILED promptly', async () => {
    const c = commands({ commands: ['sleep 300 & echo $! > child.pid', 'echo started', 'wait'] });
    const pending = shellCommandsPlugin.run(c.ctx);
    const pidFile = join(c.ctx.workingDir, 'child.pid');
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 20));
    const childPid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(isAlive(childPid)).toBe(true);
    c.controller.abort();
    expect(await pending).toEqual({ state: 'FAILED', error: 'Task killed' });
    expect(isAlive(childPid)).toBe(false);
  });

  it('warns and runs locally with a Docker task runner; refuses unknown runners', async () => {
    const c = commands({
      commands: ['echo ran'], containerImage: 'ubuntu:22.04',
      taskRunner: { type: 'ai.service.plugin.scripts.runner.docker.Docker' },
    });
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('SUCCESS');
    expect(c.messages('WARN')[0]).toContain("containerImage 'ubuntu:22.04' is ignored");
    expect(c.messages('INFO')).toEqual(['ran']);
    c.ctx.task = { ...c.ctx.task, taskRunner: { type: 'io.kestra.plugin.scripts.runner.docker.DockerTaskRunner' } };
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('SUCCESS');
    c.ctx.task = { ...c.ctx.task, taskRunner: { type: 'io.kestra.plugin.core.runner.Process' } };
    expect((await shellCommandsPlugin.run(c.ctx)).state).toBe('SUCCESS');
    c.ctx.task = { ...c.ctx.task, taskRunner: { type: 'x.Kubernetes' } };
    expect((await shellCommandsPlugin.run(c.ctx)).error).toContain("Unsupported task runner 'x.Kubernetes'");
  });
});

describe('scripts.shell.Script', () => {
  it('runs the rendered script from a file and removes the file afterwards', async () => {
    t = makeTestContext({
      task: { id: 'sc', type: shellScriptPlugin.type, outputFiles: ['first.txt'],
        script: 'echo "exec {{ execution.id }}"\necho 1 >> first.txt\necho \'::{"outputs":{"done":"yes"}}::\'' },
    });
    writeFileSync(join(t.ctx.workingDir, 'keep.txt'), 'k');
    const r = await shellScriptPlugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.vars).toEqual({ done: 'yes' });
    expect(Object.keys(r.outputs?.outputFiles as object)).toEqual(['first.txt']);
    expect(t.messages('INFO')).toEqual(['exec exec1']);
    expect(existsSync(join(t.ctx.workingDir, 'script_tr1.sh'))).toBe(false);
  });

  it('runs the script file with the interpreter shell', async () => {
    t = makeTestContext({
      task: { id: 'sc', type: shellScriptPlugin.type, interpreter: ['/bin/bash', '-c'], script: 'echo "${BASH_VERSION:+bash}"' },
    });
    await shellScriptPlugin.run(t.ctx);
    expect(t.messages('INFO')).toEqual(['bash']);
  });

  it('fails with the script exit code', async () => {
    t = makeTestContext({ task: { id: 'sc', type: shellScriptPlugin.type, script: 'exit 7' } });
    expect((await shellScriptPlugin.run(t.ctx)).error).toBe('Command failed with exit code 7');
  });
});
