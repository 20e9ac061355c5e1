// The flowpilot CLI as a child process against a real embedded server (SQLite stores, the Koa API, the controller
// running tasks): deploy (create, update, delete, dry run), run with --wait and each exit code, file inputs, logs
// --follow, kv, execution actions, output formats, and its one-line errors with their exit codes.
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';
import { cli, startCli } from './run-cli.js';

const NS = 'cli.test';
const flows: Record<string, string> = {
  ok: `id: ok\nnamespace: ${NS}\ninputs:\n  - id: name\n    type: STRING\n    defaults: world\ntasks:\n  - id: hello\n    type: io.kestra.plugin.core.log.Log\n    message: "Hello {{ inputs.name }}"\n  - id: shout\n    type: io.kestra.plugin.core.debug.Return\n    format: "{{ inputs.name | upper }}"\noutputs:\n  - id: greeting\n    type: STRING\n    value: "{{ outputs.shout.value }}"\n`,
  warn: `id: warn\nnamespace: ${NS}\ntasks:\n  - id: exit\n    type: io.kestra.plugin.core.execution.Exit\n    state: WARNING\n`,
  fail: `id: fail\nnamespace: ${NS}\ntasks:\n  - id: boom\n    type: io.kestra.plugin.core.execution.Fail\n    errorMessage: on purpose\n`,
  slow: `id: slow\nnamespace: ${NS}\ntasks:\n  - id: wait\n    type: io.kestra.plugin.core.flow.Sleep\n    duration: PT60S\n`,
  file: `id: file\nnamespace: ${NS}\ninputs:\n  - id: data\n    type: FILE\ntasks:\n  - id: count\n    type: io.kestra.plugin.core.debug.Return\n    format: "{{ read(inputs.data) | trim | replace({'\\n': '+'}) }}"\noutputs:\n  - id: joined\n    type: STRING\n    value: "{{ outputs.count.value }}"\n`,
  chatty: `id: chatty\nnamespace: ${NS}\ntasks:\n  - id: one\n    type: io.kestra.plugin.core.log.Log\n    message: first line\n  - id: pause\n    type: io.kestra.plugin.core.flow.Sleep\n    duration: PT1S\n  - id: two\n    type: io.kestra.plugin.core.log.Log\n    level: WARN\n    message: second line\n`,
};

/** A port nothing listens on (taken, then given back). */
function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

let e: Embedded;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  e = await startEmbedded();
  env = { FLOWPILOT_URL: e.base.replace(/\/api\/v1$/, '') };
  dir = mkdtempSync(join(tmpdir(), 'flowpilot-cli-'));
  mkdirSync(join(dir, 'flows'));
  for (const [name, src] of Object.entries(flows)) writeFileSync(join(dir, 'flows', `${name}.yaml`), src);
});
afterAll(async () => {
  await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('flow deploy', { timeout: 120_000 }, () => {
  it('plans without changing anything on --dry-run, then creates, updates only what changed, and deletes with --delete', async () => {
    const dry = await cli(['flow', 'deploy', join(dir, 'flows'), '--dry-run', '-o', 'json'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).map((p: any) => `${p.action} ${p.id}`).sort()).toEqual(Object.keys(flows).map((f) => `create ${f}`).sort());
    expect((await e.json(`/flows/${NS}`)).body).toEqual([]);

    const first = await cli(['flow', 'deploy', join(dir, 'flows')], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/create\s+cli\.test\s+ok\s+1/);
    expect(first.stdout).toContain(`${Object.keys(flows).length} create`);
    expect((await e.json(`/flows/${NS}/ok?source=true`)).body.source).toBe(flows.ok);

    // One flow changes, one appears only on the server: update ok 1 -> 2, the rest unchanged, extra kept without --delete.
    writeFileSync(join(dir, 'flows', 'ok.yaml'), flows.ok.replace('defaults: world', 'defaults: there'));
    await e.createFlow(`id: extra\nnamespace: ${NS}\ntasks:\n  - id: t\n    type: io.kestra.plugin.core.log.Log\n    message: x\n`);
    const second = await cli(['flow', 'deploy', join(dir, 'flows'), '-n', NS, '-o', 'json'], env);
    expect(second.code, second.stderr).toBe(0);
    const plan = JSON.parse(second.stdout) as any[];
    expect(plan.find((p) => p.id === 'ok')).toMatchObject({ action: 'update', previousRevision: 1, revision: 2 });
    expect(plan.find((p) => p.id === 'warn')).toMatchObject({ action: 'unchanged', revision: 1 });
    expect(plan.some((p) => p.id === 'extra')).toBe(false);
    expect((await e.json(`/flows/${NS}/warn`)).body.revision).toBe(1);

    const pruneDry = await cli(['flow', 'deploy', join(dir, 'flows'), '--delete', '--dry-run'], env);
    expect(pruneDry.stdout).toMatch(/delete\s+cli\.test\s+extra/);
    expect((await e.json(`/flows/${NS}/extra`)).status).toBe(200);
    const prune = await cli(['flow', 'deploy', join(dir, 'flows'), '--delete'], env);
    expect(prune.code, prune.stderr).toBe(0);
    expect(prune.stdout).toMatch(/1 delete/);
    expect((await e.json(`/flows/${NS}/extra`)).status).toBe(404);
    expect((await e.json(`/flows/${NS}/ok`)).body.revision).toBe(2);
  });

  it('sends nothing when a flow is invalid (file:line shown, exit 1), and refuses flows outside --namespace', async () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'a.yaml'), `id: new-one\nnamespace: ${NS}\ntasks:\n  - id: t\n    type: io.kestra.plugin.core.log.Log\n    message: x\n`);
    writeFileSync(join(bad, 'b.yaml'), `id: broken\nnamespace: ${NS}\ntasks:\n  - id: t\n    type: nope.Task\n`);
    const r = await cli(['flow', 'deploy', bad], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${join(bad, 'b.yaml')}:5: error: tasks[0].type: Unknown task type \`nope.Task\``);
    expect((await e.json(`/flows/${NS}/new-one`)).status).toBe(404);
    const other = await cli(['flow', 'deploy', join(dir, 'flows'), '--namespace', 'elsewhere'], env);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^error: .*flow cli\.test\.\w+ is not in namespace 'elsewhere'/m);
  });
});

