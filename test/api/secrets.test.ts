// Secrets never appear in clear, through the whole embedded service with SECRET_MYSECRET set: not in the execution
// JSON (labels, flow and task outputs, Fail messages, errors), the logs, webhook-created executions, KV values, nor error
// answers; SECRET inputs are stored encrypted yet reach a script in clear; scripts do not inherit the server's secrets.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const SECRET = 's3cr3t-value-of-mine-1234567';
const PW = 'hunter2-input-password';
const B64 = (s: string) => Buffer.from(s).toString('base64');
const NS = 'sec.team';
const isTerminal = (e: any) => ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(e?.state?.current);

let e: Embedded;
const saved = { ...process.env };

/** The clear secret, the SECRET input and their base64 forms appear nowhere in `text`. */
function expectClean(text: string): void {
  for (const v of [SECRET, B64(SECRET), PW, B64(PW)]) expect(text, `leaks ${v}`).not.toContain(v);
}

async function run(flowId: string, inputs: Record<string, unknown> = {}): Promise<{ exec: any; json: string; logs: string }> {
  const created = await e.execute(NS, flowId, 'create', inputs);
  const exec = await e.waitFor(created.id, isTerminal);
  await e.stores.logs.flush();
  const logs = (await e.json(`/logs/${created.id}`)).body;
  return { exec, json: JSON.stringify(exec), logs: JSON.stringify(logs) };
}

beforeAll(async () => {
  // The server's own environment, which scripts used to inherit whole.
  Object.assign(process.env, { SECRET_MYSECRET: B64(SECRET), ACCESS_TOKENS: 'server-access-token' });
  e = await startEmbedded({ PATH: process.env.PATH, SECRET_MYSECRET: B64(SECRET) });
});
afterAll(async () => {
  await e.close();
  for (const k of ['SECRET_MYSECRET', 'ACCESS_TOKENS']) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
});

describe('a flow that tries every leak', () => {
  let result: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    await e.createFlow(`id: leaks
namespace: ${NS}
inputs:
  - id: pw
    type: SECRET
outputs:
  - id: out
    type: STRING
    value: "{{ secret('MYSECRET') }} {{ inputs.pw }}"
tasks:
  - id: labels
    type: ai.service.plugin.core.execution.Labels
    labels:
      token: "{{ secret('MYSECRET') }}"
      pw: "{{ inputs.pw }}"
  - id: ret
    type: ai.service.plugin.core.debug.Return
    format: "{{ secret('MYSECRET') }} {{ secret('MYSECRET') | base64encode }} {{ inputs.pw }}"
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "secret={{ secret('MYSECRET') }} pw={{ inputs.pw }} b64={{ inputs.pw | base64encode }}"
  - id: sh
    type: ai.service.plugin.scripts.shell.Commands
    env:
      PW: "{{ inputs.pw }}"
      TOKEN: "{{ secret('MYSECRET') }}"
    commands:
      - echo "token=$TOKEN pw=$PW"
      - echo "::{\\"outputs\\":{\\"pwLength\\":\${#PW},\\"pwSha\\":\\"$(printf %s "$PW" | sha256sum | cut -d' ' -f1)\\",\\"env\\":\\"$(env | cut -d= -f1 | sort | tr '\\n' ' ')\\"}}::"
  - id: json_error
    type: ai.service.plugin.core.debug.Return
    allowFailure: true
    format: "{{ json(secret('MYSECRET')) }}"
`);
    result = await run('leaks', { pw: PW });
  });

  it('ends (WARNING: the json error is allowed) with every secret masked in the execution JSON', () => {
    const { exec, json } = result;
    if (process.env.SHOW_RECORD) console.log(JSON.stringify(exec, null, 1), result.logs);
    expect(exec.state.current, json).toBe('WARNING');
    expectClean(json);
    expect(exec.labels).toEqual(expect.arrayContaining([{ key: 'token', value: '******' }, { key: 'pw', value: '******' }]));
    expect(exec.outputs).toEqual({ out: '****** ******' });
    const ret = exec.taskRunList.find((r: any) => r.taskId === 'ret');
    expect(ret.outputs.value).toBe('****** ****** ******');
    const jsonError = exec.taskRunList.find((r: any) => r.taskId === 'json_error');
    expect(jsonError.state.current).toBe('WARNING');
    expect(jsonError.error ?? JSON.stringify(jsonError)).toMatch(/invalid JSON/);
  });

  it('stores the SECRET input encrypted; the API shows only that form', () => {
    expect(result.exec.inputs.pw).toMatch(/^fpenc1:[A-Za-z0-9+/=]+$/);
  });

  it('masks the logs (a Log task, a script echo)', () => {
    expectClean(result.logs);
    expect(result.logs).toContain('secret=****** pw=****** b64=******');
    expect(result.logs).toContain('token=****** pw=******');
  });

  it('gives a script the clear SECRET input through its env (its length and hash prove it), not the server secrets', () => {
    const sh = result.exec.taskRunList.find((r: any) => r.taskId === 'sh');
    expect(sh.outputs.vars.pwLength).toBe(PW.length);
    expect(sh.outputs.vars.pwSha).toBe(createHash('sha256').update(PW).digest('hex'));
    const env = String(sh.outputs.vars.env).trim().split(' ');
    expect(env).toEqual(expect.arrayContaining(['PW', 'TOKEN', 'PATH', 'WORKING_DIR']));
    expect(env).not.toContain('SECRET_MYSECRET');
    expect(env).not.toContain('ACCESS_TOKENS');
  });

  it('a replay keeps the encrypted input and still opens it', async () => {
    const replay = await e.json(`/executions/${result.exec.id}/replay`, { method: 'POST' });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    const exec = await e.waitFor(replay.body.id, isTerminal);
    expect(exec.inputs.pw).toBe(result.exec.inputs.pw);
    expectClean(JSON.stringify(exec));
    expect(exec.taskRunList.find((r: any) => r.taskId === 'sh').outputs.vars.pwLength).toBe(PW.length);
  });
});

