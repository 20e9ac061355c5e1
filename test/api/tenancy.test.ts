// Black-box tests of tenancy through the embedded service: an execution reaches only its own files, its FILE inputs,
// its parent's and children's files and its namespace's; another namespace's files and KV entries only where
// ALLOWED_NAMESPACES grants them. Every refusal names the URI or key and the rule, and leaves the victim's data as is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const SHELL = 'ai.service.plugin.scripts.shell.Commands';
const RETURN = 'ai.service.plugin.core.debug.Return';
const TERMINAL = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'];

let e: Embedded;
let victimFile: string;

async function upload(ns: string, flowId: string, field: string, content: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append(field, new Blob([content]), 'data.txt');
  const res = await fetch(`${e.base}/executions/${ns}/${flowId}`, { method: 'POST', body: form });
  return { status: res.status, body: await res.json() };
}

async function run(ns: string, flowId: string, inputs: Record<string, unknown> = {}): Promise<any> {
  const created = await e.execute(ns, flowId, 'create', inputs);
  return e.waitFor(created.id, (x) => TERMINAL.includes(x.state.current));
}

const errorOf = (exec: any, taskId: string): string => exec.taskRunList.find((r: any) => r.taskId === taskId)?.error ?? '';

beforeAll(async () => {
  e = await startEmbedded({ PATH: process.env.PATH, ALLOWED_NAMESPACES: '{"shared.config": ["tenant.*"]}' });
  // The victim: a file in its execution's storage and a KV entry.
  await e.createFlow(`id: keep\nnamespace: victim.ns\ninputs:\n  - id: doc\n    type: FILE\ntasks:\n  - id: t\n    type: ${RETURN}\n    format: ok\n`);
  const up = await upload('victim.ns', 'keep', 'doc', 'victim secret data');
  expect(up.status).toBe(200);
  victimFile = up.body.inputs.doc;
  await e.json('/namespaces/victim.ns/kv/token', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '"victim-kv"' });
  await e.json('/namespaces/shared.config/kv/region', { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '"eu"' });

  await e.createFlow(`id: reader\nnamespace: tenant.a\ninputs:\n  - id: doc\n    type: FILE\n    required: false\ntasks:
  - id: copy
    type: ${SHELL}
    inputFiles:
      in.txt: "{{ inputs.doc }}"
    commands:
      - echo '::{"outputs":{"text":"'$(cat in.txt)'"}}::'
`);
  await e.createFlow(`id: child\nnamespace: other.team\ninputs:\n  - id: doc\n    type: FILE\ntasks:
  - id: copy
    type: ${SHELL}
    inputFiles:
      in.txt: "{{ inputs.doc }}"
    commands:
      - echo '::{"outputs":{"text":"'$(cat in.txt)'"}}::'
outputs:
  - id: text
    type: STRING
    value: "{{ outputs.copy.vars.text }}"
`);
  await e.createFlow(`id: parent\nnamespace: tenant.a\ninputs:\n  - id: doc\n    type: FILE\ntasks:
  - id: call
    type: ai.service.plugin.core.flow.Subflow
    namespace: other.team
    flowId: child
    wait: true
    transmitFailed: true
    inputs:
      doc: "{{ inputs.doc }}"
`);
}, 60_000);
afterAll(async () => { await e?.close(); });

describe('FILE inputs given as URIs', () => {
  it.each([
    ["another namespace's file", () => victimFile, "is not allowed"],
    ['a path outside the executions layout', () => 'kestra:///etc/passwd', 'this path is not an execution file'],
    ['a host path', () => '/etc/passwd', 'is not an internal storage URI'],
  ])('refuses %s with 422 naming the input, and creates nothing', async (_what, uri, message) => {
    const before = (await e.json('/executions/search?namespace=tenant.a')).body.total;
    const res = await e.json('/executions/tenant.a/reader', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ doc: uri() }) });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].path).toBe('inputs.doc');
    expect(res.body.errors[0].message).toContain(message);
    expect((await e.json('/executions/search?namespace=tenant.a')).body.total).toBe(before);
  });

  it('accepts an upload, and an existing file of an earlier execution of the same namespace', async () => {
    const up = await upload('tenant.a', 'reader', 'doc', 'mine');
    expect(up.status).toBe(200);
    const first = await e.waitFor(up.body.id, (x) => TERMINAL.includes(x.state.current));
    expect(first.state.current).toBe('SUCCESS');
    expect(first.taskRunList[0].outputs?.vars?.text, JSON.stringify(first.taskRunList[0])).toBe('mine');
    const again = await run('tenant.a', 'reader', { doc: up.body.inputs.doc });
    expect(again.state.current).toBe('SUCCESS');
    expect(again.taskRunList[0].outputs.vars.text).toBe('mine');
  });

  it('refuses a same-namespace URI that does not exist', async () => {
    const res = await e.json('/executions/tenant.a/reader', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ doc: 'kestra:///tenant/a/reader/executions/nope/inputs/doc/x.txt' }) });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toEqual({ path: 'inputs.doc', message: "file 'kestra:///tenant/a/reader/executions/nope/inputs/doc/x.txt' does not exist" });
  });

  it("hands the parent's file to a child of another namespace, which may read it as its FILE input", async () => {
    const up = await upload('tenant.a', 'parent', 'doc', 'from-parent');
    const done = await e.waitFor(up.body.id, (x) => TERMINAL.includes(x.state.current));
    expect(done.state.current).toBe('SUCCESS');
    const child = (await e.json(`/executions/search?namespace=other.team&flowId=child`)).body.results[0];
    expect(child.outputs).toEqual({ text: 'from-parent' });
  });
});

