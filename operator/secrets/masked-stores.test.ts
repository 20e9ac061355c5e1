// The masking stores over the real SQLite stores: records are sealed then masked before the store computes anything
// from them (the labels index included), identifiers and states stay, log lines and KV values are masked with the
// secrets of their execution.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Execution, TaskRun } from '../core/types.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { logLine, sampleExecution, tempDir } from '../store/sqlite/test-fixtures.js';
import { SecretLayer } from './layer.js';
import { executionKV, maskedStores, maskOutcome, type MaskedStores } from './masked-stores.js';
import { MASK } from './masker.js';
import { isSealed, SecretBox } from './sealed.js';

const SECRET = 'RUNNING-s3cr3t';
let tmp: ReturnType<typeof tempDir>;
let raw: EmbeddedStores;
let stores: MaskedStores<EmbeddedStores>;

beforeEach(async () => {
  tmp = tempDir();
  raw = openEmbeddedStores(tmp.dir);
  // 'RUNNING' as a secret value: masked in what flows wrote, never in the engine's own states.
  stores = maskedStores(raw, new SecretLayer({ values: () => [SECRET, 'RUNNING'], box: new SecretBox(randomBytes(32)) }));
  const source = 'id: f\nnamespace: company.team\ninputs:\n  - id: pw\n    type: SECRET\n  - id: name\n    type: STRING\ntasks:\n  - id: t\n    type: ai.service.plugin.core.log.Log\n    message: x\n';
  await raw.flows.save(parseFlow(source), source);
});
afterEach(async () => { await raw.close(); tmp.remove(); });

const run = (over: Partial<TaskRun>): TaskRun => ({
  id: 'r1', executionId: 'e1', namespace: 'company.team', flowId: 'f', taskId: 't', attempts: [],
  state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: new Date().toISOString() }], startDate: new Date().toISOString() }, ...over,
});

function leaky(): Execution {
  const e = sampleExecution('e1', { flowId: 'f', state: 'RUNNING', labels: [{ key: 'token', value: SECRET }] });
  return {
    ...e, inputs: { pw: 'p4ssw0rd-input', name: `hello ${SECRET}` }, outputs: { [SECRET]: SECRET },
    trigger: { id: 'hook', type: 'webhook', variables: { body: { token: SECRET } } }, error: `failed: ${SECRET}`,
    taskRunList: [run({ value: SECRET, outputs: { v: [SECRET] }, error: SECRET, flowableState: { values: [SECRET], status: 'RUNNING' } })],
  };
}