it('masks a Fail message in the execution error, the task run and the logs', async () => {
  await e.createFlow(`id: failing
namespace: ${NS}
inputs:
  - id: pw
    type: SECRET
tasks:
  - id: fail
    type: ai.service.plugin.core.execution.Fail
    errorMessage: "boom {{ secret('MYSECRET') }} {{ inputs.pw }}"
`);
  const { exec, json, logs } = await run('failing', { pw: PW });
  expect(exec.state.current).toBe('FAILED');
  expectClean(json);
  expectClean(logs);
  expect(logs).toContain('boom ****** ******');
});

it('masks a KV value set from secret(): read back through the API and through kv()', async () => {
  await e.createFlow(`id: kv
namespace: ${NS}
tasks:
  - id: set
    type: ai.service.plugin.core.kv.Set
    key: stolen
    value: "{{ secret('MYSECRET') }}"
  - id: get
    type: ai.service.plugin.core.debug.Return
    format: "{{ kv('stolen') }}"
`);
  const { exec, json } = await run('kv');
  expect(exec.state.current).toBe('SUCCESS');
  expectClean(json);
  expect(exec.taskRunList.find((r: any) => r.taskId === 'get').outputs.value).toBe('******');
  const kv = await e.json(`/namespaces/${NS}/kv/stolen`);
  expect(kv.status).toBe(200);
  expectClean(JSON.stringify(kv.body));
});

it('seals webhook trigger inputs that render a secret: the task reads it (masked in its log), the record never shows it', async () => {
  await e.createFlow(`id: hooked
namespace: ${NS}
inputs:
  - id: token
    type: STRING
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "got {{ inputs.token }}"
triggers:
  - id: hook
    type: ai.service.plugin.core.trigger.Webhook
    key: k3y-4wjtkzwVGBM9yKnjm3yv8r
    inputs:
      token: "{{ secret('MYSECRET') }}"
`);
  const res = await fetch(`${e.base}/executions/webhook/${NS}/hooked/k3y-4wjtkzwVGBM9yKnjm3yv8r`, { method: 'POST' });
  const created = await res.json() as any;
  expect(res.status).toBe(200);
  expectClean(JSON.stringify(created));
  const exec = await e.waitFor(created.id, isTerminal);
  expect(exec.state.current).toBe('SUCCESS');
  expect(exec.inputs.token).toMatch(/^fpenc1:/);
  expectClean(JSON.stringify(exec));
  await e.stores.logs.flush();
  const logs = JSON.stringify((await e.json(`/logs/${created.id}`)).body);
  expect(logs).toContain('got ******');
  expectClean(logs);
});

it('masks an API error answer that quotes a secret', async () => {
  await e.createFlow(`id: hookbad
namespace: ${NS}
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: x
triggers:
  - id: hook
    type: ai.service.plugin.core.trigger.Webhook
    key: k3y-4wjtkzwVGBM9yKnjm3yv8r
    inputs:
      token: "{{ secret('MYSECRET') | number }}"
`);
  const res = await fetch(`${e.base}/executions/webhook/${NS}/hookbad/k3y-4wjtkzwVGBM9yKnjm3yv8r`, { method: 'POST' });
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(text).toContain('******');
  expectClean(text);
});

it('a Subflow passing a SECRET input on: sealed again in a SECRET child input and in a STRING one, masked in the child logs', async () => {
  await e.createFlow(`id: child
namespace: ${NS}
inputs:
  - id: y
    type: SECRET
  - id: x
    type: STRING
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "x={{ inputs.x }} y={{ inputs.y }}"
`);
  await e.createFlow(`id: parent
namespace: ${NS}
inputs:
  - id: pw
    type: SECRET
tasks:
  - id: sub
    type: ai.service.plugin.core.flow.Subflow
    namespace: ${NS}
    flowId: child
    wait: true
    inputs:
      x: "{{ inputs.pw }}"
      y: "{{ inputs.pw }}"
`);
  const { exec, json } = await run('parent', { pw: PW });
  expect(exec.state.current).toBe('SUCCESS');
  expectClean(json);
  const childId = exec.taskRunList.find((r: any) => r.taskId === 'sub').subflowExecutionId;
  const child = (await e.json(`/executions/${childId}`)).body;
  expectClean(JSON.stringify(child));
  expect(child.inputs.x).toMatch(/^fpenc1:/); // a known secret of the parent: sealed, so the child's tasks read it in clear
  expect(child.inputs.y).toMatch(/^fpenc1:/);
  const logs = JSON.stringify((await e.json(`/logs/${childId}`)).body);
  expect(logs).toContain('x=****** y=******');
  expectClean(logs);
});

it('a SECRET input given as a form field or a multipart field is stored encrypted too', async () => {
  await e.createFlow(`id: formed
namespace: ${NS}
inputs:
  - id: pw
    type: SECRET
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "pw={{ inputs.pw }}"
`);
  const multipart = new FormData();
  multipart.set('pw', PW);
  const bodies: [string, RequestInit][] = [
    ['form', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ pw: PW }).toString() }],
    ['multipart', { method: 'POST', body: multipart }],
  ];
  for (const [how, init] of bodies) {
    const created = await e.json(`/executions/${NS}/formed`, init);
    expect(created.status, how).toBe(200);
    expect(created.body.inputs.pw, how).toMatch(/^fpenc1:/);
    const exec = await e.waitFor(created.body.id, isTerminal);
    expect(exec.state.current).toBe('SUCCESS');
    expectClean(JSON.stringify(exec));
  }
});