describe('task properties naming files', () => {
  it("a script's inputFiles cannot copy another namespace's file: the task fails naming the URI and the rule", async () => {
    await e.createFlow(`id: thief\nnamespace: tenant.a\ntasks:\n  - id: steal\n    type: ${SHELL}\n    inputFiles:\n      loot.txt: "${victimFile}"\n    commands:\n      - cat loot.txt\n`);
    const done = await run('tenant.a', 'thief');
    expect(done.state.current).toBe('FAILED');
    expect(errorOf(done, 'steal')).toContain(`Reading '${victimFile}' is not allowed`);
    const logs = (await e.json(`/logs/${done.id}`)).body as { message: string }[];
    expect(logs.map((l) => l.message).join('\n')).not.toContain('victim secret data');
  });
});

describe('kv() and read() in templates', () => {
  it.each([
    ['a task property', (expr: string) => `  - id: t\n    type: ${RETURN}\n    format: "{{ ${expr} }}"\n`, 't'],
    ['a flowable property (If condition, rendered by the engine)', (expr: string) =>
      `  - id: t\n    type: ai.service.plugin.core.flow.If\n    condition: "{{ ${expr} != 'x' }}"\n    then:\n      - id: n\n        type: ${RETURN}\n        format: n\n`, 't'],
  ])('in %s, reach only what the execution may reach', async (_where, task, taskId) => {
    const cases: [string, string, string][] = [
      ['kvv', "kv('token', 'victim.ns')", "KV key 'token' of namespace 'victim.ns' is not accessible from namespace 'tenant.a'"],
      ['readv', `read('${victimFile}')`, `Reading '${victimFile}' is not allowed`],
      ['readh', "read('kestra:///etc/passwd')", "Reading 'kestra:///etc/passwd' is not allowed"],
    ];
    for (const [id, expr, message] of cases) {
      const flowId = `${id}-${taskId}-${_where.length}`;
      await e.createFlow(`id: ${flowId}\nnamespace: tenant.a\ntasks:\n${task(expr)}`);
      const done = await run('tenant.a', flowId);
      expect(done.state.current, expr).toBe('FAILED');
      expect(errorOf(done, taskId), expr).toContain(message);
      const logs = (await e.json(`/logs/${done.id}`)).body as { message: string }[];
      const seen = JSON.stringify(done) + logs.map((l) => l.message).join('\n');
      expect(seen).not.toContain('victim-kv');
      expect(seen).not.toContain('victim secret data');
    }
    await e.createFlow(`id: kvok-${_where.length}\nnamespace: tenant.a\ntasks:\n${task("kv('region', 'shared.config')")}`);
    expect((await run('tenant.a', `kvok-${_where.length}`)).state.current).toBe('SUCCESS');
  });

  it('in webhook inputs, reach only the namespace of the flow', async () => {
    await e.createFlow(`id: hook\nnamespace: tenant.a\ninputs:\n  - id: v\n    type: STRING\ntriggers:\n  - id: w\n    type: ai.service.plugin.core.trigger.Webhook\n    key: k1234567890\n    inputs:\n      v: "{{ kv('token', 'victim.ns') }}"\ntasks:\n  - id: t\n    type: ${RETURN}\n    format: "{{ inputs.v }}"\n`);
    const res = await e.json('/executions/webhook/tenant.a/hook/k1234567890', { method: 'POST' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("KV key 'token' of namespace 'victim.ns' is not accessible from namespace 'tenant.a'");
    expect(JSON.stringify(res.body)).not.toContain('victim-kv');
  });
});

describe('KV of other namespaces', () => {
  it('a KV task cannot read or overwrite another namespace: it fails naming the key and the rule', async () => {
    await e.createFlow(`id: kvthief\nnamespace: tenant.a\ntasks:
  - id: get
    type: ai.service.plugin.core.kv.Get
    namespace: victim.ns
    key: token
  - id: set
    type: ai.service.plugin.core.kv.Set
    namespace: victim.ns
    key: token
    value: overwritten
    allowFailure: true
`);
    const done = await run('tenant.a', 'kvthief');
    expect(done.state.current).toBe('FAILED');
    expect(errorOf(done, 'get')).toBe("KV key 'token' of namespace 'victim.ns' is not accessible from namespace 'tenant.a': a flow reaches only its own namespace unless ALLOWED_NAMESPACES grants more");
    expect((await e.json('/namespaces/victim.ns/kv/token')).body.value).toBe('victim-kv');
  });

  it('reads a namespace ALLOWED_NAMESPACES grants', async () => {
    await e.createFlow(`id: kvshared\nnamespace: tenant.a\ntasks:\n  - id: get\n    type: ai.service.plugin.core.kv.Get\n    namespace: shared.config\n    key: region\n`);
    const done = await run('tenant.a', 'kvshared');
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList[0].outputs).toEqual({ value: 'eu' });
  });
});
