// API tests of Kestra's execution routes that act on terminated executions or on many: labels, change-status, the
// bulk by-ids / by-query forms ({count} or {message, invalids}), and delete with its kill and its options. No
// controller runs here: commands are checked in the real store's queue, and states are written through the store by a
// controller test double (which also answers kill commands, for deletions of running executions). The controller
// applying labels and change-status: test/api/execution-amend.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../../operator/core/state.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import { executionStoragePath } from '../../operator/storage/paths.js';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
let stopKiller: () => void;
const NS = 'bulk.team';

beforeAll(async () => {
  api = await startTestApi({ waitTimeoutMs: 20_000, limits: { ...(await import('../../operator/core/limits.js')).DEFAULT_LIMITS, apiBulkMaxItems: 5 } });
  await createFlow(api, simpleFlow(NS, 'f'));
  await createFlow(api, simpleFlow(NS, 'other'));
  // Controller test double for kills: a kill command ends the execution KILLED.
  stopKiller = api.stores.executions.onCommand((c) => {
    if (c.command.type === 'kill') void setState(c.executionId, 'KILLED');
  });
});
afterAll(async () => { stopKiller?.(); await api.close(); });

const base = (): string => `${api.url}/api/v1/executions`;
const create = async (flow = 'f'): Promise<Execution> => (await call(`${base()}/${NS}/${flow}`, { method: 'POST' })).body;

async function setState(id: string, state: ExecutionState): Promise<Execution> {
  const stored = (await api.stores.executions.get(id))!;
  transition(stored.execution.state, state, new Date());
  return (await api.stores.executions.update(stored.execution, stored.resourceVersion)).execution;
}

async function createIn(state: ExecutionState, flow = 'f'): Promise<Execution> {
  const e = await create(flow);
  if (state !== 'CREATED') await setState(e.id, state);
  return e;
}

const commandsOf = async (id: string): Promise<unknown[]> =>
  (await api.stores.executions.pendingCommands(id)).map((c) => c.command);
const stateOf = async (id: string): Promise<string | undefined> => (await api.stores.executions.get(id))?.execution.state.current;

