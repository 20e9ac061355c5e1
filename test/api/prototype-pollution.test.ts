// Canary for prototype pollution, through the real embedded service (API + controller, SQLite, script processes):
// flows and callers put `__proto__`, `constructor` and `prototype` (and dotted variants) in every key position a user
// controls. Declared keys are refused at save (422 naming the field) or by the API (400); runtime keys (webhook bodies
// and query, multipart field names, KV values, script outputs and files, Labels task keys, loop values, Subflow inputs)
// are stored and read back as ordinary keys. Afterwards Object.prototype is unchanged and another tenant's flow still
// saves and runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype);
const P = 'ai.service.plugin.';
const NS = 'canary.hostile';
const HOOK_KEY = 'canary-hook-key-0123456789';
/** A JSON payload aimed at Object.prototype in every way a merge could be fooled. */
const PAYLOAD = '{"__proto__":{"polluted":true,"disabled":true},"constructor":{"prototype":{"polluted":true}},"ok":1}';

let e: Embedded;
beforeAll(async () => { e = await startEmbedded(); });
afterAll(async () => { await e?.close(); });

const yamlPost = (yaml: string) => e.json('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });
const flow = (id: string, body: string, ns = NS) => `id: ${id}\nnamespace: ${ns}\n${body}`;
const finished = (x: { state?: { current?: string } }) => ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(x?.state?.current ?? '');
const run = (exec: { taskRunList: { taskId: string; outputs?: any; value?: string }[] }, taskId: string) =>
  exec.taskRunList.filter((r) => r.taskId === taskId);
const keysOf = (o: unknown): string[] => Object.keys(o as object).sort();

function expectClean(): void {
  expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(PROTO_NAMES);
  const probe = {} as Record<string, unknown>;
  expect(probe.polluted).toBeUndefined();
  expect(probe.disabled).toBeUndefined();
}

describe('declared keys are refused at save (422 naming the field)', () => {
  it.each<[string, string, string]>([
    ['the reported input', 'inputs: [{ id: a.__proto__.disabled, type: BOOLEAN, defaults: true }]\n', 'inputs[0].id'],
    ['constructor.prototype input', 'inputs: [{ id: constructor.prototype.polluted, type: STRING, defaults: x }]\n', 'inputs[0].id'],
    ['output id', 'outputs: [{ id: prototype, type: STRING, value: x }]\n', 'outputs[0].id'],
    ['label key', 'labels: { __proto__: x }\n', 'labels.__proto__'],
    ['variables key', 'variables: { a: { __proto__: { polluted: true } } }\n', 'variables.a.__proto__'],
    ['pluginDefaults values key', `pluginDefaults: [{ type: ${P}core.log.Log, values: { __proto__: { disabled: true } } }]\n`,
      'pluginDefaults[0].values.__proto__'],
    ['trigger inputs key', `triggers: [{ id: w, type: ${P}core.trigger.Webhook, key: k, inputs: { constructor: { prototype: 1 } } }]\n`,
      'triggers[0].inputs.constructor'],
  ])('%s', async (_name, extra, path) => {
    const res = await yamlPost(flow('refused', `${extra}tasks:\n  - { id: t, type: ${P}core.log.Log, message: hi }\n`));
    expect(res.status).toBe(422);
    expect(res.body.errors).toContainEqual({ path, message: expect.stringContaining('uses the reserved name') });
  });

  it.each<[string, string, string]>([
    ['task id', `{ id: constructor, type: ${P}core.log.Log, message: hi }`, 'tasks[0].id'],
    ['Subflow inputs key', `{ id: s, type: ${P}core.flow.Subflow, namespace: ${NS}, flowId: child, inputs: { "a.__proto__.b": 1 } }`,
      'tasks[0].inputs["a.__proto__.b"]'],
    ['Labels task key', `{ id: l, type: ${P}core.execution.Labels, labels: [{ key: __proto__, value: x }] }`, 'tasks[0].labels[0].key'],
    ['script env key', `{ id: s, type: ${P}scripts.shell.Commands, commands: [env], env: { __proto__: x } }`, 'tasks[0].env.__proto__'],
  ])('%s', async (_name, task, path) => {
    const res = await yamlPost(flow('refused', `tasks:\n  - ${task}\n`));
    expect(res.status).toBe(422);
    expect(res.body.errors).toContainEqual({ path, message: expect.stringContaining('uses the reserved name') });
  });

  it('execution labels with a reserved key are refused by the API (400 naming labels)', async () => {
    await e.createFlow(flow('plain', `tasks:\n  - { id: t, type: ${P}core.log.Log, message: hi }\n`));
    for (const label of ['__proto__:x', 'constructor:x', 'a.prototype:x']) {
      const res = await e.json(`/executions/${NS}/plain?labels=${encodeURIComponent(label)}`, { method: 'POST' });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: 'labels', message: expect.stringContaining('reserved name') }]);
    }
    expect((await e.json(`/executions/search?labels=${encodeURIComponent('__proto__:x')}`)).status).toBe(400);
    expectClean();
  });
});