describe('run', { timeout: 120_000 }, () => {
  it('--wait prints progress on stderr and the outputs on stdout, exit 0 on SUCCESS', async () => {
    const r = await cli(['run', NS, 'ok', '--input', 'name=cli', '--label', 'team=cli', '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/hello SUCCESS/);
    expect(r.stderr).toMatch(/shout SUCCESS/);
    expect(r.stdout).toMatch(/^execution \S+ SUCCESS/);
    expect(r.stdout).toContain('greeting: CLI');
    const id = /^execution (\S+)/.exec(r.stdout)![1]!;
    const stored = (await e.json(`/executions/${id}`)).body;
    expect(stored.labels).toContainEqual({ key: 'team', value: 'cli' });
  });

  it.each([
    ['warn', 4, 'WARNING'],
    ['fail', 1, 'FAILED'],
  ])('exit code of %s is %i (%s)', async (flow, code, state) => {
    const r = await cli(['run', NS, flow, '--wait', '-o', 'json'], env);
    expect(r.code, r.stderr).toBe(code);
    expect(JSON.parse(r.stdout).state.current).toBe(state);
  });

  it('exit code 3 when the execution it waits for is killed', async () => {
    const run = startCli(['run', NS, 'slow', '--wait'], env);
    let id: string | undefined;
    for (let i = 0; i < 200 && !id; i++) {
      id = /execution (\S+) of/.exec(run.stderrSoFar())?.[1];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(id).toBeDefined();
    await e.waitFor(id!, (x) => x.state.current === 'RUNNING');
    const kill = await cli(['execution', 'kill', id!], env);
    expect(kill.code, kill.stderr).toBe(0);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('KILLED');
  });

  it('uploads --input key=@file as a file input', async () => {
    const csv = join(dir, 'data.csv');
    writeFileSync(csv, 'a\nb\nc\n');
    const r = await cli(['run', NS, 'file', '--input', `data=@${csv}`, '--wait', '-o', 'yaml'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(parseYaml(r.stdout).outputs).toEqual({ joined: 'a+b+c' });
  });

  it('without --wait prints the new execution and exits 0 at once', async () => {
    const r = await cli(['run', NS, 'ok', '-o', 'json'], env);
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.namespace).toBe(NS);
    await e.waitFor(created.id, (x) => x.state.current === 'SUCCESS');
    const got = await cli(['execution', 'get', created.id], env);
    expect(got.stdout).toMatch(/SUCCESS/);
    expect(got.stdout).toMatch(/shout\s+SUCCESS/);
  });

  it('--follow prints the log lines while waiting', async () => {
    const r = await cli(['run', NS, 'chatty', '--follow'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/INFO\s+one first line/);
    expect(r.stderr).toMatch(/WARN\s+two second line/);
  });
});

describe('logs', { timeout: 120_000 }, () => {
  it('--follow prints stored and new lines until the execution ends; --level filters', async () => {
    const started = (await e.execute(NS, 'chatty')) as { id: string };
    const r = await cli(['logs', started.id, '--follow'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.some((l) => /INFO\s+one first line/.test(l))).toBe(true);
    expect(lines.some((l) => /WARN\s+two second line/.test(l))).toBe(true);
    const warnOnly = await cli(['logs', started.id, '--level', 'WARN', '-o', 'json'], env);
    expect(JSON.parse(warnOnly.stdout).map((l: any) => l.message)).toEqual(['second line']);
    const unknown = await cli(['logs', 'nope-id'], env);
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toMatch(/^error: execution 'nope-id' not found/);
  });
});

describe('kv', { timeout: 120_000 }, () => {
  it('sets, gets, lists and deletes values with their types', async () => {
    expect((await cli(['kv', 'set', NS, 'count', '42'], env)).code).toBe(0);
    expect((await cli(['kv', 'set', NS, 'greeting', 'hello there'], env)).code).toBe(0);
    expect((await cli(['kv', 'set', NS, 'literal', '42', '--string'], env)).code).toBe(0);
    expect((await e.json(`/namespaces/${NS}/kv/count`)).body).toEqual({ type: 'NUMBER', value: 42 });
    expect((await e.json(`/namespaces/${NS}/kv/literal`)).body).toEqual({ type: 'STRING', value: '42' });
    expect((await cli(['kv', 'get', NS, 'greeting'], env)).stdout).toBe('hello there\n');
    expect(JSON.parse((await cli(['kv', 'get', NS, 'count', '-o', 'json'], env)).stdout)).toEqual({ type: 'NUMBER', value: 42 });
    const list = await cli(['kv', 'list', NS], env);
    expect(list.stdout).toMatch(/^KEY\s+TYPE/);
    expect(list.stdout).toMatch(/count\s+NUMBER/);
    const del = await cli(['kv', 'delete', NS, 'count'], env);
    expect(del.stdout).toContain(`deleted ${NS}/count`);
    const missing = await cli(['kv', 'get', NS, 'count'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: no key 'count' in namespace 'cli\.test'/);
  });
});

describe('flows and executions read back', { timeout: 120_000 }, () => {
  it('flow get/list/export, execution list, trigger list', async () => {
    const get = await cli(['flow', 'get', NS, 'ok', '--source'], env);
    expect(get.stdout).toContain('id: ok');
    const list = await cli(['flow', 'list', NS], env);
    expect(list.stdout).toMatch(/cli\.test\s+ok\s+2/);
    const out = join(dir, 'export');
    const exp = await cli(['flow', 'export', NS, '--dir', out], env);
    expect(exp.code, exp.stderr).toBe(0);
    const check = await cli(['flow', 'validate', out], env);
    expect(check.code, check.stderr).toBe(0);
    const execs = await cli(['execution', 'list', '--namespace', NS, '--flow', 'ok', '--state', 'SUCCESS', '-o', 'json'], env);
    expect(JSON.parse(execs.stdout).results.every((x: any) => x.flowId === 'ok' && x.state.current === 'SUCCESS')).toBe(true);
    const triggers = await cli(['trigger', 'list', '-n', NS], env);
    expect(triggers.code, triggers.stderr).toBe(0);
  });

  it('restart of a failed execution, waited for, ends FAILED again (exit 1)', async () => {
    const failed = (await e.execute(NS, 'fail')) as { id: string };
    await e.waitFor(failed.id, (x) => x.state.current === 'FAILED');
    const r = await cli(['execution', 'restart', failed.id, '--wait'], env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAILED/);
  });
});

describe('errors', { timeout: 120_000 }, () => {
  it('are one line with the exit code of their kind, never a stack trace', async () => {
    const port = await freePort();
    const refused = await cli(['flow', 'list', '--server', `http://127.0.0.1:${port}`], env);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED\\. Start the server`));
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    const usage = await cli(['run', NS], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/missing required argument 'flow'/);
    const badOption = await cli(['kv', 'list', NS, '--nope'], env);
    expect(badOption.code).toBe(2);
    const missing = await cli(['run', NS, 'no-such-flow', '--wait'], env);
    expect(missing.code).toBe(6);
    expect(missing.stderr).toMatch(/^error: POST \/executions\/cli\.test\/no-such-flow failed \(404\)/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });
});
