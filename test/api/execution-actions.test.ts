// API tests of kill/restart/resume/replay/delete, `?wait=true` and `/follow`, without a controller: commands are
// checked in the real store's queue, and state changes are written through the store by a controller test double.
import { get as httpGet } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../../operator/core/state.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const NS = 'actions.team';

beforeAll(async () => {
  api = await startTestApi({ waitTimeoutMs: 20_000 });
  await createFlow(api, simpleFlow(NS, 'f'));
});
afterAll(async () => { await api.close(); });

const base = (): string => `${api.url}/api/v1/executions`;
const create = async (): Promise<Execution> => (await call(`${base()}/${NS}/f`, { method: 'POST' })).body;

/** Test double of the controller: moves an execution to `state` through the real store. */
async function setStateLikeController(id: string, state: ExecutionState): Promise<Execution> {
  const stored = (await api.stores.executions.get(id))!;
  transition(stored.execution.state, state, new Date());
  return (await api.stores.executions.update(stored.execution, stored.resourceVersion)).execution;
}

const commandsOf = async (id: string): Promise<unknown[]> =>
  (await api.stores.executions.pendingCommands(id)).map((c) => c.command);

describe('kill', () => {
  it('queues a kill command (202) for a running execution', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'RUNNING');
    const res = await call(`${base()}/${e.id}/kill`, { method: 'DELETE' });
    expect(res.status).toBe(202);
    expect(await commandsOf(e.id)).toEqual([{ type: 'kill' }]);
  });

  it('answers 409 for a terminated execution and 404 for an unknown one', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'SUCCESS');
    expect((await call(`${base()}/${e.id}/kill`, { method: 'DELETE' })).status).toBe(409);
    expect(await commandsOf(e.id)).toEqual([]);
    expect((await call(`${base()}/nope/kill`, { method: 'DELETE' })).status).toBe(404);
  });
});

describe('restart', () => {
  it('queues a restart for a FAILED execution', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'FAILED');
    const res = await call(`${base()}/${e.id}/restart`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(res.body.id).toBe(e.id);
    expect(await commandsOf(e.id)).toEqual([{ type: 'restart' }]);
  });

  it('answers 409 for an execution that did not fail', async () => {
    const e = await create();
    const res = await call(`${base()}/${e.id}/restart`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/CREATED/);
  });
});

describe('resume', () => {
  it('queues a resume with its inputs for a PAUSED execution (204)', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'RUNNING');
    await setStateLikeController(e.id, 'PAUSED');
    const res = await call(`${base()}/${e.id}/resume`, jsonInit('POST', { approved: true }));
    expect(res.status).toBe(204);
    expect(await commandsOf(e.id)).toEqual([{ type: 'resume', inputs: { approved: true } }]);
  });

  it('checks the values against the onResume inputs of the waiting Pause: typed, defaults applied, 422 naming a bad one', async () => {
    await createFlow(api, `id: approval\nnamespace: ${NS}\ntasks:\n  - id: wait\n    type: ai.service.plugin.core.flow.Pause\n    onResume:\n      - { id: approved, type: BOOLEAN }\n      - { id: reason, type: STRING, defaults: fine }\n`);
    const e = (await call(`${base()}/${NS}/approval`, { method: 'POST' })).body as Execution;
    // The controller's doing (test double): the Pause run waits.
    const stored = (await api.stores.executions.get(e.id))!;
    const now = new Date();
    stored.execution.taskRunList.push({
      id: 'pause-run', executionId: e.id, namespace: NS, flowId: 'approval', taskId: 'wait', attempts: [],
      state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now.toISOString() }], startDate: now.toISOString() },
      flowableState: { status: 'PAUSED' },
    });
    transition(stored.execution.state, 'RUNNING', now);
    transition(stored.execution.state, 'PAUSED', now);
    await api.stores.executions.update(stored.execution, stored.resourceVersion);

    const bad = await call(`${base()}/${e.id}/resume`, jsonInit('POST', { approved: 'perhaps' }));
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((x: { path: string }) => x.path)).toEqual(['inputs.approved']);
    const missing = await call(`${base()}/${e.id}/resume`, jsonInit('POST', {}));
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].message).toContain('Missing required input');
    expect(await commandsOf(e.id)).toEqual([]);

    expect((await call(`${base()}/${e.id}/resume`, jsonInit('POST', { approved: 'true' }))).status).toBe(204);
    expect(await commandsOf(e.id)).toEqual([{ type: 'resume', inputs: { approved: true, reason: 'fine' } }]);
  });

  it('answers 409 when the execution is not paused', async () => {
    const e = await create();
    expect((await call(`${base()}/${e.id}/resume`, { method: 'POST' })).status).toBe(409);
  });
});