describe('runtime keys are ordinary keys', () => {
  it('webhook JSON body and query parameters keep `__proto__` and `constructor` as own keys', async () => {
    await e.createFlow(flow('hook', `tasks:
  - { id: t, type: ${P}core.log.Log, message: "{{ trigger.body }} {{ trigger.parameters }}" }
triggers:
  - { id: w, type: ${P}core.trigger.Webhook, key: ${HOOK_KEY} }
`));
    const res = await e.json(`/executions/webhook/${NS}/hook/${HOOK_KEY}?__proto__=x&constructor=y`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: PAYLOAD,
    });
    expect(res.status).toBe(200);
    const vars = res.body.trigger.variables;
    expect(keysOf(vars.body)).toEqual(['__proto__', 'constructor', 'ok']);
    expect(vars.parameters).toEqual(JSON.parse('{"__proto__":["x"],"constructor":["y"]}'));
    const done = await e.waitFor(res.body.id, finished);
    expect(done.state.current).toBe('SUCCESS');
    expectClean();
  });

  it('multipart field names are ordinary keys (Pause resumed with fields `__proto__`, `constructor`)', async () => {
    await e.createFlow(flow('pause', `tasks:
  - { id: p, type: ${P}core.flow.Pause }
  - { id: after, type: ${P}core.log.Log, message: "{{ outputs.p }}" }
`));
    const exec = await e.execute(NS, 'pause');
    await e.waitFor(exec.id, (x) => x?.state?.current === 'PAUSED');
    const form = new FormData();
    form.append('__proto__', 'x');
    form.append('constructor', 'y');
    form.append('ok', 'z');
    expect((await e.json(`/executions/${exec.id}/resume`, { method: 'POST', body: form })).status).toBe(204);
    const done = await e.waitFor(exec.id, finished);
    expect(done.state.current).toBe('SUCCESS');
    expect(run(done, 'p')[0]!.outputs.onResume).toEqual(JSON.parse('{"__proto__":"x","constructor":"y","ok":"z"}'));
    expectClean();
  });

  it('KV values set by the API and by the KV task are read back by kv() with their keys', async () => {
    const put = await e.json(`/namespaces/${NS}/kv/api`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: PAYLOAD });
    expect(put.status).toBe(200);
    expect(keysOf((await e.json(`/namespaces/${NS}/kv/api`)).body.value)).toEqual(['__proto__', 'constructor', 'ok']);
    await e.createFlow(flow('kv', `tasks:
  - { id: set, type: ${P}core.kv.Set, key: task, kvType: JSON, value: '${PAYLOAD}' }
  - id: read
    type: ${P}core.output.OutputValues
    values: { api: "{{ kv('api') }}", task: "{{ kv('task') }}", ok: "{{ kv('task').ok }}" }
`));
    const done = await e.waitFor((await e.execute(NS, 'kv')).id, finished);
    expect(done.state.current).toBe('SUCCESS');
    const values = run(done, 'read')[0]!.outputs.values;
    for (const v of [values.api, values.task]) {
      expect(keysOf(typeof v === 'string' ? JSON.parse(v) : v)).toEqual(['__proto__', 'constructor', 'ok']);
    }
    expect(String(values.ok)).toBe('1');
    expectClean();
  });

  it('script outputs (several protocol lines) and output files named `__proto__` / `constructor` stay', async () => {
    await e.createFlow(flow('script', `tasks:
  - id: sh
    type: ${P}scripts.shell.Commands
    outputFiles: ["*"]
    commands:
      - echo '::{"outputs":${PAYLOAD}}::'
      - echo '::{"outputs":{"__proto__":{"second":true},"names":["__proto__","constructor"]}}::'
      - touch __proto__ constructor
  - id: labels
    type: ${P}core.execution.Labels
    labels: [{ key: "{{ outputs.sh.vars.names[0] }}", value: x }, { key: "{{ outputs.sh.vars.names[1] }}", value: y }]
  - { id: after, type: ${P}core.log.Log, message: "{{ labels }}" }
`));
    const done = await e.waitFor((await e.execute(NS, 'script')).id, finished, 60_000);
    expect(done.state.current).toBe('SUCCESS');
    const outputs = run(done, 'sh')[0]!.outputs;
    expect(keysOf(outputs.vars)).toEqual(['__proto__', 'constructor', 'names', 'ok']);
    expect(outputs.vars.__proto__).toEqual({ second: true }); // own key read back (the later line wins)
    expect(keysOf(outputs.outputFiles)).toEqual(['__proto__', 'constructor']);
    expect(done.labels).toEqual(expect.arrayContaining([{ key: '__proto__', value: 'x' }, { key: 'constructor', value: 'y' }]));
    expectClean();
  });

  it('loop values of EachParallel and EachSequential may be reserved names', async () => {
    const values = '["__proto__", "constructor", "prototype", "a.__proto__.polluted"]';
    await e.createFlow(flow('loops', `tasks:
  - id: par
    type: ${P}core.flow.EachParallel
    value: '${values}'
    tasks: [{ id: p, type: ${P}core.debug.Return, format: "{{ taskrun.value }}" }]
  - id: seq
    type: ${P}core.flow.EachSequential
    value: '${values}'
    tasks: [{ id: s, type: ${P}core.debug.Return, format: "{{ taskrun.value }} {{ outputs.p }}" }]
  - { id: after, type: ${P}core.log.Log, message: "{{ outputs.s }}" }
`));
    const done = await e.waitFor((await e.execute(NS, 'loops')).id, finished, 60_000);
    expect(done.state.current).toBe('SUCCESS');
    expect(run(done, 'p').map((r) => r.outputs.value).sort()).toEqual(JSON.parse(values).sort());
    expectClean();
  });

  it('Subflow inputs carrying the payload reach the child as data', async () => {
    await e.createFlow(flow('child', `inputs: [{ id: data, type: JSON }]
tasks:
  - { id: r, type: ${P}core.debug.Return, format: "{{ inputs.data.ok }}" }
outputs: [{ id: data, type: JSON, value: "{{ inputs.data }}" }]
`));
    await e.createFlow(flow('parent', `tasks:
  - { id: sub, type: ${P}core.flow.Subflow, namespace: ${NS}, flowId: child, wait: true, transmitFailed: true, inputs: { data: '${PAYLOAD}' } }
`));
    const done = await e.waitFor((await e.execute(NS, 'parent')).id, finished, 60_000);
    expect(done.state.current).toBe('SUCCESS');
    const child = run(done, 'sub')[0]!.outputs;
    expect(child.state).toBe('SUCCESS');
    expect(keysOf(child.outputs.data)).toEqual(['__proto__', 'constructor', 'ok']);
    expectClean();
  });
});

describe('afterwards', () => {
  it('Object.prototype is unchanged, and another tenant saves and runs a flow', async () => {
    expectClean();
    const saved = await e.createFlow(flow('witness', `inputs: [{ id: flag, type: BOOLEAN, required: false }]
tasks:
  - { id: t, type: ${P}core.debug.Return, format: "{{ inputs.flag ?? 'unset' }}" }
`, 'canary.other'));
    expect(saved.disabled).toBe(false); // answered always (Kestra's Flow); true only when the flow says so
    const done = await e.waitFor((await e.execute('canary.other', 'witness')).id, finished);
    expect(done.state.current).toBe('SUCCESS');
    expect(run(done, 't')[0]!.outputs.value).toBe('unset');
  });
});