describe('labels and change-status without a controller: refusals, and the queued command', () => {
  it('refuses a new system label (400), a running execution (400), a bad body (400) and an unknown id (404)', async () => {
    const done = await createIn('SUCCESS');
    const sys = await call(`${base()}/${done.id}/labels`, jsonInit('POST', [{ key: 'system.readOnly', value: 'true' }]));
    expect(sys.status).toBe(400);
    expect(sys.body.message).toContain('system.readOnly');
    const running = await createIn('RUNNING');
    expect((await call(`${base()}/${running.id}/labels`, jsonInit('POST', [{ key: 'a', value: 'b' }]))).status).toBe(400);
    const bad = await call(`${base()}/${done.id}/labels`, jsonInit('POST', [{ value: 'b' }]));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('labels[0]');
    expect((await call(`${base()}/nope/labels`, jsonInit('POST', []))).status).toBe(404);
    expect(await commandsOf(done.id)).toEqual([]);
  });

  it('refuses a non-terminal target (400 naming status) and a running execution (409)', async () => {
    const e = await createIn('FAILED');
    const res = await call(`${base()}/${e.id}/change-status?status=RUNNING`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('status');
    const running = await createIn('RUNNING');
    expect((await call(`${base()}/${running.id}/change-status?status=FAILED`, { method: 'POST' })).status).toBe(409);
    expect(await commandsOf(running.id)).toEqual([]);
  });

  it('queues the command for the controller and answers 202 with the record when it is not applied in time', async () => {
    const short = await startTestApi({ waitTimeoutMs: 50 });
    try {
      await createFlow(short, simpleFlow(NS, 'f'));
      const e = (await call(`${short.url}/api/v1/executions/${NS}/f`, { method: 'POST' })).body as Execution;
      const stored = (await short.stores.executions.get(e.id))!;
      transition(stored.execution.state, 'FAILED', new Date());
      await short.stores.executions.update(stored.execution, stored.resourceVersion);
      const res = await call(`${short.url}/api/v1/executions/${e.id}/change-status?status=SUCCESS`, { method: 'POST' });
      expect(res.status).toBe(202);
      expect(res.body.state.current).toBe('FAILED');
      expect((await short.stores.executions.pendingCommands(e.id)).map((c) => c.command)).toEqual([{ type: 'change-state', state: 'SUCCESS' }]);
    } finally {
      await short.close();
    }
  });
});

describe('bulk by ids', () => {
  it('kills every listed execution ({count}) and refuses the whole list when one id is invalid', async () => {
    const a = await createIn('PAUSED');
    const b = await createIn('SUCCESS');
    const refused = await call(`${base()}/kill/by-ids`, jsonInit('DELETE', [a.id, b.id, 'missing']));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('invalid bulk kill');
    expect(refused.body.invalids).toEqual([
      { message: 'execution already finished', invalidValue: b.id, propertyPath: 'execution' },
      { message: 'execution not found', invalidValue: 'missing', propertyPath: 'execution' },
    ]);
    expect(await stateOf(a.id)).toBe('PAUSED');
    const res = await call(`${base()}/kill/by-ids`, jsonInit('DELETE', [a.id]));
    expect(res).toMatchObject({ status: 200, body: { count: 1 } });
  });

  it('resume by ids applies each Pause\'s onResume defaults, and refuses (nothing resumed) one whose required input has none', async () => {
    const pause = (id: string, onResume: string) => `id: ${id}\nnamespace: ${NS}\ntasks:\n  - id: wait\n    type: ai.service.plugin.core.flow.Pause\n    onResume:\n${onResume}`;
    await createFlow(api, pause('defaults', '      - { id: reason, type: STRING, defaults: fine }\n'));
    await createFlow(api, pause('required', '      - { id: approved, type: BOOLEAN }\n'));
    // The controller's doing (test double): the Pause run waits.
    const pausedAt = async (flow: string): Promise<Execution> => {
      const e = await create(flow);
      const stored = (await api.stores.executions.get(e.id))!;
      const now = new Date().toISOString();
      stored.execution.taskRunList.push({
        id: `pause-${e.id}`, executionId: e.id, namespace: NS, flowId: flow, taskId: 'wait', attempts: [],
        state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now }, flowableState: { status: 'PAUSED' },
      });
      await api.stores.executions.update(stored.execution, stored.resourceVersion);
      return setState(e.id, 'PAUSED');
    };
    const withDefault = await pausedAt('defaults');
    const required = await pausedAt('required');
    const refused = await call(`${base()}/resume/by-ids`, jsonInit('POST', [withDefault.id, required.id]));
    expect(refused.status).toBe(400);
    expect(refused.body.invalids).toHaveLength(1);
    expect(refused.body.invalids[0]).toMatchObject({ invalidValue: required.id, propertyPath: 'execution' });
    expect(refused.body.invalids[0].message).toContain('Missing required input');
    expect(await commandsOf(withDefault.id)).toEqual([]);
    expect(await commandsOf(required.id)).toEqual([]);

    expect((await call(`${base()}/resume/by-ids`, jsonInit('POST', [withDefault.id]))).body).toEqual({ count: 1 });
    expect(await commandsOf(withDefault.id)).toEqual([{ type: 'resume', inputs: { reason: 'fine' } }]);
  });

  it('restarts, resumes and replays', async () => {
    const failed = await createIn('FAILED');
    expect((await call(`${base()}/restart/by-ids`, jsonInit('POST', [failed.id]))).body).toEqual({ count: 1 });
    expect(await commandsOf(failed.id)).toEqual([{ type: 'restart' }]);

    const paused = await createIn('PAUSED');
    expect((await call(`${base()}/resume/by-ids`, jsonInit('POST', [paused.id]))).body).toEqual({ count: 1 });
    expect(await commandsOf(paused.id)).toEqual([{ type: 'resume' }]);
    expect((await call(`${base()}/resume/by-ids`, jsonInit('POST', [failed.id]))).status).toBe(400);

    const done = await createIn('SUCCESS', 'other');
    const before = (await api.stores.executions.search({ namespace: NS, flowId: 'other' })).total;
    expect((await call(`${base()}/replay/by-ids`, jsonInit('POST', [done.id]))).body).toEqual({ count: 1 });
    const after = await api.stores.executions.search({ namespace: NS, flowId: 'other' });
    expect(after.total).toBe(before + 1);
    expect(after.results.some((e) => e.id !== done.id && e.originalId === done.originalId)).toBe(true);
  });

  it('adds labels to each execution (SetLabelsByIdsRequest) and refuses system labels', async () => {
    const e = await createIn('SUCCESS');
    const res = await call(`${base()}/labels/by-ids`, jsonInit('POST', { executionsId: [e.id], executionLabels: [{ key: 'k', value: 'v' }] }));
    expect(res.body).toEqual({ count: 1 });
    expect(await commandsOf(e.id)).toEqual([{ type: 'set-labels', labels: [{ key: 'k', value: 'v' }] }]);
    const sys = await call(`${base()}/labels/by-ids`, jsonInit('POST', { executionsId: [e.id], executionLabels: [{ key: 'system.x', value: 'v' }] }));
    expect(sys.status).toBe(400);
  });

  it('changes the state of terminated executions (?newStatus=)', async () => {
    const e = await createIn('FAILED');
    expect((await call(`${base()}/change-status/by-ids?newStatus=CANCELLED`, jsonInit('POST', [e.id]))).body).toEqual({ count: 1 });
    expect(await commandsOf(e.id)).toEqual([{ type: 'change-state', state: 'CANCELLED' }]);
  });

  it('refuses a body that is not a list of ids, and more ids than API_BULK_MAX_ITEMS (400 naming the setting)', async () => {
    const notList = await call(`${base()}/restart/by-ids`, jsonInit('POST', { ids: [] }));
    expect(notList.status).toBe(400);
    expect(notList.body.errors[0].path).toBe('executionsId');
    const many = await call(`${base()}/restart/by-ids`, jsonInit('POST', ['a', 'b', 'c', 'd', 'e', 'f']));
    expect(many.status).toBe(400);
    expect(many.body.message).toContain('API_BULK_MAX_ITEMS');
  });
});