describe('executions', () => {
  it('seals SECRET inputs and masks every text of the record before it is stored; ids and states stay', async () => {
    const created = await stores.executions.create(leaky());
    const stored = (await raw.executions.get('e1'))!.execution;
    expect(stored).toEqual(created.execution);
    const text = JSON.stringify(stored);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('p4ssw0rd-input');
    expect(isSealed(stored.inputs.pw)).toBe(true);
    // A STRING input holding a secret is sealed (tasks read it in clear), not masked.
    expect(isSealed(stored.inputs.name)).toBe(true);
    expect(stores.secrets.openInput(stored, 'name', stored.inputs.name)).toBe(`hello ${SECRET}`);
    expect(stored.labels).toEqual([{ key: 'token', value: MASK }]);
    expect(stored.outputs).toEqual({ [MASK]: MASK });
    expect(stored.trigger).toEqual({ id: 'hook', type: 'webhook', variables: { body: { token: MASK } } });
    expect(stored.error).toBe(`failed: ${MASK}`);
    expect(stored.taskRunList[0]).toMatchObject({ id: 'r1', value: MASK, outputs: { v: [MASK] }, error: MASK, flowableState: { values: [MASK], status: 'RUNNING' } });
    expect(stored.state.current).toBe('RUNNING');
    expect(stored.taskRunList[0]!.state.current).toBe('RUNNING');
  });

  it('keeps the decisions the engine reads back from its bookkeeping: a matched Switch case, Subflow request ids', async () => {
    const e = sampleExecution('e1', { flowId: 'f', state: 'RUNNING' });
    const runs = [
      run({ id: 'sw', flowableState: { switch: { value: SECRET, defaults: false } } }),
      run({ id: 'sw2', flowableState: { switch: { value: SECRET, defaults: true } } }),
      run({ id: 'sub', flowableState: { request: { taskRunId: 'sub', executionId: 'c1', namespace: SECRET, flowId: SECRET, inputs: { x: SECRET }, labels: [{ key: 'k', value: SECRET }] } } }),
    ];
    const stored = (await stores.executions.create({ ...e, taskRunList: runs })).execution.taskRunList;
    expect(stored[0]!.flowableState).toEqual({ switch: { value: SECRET, defaults: false } });
    expect(stored[1]!.flowableState).toEqual({ switch: { value: MASK, defaults: true } });
    // The request's inputs are sealed (a child created from it after a crash gets the value: controller/children.test.ts).
    const request = stored[2]!.flowableState!.request as { inputs: { x: string } };
    expect(isSealed(request.inputs.x)).toBe(true);
    expect(stores.secrets.openRequestInputs('e1', 'sub', undefined, request.inputs)).toEqual({ x: SECRET });
    expect(stored[2]!.flowableState).toEqual({ request: { taskRunId: 'sub', executionId: 'c1', namespace: SECRET, flowId: SECRET, inputs: request.inputs, labels: [{ key: 'k', value: MASK }] } });
  });

  it('keeps the ids and states of each ForEachItem batch slot, masking what flows put in them', async () => {
    const e = sampleExecution('e1', { flowId: 'f', state: 'RUNNING' });
    const slot = { executionId: SECRET, requested: true, ended: true, childState: SECRET, childError: `bad: ${SECRET}`, childOutputs: { o: SECRET },
      request: { taskRunId: 'items', taskId: 'each_items', iteration: 0, executionId: SECRET, namespace: SECRET, flowId: SECRET, inputs: { file: SECRET } } };
    const stored = (await stores.executions.create({ ...e, taskRunList: [run({ id: 'items', flowableState: { batches: [slot] } })] })).execution.taskRunList;
    const inputs = ((stored[0]!.flowableState!.batches as { request: { inputs: { file: string } } }[])[0]!.request.inputs);
    expect(isSealed(inputs.file)).toBe(true);
    expect(stores.secrets.openRequestInputs('e1', 'items', 0, inputs)).toEqual({ file: SECRET });
    expect(() => stores.secrets.openRequestInputs('e1', 'items', 1, inputs)).toThrow(/cannot be decrypted/); // bound to its batch
    expect(stored[0]!.flowableState).toEqual({ batches: [{
      executionId: SECRET, requested: true, ended: true, childState: SECRET, childError: `bad: ${MASK}`, childOutputs: { o: MASK },
      request: { taskRunId: 'items', taskId: 'each_items', iteration: 0, executionId: SECRET, namespace: SECRET, flowId: SECRET, inputs },
    }] });
  });

  it('masks before the SQLite store indexes the labels', async () => {
    await stores.executions.create(leaky());
    expect((await raw.executions.search({ labels: { token: SECRET } })).total).toBe(0);
    expect((await raw.executions.search({ labels: { token: MASK } })).total).toBe(1);
  });

  it('update masks and seals too, and returns the stored record', async () => {
    const { resourceVersion } = await stores.executions.create(sampleExecution('e1', { flowId: 'f' }));
    const next = { ...leaky(), inputs: { pw: 'p4ssw0rd-input' } };
    const saved = await stores.executions.update(next, resourceVersion);
    expect(JSON.stringify(saved.execution)).not.toContain(SECRET);
    expect(saved.execution).toEqual((await raw.executions.get('e1'))!.execution);
    // The sealed input is known to the layer from now on: its clear value is masked in this execution's records.
    const again = await stores.executions.update({ ...saved.execution, outputs: { echo: 'p4ssw0rd-input' } }, saved.resourceVersion);
    expect(again.execution.outputs).toEqual({ echo: MASK });
  });

  it('leaves a record without secrets as it is', async () => {
    const clean = sampleExecution('e2', { flowId: 'f' });
    const created = await stores.executions.create(clean);
    expect(created.execution).toEqual(clean);
  });
});

describe('logs and KV', () => {
  it('masks each line with the secrets of its execution', async () => {
    const e = stores.secrets.sealInputs({ ...sampleExecution('e1', { flowId: 'f' }), inputs: { pw: 'p4ssw0rd-input' } }, [{ id: 'pw', type: 'SECRET' }]);
    stores.secrets.track(e);
    stores.logs.append([logLine('e1', `a ${SECRET} p4ssw0rd-input`), logLine('e2', 'p4ssw0rd-input of another execution')]);
    await stores.logs.flush();
    expect((await raw.logs.forExecution('e1')).map((l) => l.message)).toEqual([`a ${MASK} ${MASK}`]);
    expect((await raw.logs.forExecution('e2')).map((l) => l.message)).toEqual(['p4ssw0rd-input of another execution']);
  });

  it('masks KV values (the source secrets; a task also its execution\'s own)', async () => {
    await stores.kv.set({ namespace: 'n', key: 'k', value: { token: SECRET } });
    expect((await raw.kv.get('n', 'k'))!.value).toEqual({ token: MASK });
    stores.secrets.remember('e1', ['declared-token']);
    await executionKV(stores, 'e1').set({ namespace: 'n', key: 'k2', value: 'declared-token' });
    expect((await raw.kv.get('n', 'k2'))!.value).toBe(MASK);
  });

  it('masks an attempt outcome (the runner\'s result file)', () => {
    const m = stores.secrets.masker();
    expect(maskOutcome({ state: 'FAILED', outputs: { a: SECRET }, error: SECRET, executionLabels: [{ key: 'k', value: SECRET }] }, m))
      .toEqual({ state: 'FAILED', outputs: { a: MASK }, error: MASK, executionLabels: [{ key: 'k', value: MASK }] });
  });
});
