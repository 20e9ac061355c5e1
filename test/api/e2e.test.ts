// End-to-end API tests WITH THE CONTROLLER (`startController` from operator/controller/index.ts, written by the
// integrator): executions created through the API really run; wait, follow, logs, webhook, pause/resume, kill,
// replay and restart are checked on their real outcomes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../../operator/controller/index.js';
import type { Execution, ExecutionState, LogLine } from '../../operator/core/types.js';
import { call, createFlow, jsonInit, LOG_TYPE, startTestApi, type TestApi } from './helpers.js';

const P = 'ai.service.plugin.';
let api: TestApi;
let controller: { stop(): Promise<void> };
const NS = 'e2e.team';

beforeAll(async () => {
  api = await startTestApi();
  controller = await startController(api.stores);
  await createFlow(api, `id: hello\nnamespace: ${NS}\ninputs:\n  - id: name\n    type: STRING\n    defaults: world\ntasks:
  - id: greet\n    type: ${LOG_TYPE}\n    message: "Hello {{ inputs.name }}"\n`);
  await createFlow(api, `id: paused\nnamespace: ${NS}\ntasks:
  - id: wait\n    type: ${P}core.flow.Pause\n  - id: after\n    type: ${LOG_TYPE}\n    message: resumed\n`);
  await createFlow(api, `id: failing\nnamespace: ${NS}\ntasks:
  - id: boom\n    type: ${P}core.execution.Fail\n`);
  await createFlow(api, `id: hooked\nnamespace: ${NS}\ntasks:
  - id: show\n    type: ${LOG_TYPE}\n    message: "got {{ trigger.body.msg }}"\ntriggers:\n  - id: hook\n    type: ${P}core.trigger.Webhook\n    key: e2e-secret-key\n`);
});
afterAll(async () => {
  await controller?.stop();
  await api?.close();
});

const base = (): string => `${api.url}/api/v1/executions`;

/** Resolves when the execution satisfies `done` (the test timeout bounds the wait). */
async function waitFor(id: string, done: (e: Execution) => boolean): Promise<Execution> {
  return new Promise<Execution>((resolve) => {
    const check = (e: Execution): void => { if (done(e)) { stop(); resolve(e); } };
    const stop = api.stores.executions.watch((ev) => { if (ev.execution.id === id) check(ev.execution); });
    void api.stores.executions.get(id).then((s) => s && check(s.execution));
  });
}

const waitForState = (id: string, states: ExecutionState[]): Promise<Execution> =>
  waitFor(id, (e) => states.includes(e.state.current));

const messages = async (id: string): Promise<string[]> =>
  (await call(`${api.url}/api/v1/logs/${id}`)).body.map((l: LogLine) => l.message);

describe('executions run end to end', () => {
  it('creates with wait=true and answers with the SUCCESS execution and its logs', async () => {
    const res = await call(`${base()}/${NS}/hello?wait=true`, jsonInit('POST', { name: 'Ada' }));
    expect(res.status).toBe(200);
    expect(res.body.state.current).toBe('SUCCESS');
    expect(res.body.taskRunList).toHaveLength(1);
    expect(await messages(res.body.id)).toContain('Hello Ada');
  });

  it('follows an execution until it ends', async () => {
    const created = (await call(`${base()}/${NS}/hello`, { method: 'POST' })).body as Execution;
    const text = await (await fetch(`${base()}/${created.id}/follow`)).text();
    const events = text.split('\n\n').filter((e) => e !== '').map((e) => e.split('\n'));
    expect(events[0]).toEqual(['id: start', `data: ${JSON.stringify({ id: created.id })}`]);
    const last = events.at(-1)!;
    expect(last[0]).toBe('id: end');
    expect((JSON.parse(last[1]!.slice(6)) as Execution).state.current).toBe('SUCCESS');
  });

  it('runs a webhook execution with the request body as trigger.body', async () => {
    const res = await call(`${base()}/webhook/${NS}/hooked/e2e-secret-key`, jsonInit('POST', { msg: 'ping' }));
    expect(res.status).toBe(200);
    const done = await waitForState(res.body.id, ['SUCCESS', 'FAILED']);
    expect(done.state.current).toBe('SUCCESS');
    expect(await messages(res.body.id)).toContain('got ping');
  });

  it('pauses, then resumes through the API', async () => {
    const created = (await call(`${base()}/${NS}/paused`, { method: 'POST' })).body as Execution;
    await waitForState(created.id, ['PAUSED']);
    expect((await call(`${base()}/${created.id}/resume`, { method: 'POST' })).status).toBe(204);
    expect((await waitForState(created.id, ['SUCCESS', 'FAILED', 'KILLED'])).state.current).toBe('SUCCESS');
    expect(await messages(created.id)).toContain('resumed');
  });

  it('kills a paused execution', async () => {
    const created = (await call(`${base()}/${NS}/paused`, { method: 'POST' })).body as Execution;
    await waitForState(created.id, ['PAUSED']);
    expect((await call(`${base()}/${created.id}/kill`, { method: 'DELETE' })).status).toBe(202);
    expect((await waitForState(created.id, ['KILLED', 'SUCCESS', 'FAILED'])).state.current).toBe('KILLED');
    expect((await call(`${base()}/${created.id}/kill`, { method: 'DELETE' })).status).toBe(409);
  });

  it('replays a finished execution as a new one', async () => {
    const first = (await call(`${base()}/${NS}/hello?wait=true`, { method: 'POST' })).body as Execution;
    const replay = await call(`${base()}/${first.id}/replay`, { method: 'POST' });
    expect(replay.status).toBe(200);
    const done = await waitForState(replay.body.id, ['SUCCESS', 'FAILED']);
    expect(done).toMatchObject({ state: { current: 'SUCCESS' }, originalId: first.id });
  });

  it('restarts a failed execution, which fails again', async () => {
    const failed = (await call(`${base()}/${NS}/failing?wait=true`, { method: 'POST' })).body as Execution;
    expect(failed.state.current).toBe('FAILED');
    expect((await call(`${base()}/${failed.id}/restart`, { method: 'POST' })).status).toBe(202);
    const again = await waitFor(failed.id, (e) =>
      e.state.histories.some((h) => h.state === 'RESTARTED') && ['FAILED', 'SUCCESS'].includes(e.state.current));
    expect(again.state.current).toBe('FAILED');
    expect(again.state.histories.map((h) => h.state)).toContain('RESTARTED');
  });
});