describe('replay', () => {
  it('creates a new execution with the same originalId and inputs', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'FAILED');
    const res = await call(`${base()}/${e.id}/replay`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.id).not.toBe(e.id);
    expect(res.body).toMatchObject({ originalId: e.id, flowId: 'f', state: { current: 'CREATED' } });
    expect((await call(`${base()}/${e.id}`)).body.state.current).toBe('FAILED');
  });

  it('answers 409 for a running execution and 422 for an unknown task run', async () => {
    const running = await create();
    expect((await call(`${base()}/${running.id}/replay`, { method: 'POST' })).status).toBe(409);
    await setStateLikeController(running.id, 'SUCCESS');
    const res = await call(`${base()}/${running.id}/replay?taskRunId=zzz`, { method: 'POST' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].path).toBe('taskRunId');
  });
});

describe('delete', () => {
  // A running execution is killed first, then deleted: test/api/execution-bulk.test.ts.
  it('deletes a terminated execution', async () => {
    const e = await create();
    await setStateLikeController(e.id, 'SUCCESS');
    const res = await call(`${base()}/${e.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect((await call(`${base()}/${e.id}`)).status).toBe(404);
  });
});

describe('wait=true', () => {
  it('answers once the execution is terminal', async () => {
    const added = new Promise<string>((resolve) => {
      const stop = api.stores.executions.watch((ev) => {
        if (ev.type === 'ADDED' && ev.execution.flowId === 'f') { stop(); resolve(ev.execution.id); }
      });
    });
    const pending = call(`${base()}/${NS}/f?wait=true`, { method: 'POST' });
    const id = await added;
    await setStateLikeController(id, 'RUNNING');
    await setStateLikeController(id, 'SUCCESS');
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, state: { current: 'SUCCESS' } });
  });
});

describe('follow', () => {
  it('streams every change as server-sent events and ends at the terminal state', async () => {
    const e = await create();
    const res = await fetch(`${base()}/${e.id}/follow`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // Kestra's events: `id: start` with the id only, `id: progress` per change, `id: end` with the terminal state.
    const readEvent = async (): Promise<{ id: string; data: Execution }> => {
      while (!text.includes('\n\n')) {
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended early');
        text += decoder.decode(value);
      }
      const [event, rest] = [text.slice(0, text.indexOf('\n\n')), text.slice(text.indexOf('\n\n') + 2)];
      text = rest;
      const field = (name: string): string => event.split('\n').find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2);
      return { id: field('id'), data: JSON.parse(field('data')) as Execution };
    };
    expect(await readEvent()).toEqual({ id: 'start', data: { id: e.id } });
    expect(await readEvent()).toMatchObject({ id: 'progress', data: { state: { current: 'CREATED' } } });
    await setStateLikeController(e.id, 'RUNNING');
    expect(await readEvent()).toMatchObject({ id: 'progress', data: { state: { current: 'RUNNING' } } });
    await setStateLikeController(e.id, 'SUCCESS');
    expect(await readEvent()).toMatchObject({ id: 'end', data: { state: { current: 'SUCCESS' } } });
    expect((await reader.read()).done).toBe(true);
  });

  it('404s for an unknown execution', async () => {
    expect((await call(`${base()}/unknown/follow`)).status).toBe(404);
  });

  it('a client that stops reading gets the latest state when it resumes, not every change buffered', async () => {
    const e = await create();
    let received = 0;
    let text = '';
    let resume = (): void => {};
    const ended = new Promise<void>((done, fail) => {
      const req = httpGet(`${base()}/${e.id}/follow`, (res) => {
        res.pause(); // reads nothing until told
        resume = () => res.resume();
        res.on('data', (chunk: Buffer) => { received += chunk.length; text = (text + chunk.toString()).slice(-200_000); });
        res.on('end', () => done());
      });
      req.on('error', fail);
    });
    await new Promise((r) => setTimeout(r, 200));
    // 200 changes of a ~60 KB execution: 12 MB if every one were kept for the client.
    const changes = 200;
    let size = 0;
    for (let i = 0; i < changes; i++) {
      const stored = (await api.stores.executions.get(e.id))!;
      stored.execution.outputs = { big: `${i}:${'x'.repeat(60_000)}` };
      size = JSON.stringify(stored.execution).length;
      await api.stores.executions.update(stored.execution, stored.resourceVersion);
    }
    await setStateLikeController(e.id, 'SUCCESS');
    resume();
    await ended;
    expect(text).toMatch(/id: end\ndata: [^\n]*"current":"SUCCESS"[^\n]*\n\n$/);
    expect(received, `${received} bytes for ${changes} changes of ${size} bytes`).toBeLessThan((changes * size) / 2);
  }, 60_000);
});

describe('wait=true timeout', () => {
  it('answers with the current execution when it does not end in time', async () => {
    const short = await startTestApi({ waitTimeoutMs: 50 });
    try {
      await createFlow(short, simpleFlow(NS, 'f'));
      const res = await call(`${short.url}/api/v1/executions/${NS}/f?wait=true`, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(res.body.state.current).toBe('CREATED');
    } finally {
      await short.close();
    }
  });
});