describe('bulk by query', () => {
  it('acts on the executions the search filters match', async () => {
    const ns = 'bulk.query';
    await createFlow(api, simpleFlow(ns, 'q'));
    const e1 = (await call(`${base()}/${ns}/q`, { method: 'POST' })).body as Execution;
    const e2 = (await call(`${base()}/${ns}/q`, { method: 'POST' })).body as Execution;
    await setState(e1.id, 'FAILED');
    await setState(e2.id, 'SUCCESS');
    const res = await call(`${base()}/labels/by-query?namespace=${ns}&state=FAILED`, jsonInit('POST', [{ key: 'triaged', value: 'yes' }]));
    expect(res.body).toEqual({ count: 1 });
    expect(await commandsOf(e1.id)).toEqual([{ type: 'set-labels', labels: [{ key: 'triaged', value: 'yes' }] }]);
    expect(await commandsOf(e2.id)).toEqual([]);

    expect((await call(`${base()}/restart/by-query?namespace=${ns}&state=FAILED`, { method: 'POST' })).body).toEqual({ count: 1 });
    expect((await commandsOf(e1.id)).at(-1)).toEqual({ type: 'restart' });
  });

  it('refuses a query matching more than API_BULK_MAX_ITEMS executions', async () => {
    const res = await call(`${base()}/restart/by-query?namespace=${NS}`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('API_BULK_MAX_ITEMS');
  });

  it('deletes by query, with includeNonTerminated killing the running ones first', async () => {
    const ns = 'bulk.delete';
    await createFlow(api, simpleFlow(ns, 'd'));
    const done = (await call(`${base()}/${ns}/d`, { method: 'POST' })).body as Execution;
    const running = (await call(`${base()}/${ns}/d`, { method: 'POST' })).body as Execution;
    await setState(done.id, 'SUCCESS');
    await setState(running.id, 'RUNNING');
    const refused = await call(`${base()}/by-query?namespace=${ns}`, { method: 'DELETE' });
    expect(refused.status).toBe(400);
    expect(refused.body.invalids).toEqual([{ message: 'execution is not terminated', invalidValue: running.id, propertyPath: 'execution' }]);
    const res = await call(`${base()}/by-query?namespace=${ns}&includeNonTerminated=true`, { method: 'DELETE' });
    expect(res.body).toEqual({ count: 2 });
    expect(await api.stores.executions.get(done.id)).toBeUndefined();
    expect(await api.stores.executions.get(running.id)).toBeUndefined();
  });
});

describe('DELETE /executions/{id}', () => {
  it('kills a running execution, then deletes it', async () => {
    const e = await createIn('RUNNING');
    const res = await call(`${base()}/${e.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await api.stores.executions.get(e.id)).toBeUndefined();
  });

  it('deletes the logs and the storage folder unless told not to', async () => {
    const keep = await createIn('SUCCESS');
    const drop = await createIn('SUCCESS');
    for (const e of [keep, drop]) {
      await api.stores.storage.put(`${executionStoragePath(e)}/outputs/o.txt`, Buffer.from('x'));
      api.stores.logs.append([{ executionId: e.id, namespace: NS, flowId: 'f', level: 'INFO', timestamp: new Date().toISOString(), message: 'line' }]);
    }
    await api.stores.logs.flush();
    expect((await call(`${base()}/${keep.id}?deleteLogs=false&deleteStorage=false`, { method: 'DELETE' })).status).toBe(204);
    expect(await api.stores.logs.countForExecution(keep.id)).toBe(1);
    expect(await api.stores.storage.exists(`kestra:///${executionStoragePath(keep)}/outputs/o.txt`)).toBe(true);
    expect((await call(`${base()}/${drop.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await api.stores.logs.countForExecution(drop.id)).toBe(0);
    expect(await api.stores.storage.exists(`kestra:///${executionStoragePath(drop)}/outputs/o.txt`)).toBe(false);
  });

  it('refuses deleteMetrics=false (metrics live in the record) and a malformed flag, deleting nothing', async () => {
    const e = await createIn('SUCCESS');
    const res = await call(`${base()}/${e.id}?deleteMetrics=false`, { method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('deleteMetrics');
    expect((await call(`${base()}/${e.id}?deleteLogs=maybe`, { method: 'DELETE' })).status).toBe(400);
    expect(await stateOf(e.id)).toBe('SUCCESS');
  });
});
