// API tests of GET /logs/{executionId}/follow (server-sent events of the lines, stored ones first, until the execution
// ends) and GET /metrics/{executionId} (the metrics of the record's task run attempts as Kestra's MetricEntry pages).
// No controller runs: lines are appended to the real log store and states written through the real store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../../operator/core/state.js';
import type { Execution, ExecutionState, LogLevel, LogLine } from '../../operator/core/types.js';
import { call, createFlow, simpleFlow, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const NS = 'follow.team';

beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, simpleFlow(NS, 'f'));
});
afterAll(async () => { await api.close(); });

const create = async (): Promise<Execution> => (await call(`${api.url}/api/v1/executions/${NS}/f`, { method: 'POST' })).body;

async function setState(id: string, state: ExecutionState): Promise<void> {
  const stored = (await api.stores.executions.get(id))!;
  transition(stored.execution.state, state, new Date());
  await api.stores.executions.update(stored.execution, stored.resourceVersion);
}

const line = (executionId: string, message: string, level: LogLevel = 'INFO', timestamp = new Date().toISOString()): LogLine =>
  ({ executionId, namespace: NS, flowId: 'f', taskId: 'hello', level, timestamp, message });

/** Reads server-sent events one at a time (`{id, data}`), or null once the stream has ended. */
function eventReader(res: Response): () => Promise<{ id: string; data: any } | null> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return async () => {
    for (;;) {
      const end = text.indexOf('\n\n');
      if (end >= 0) {
        const event = text.slice(0, end);
        text = text.slice(end + 2);
        if (event.startsWith(':')) continue; // keep-alive comment
        const field = (name: string): string => event.split('\n').find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2);
        return { id: field('id'), data: JSON.parse(field('data')) };
      }
      const { value, done } = await reader.read();
      if (done) return null;
      text += decoder.decode(value);
    }
  };
}

describe('GET /logs/{executionId}/follow', () => {
  it('sends start, the stored lines, new ones (a late one with an earlier time too), then ends with the execution', async () => {
    const e = await create();
    await setState(e.id, 'RUNNING');
    api.stores.logs.append([line(e.id, 'one'), line(e.id, 'noise', 'DEBUG')]);
    const res = await fetch(`${api.url}/api/v1/logs/${e.id}/follow?minLevel=INFO`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const next = eventReader(res);
    expect(await next()).toEqual({ id: 'start', data: {} });
    expect(await next()).toMatchObject({ id: 'progress', data: { message: 'one', level: 'INFO', executionId: e.id } });
    api.stores.logs.append([line(e.id, 'late', 'WARN', '2000-01-01T00:00:00.000Z')]);
    expect(await next()).toMatchObject({ id: 'progress', data: { message: 'late' } });
    api.stores.logs.append([line(e.id, 'last')]);
    await setState(e.id, 'SUCCESS');
    expect(await next()).toMatchObject({ id: 'progress', data: { message: 'last' } });
    expect(await next()).toBeNull();
  });

  it('ends after the stored lines for a terminated execution, and 404s for an unknown one', async () => {
    const e = await create();
    api.stores.logs.append([line(e.id, 'only')]);
    await setState(e.id, 'FAILED');
    const next = eventReader(await fetch(`${api.url}/api/v1/logs/${e.id}/follow`));
    expect((await next())?.id).toBe('start');
    expect(await next()).toMatchObject({ id: 'progress', data: { message: 'only' } });
    expect(await next()).toBeNull();
    expect((await call(`${api.url}/api/v1/logs/unknown/follow`)).status).toBe(404);
    expect((await call(`${api.url}/api/v1/logs/${e.id}/follow?minLevel=LOUD`)).status).toBe(400);
  });
});

describe('GET /metrics/{executionId}', () => {
  async function withMetrics(): Promise<Execution> {
    const e = await create();
    const stored = (await api.stores.executions.get(e.id))!;
    const at = (s: number) => `2026-05-01T00:00:0${s}.000Z`;
    const attempt = (end: string, metrics: NonNullable<Execution['taskRunList'][number]['attempts'][number]['metrics']>) => ({
      state: { current: 'SUCCESS' as const, histories: [{ state: 'SUCCESS' as const, date: end }], startDate: end, endDate: end }, metrics,
    });
    const run = (id: string, taskId: string, attempts: ReturnType<typeof attempt>[]) => ({
      id, executionId: e.id, namespace: NS, flowId: 'f', taskId, state: attempts[0]!.state, attempts,
    });
    stored.execution.taskRunList = [
      run('tr1', 'a', [attempt(at(1), [{ name: 'rows', type: 'counter', value: 3, tags: { table: 't' } }]),
        attempt(at(2), [{ name: 'rows', type: 'counter', value: 5 }])]),
      run('tr2', 'b', [attempt(at(3), [{ name: 'took', type: 'timer', value: 1.5 }])]),
    ] as Execution['taskRunList'];
    await api.stores.executions.update(stored.execution, stored.resourceVersion);
    return e;
  }

  it('lists each attempt metric as a MetricEntry (timers in milliseconds), paged and filtered', async () => {
    const e = await withMetrics();
    const res = await call(`${api.url}/api/v1/metrics/${e.id}`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.results).toEqual([
      { namespace: NS, flowId: 'f', taskId: 'a', executionId: e.id, taskRunId: 'tr1', type: 'counter', name: 'rows', value: 3, timestamp: '2026-05-01T00:00:01.000Z', tags: { table: 't' }, deleted: false },
      { namespace: NS, flowId: 'f', taskId: 'a', executionId: e.id, taskRunId: 'tr1', type: 'counter', name: 'rows', value: 5, timestamp: '2026-05-01T00:00:02.000Z', tags: {}, deleted: false },
      { namespace: NS, flowId: 'f', taskId: 'b', executionId: e.id, taskRunId: 'tr2', type: 'timer', name: 'took', value: 1500, timestamp: '2026-05-01T00:00:03.000Z', tags: {}, deleted: false },
    ]);
    const page = await call(`${api.url}/api/v1/metrics/${e.id}?page=2&size=2&sort=value:desc`);
    expect(page.body).toEqual({ total: 3, results: [expect.objectContaining({ value: 3 })] });
    expect((await call(`${api.url}/api/v1/metrics/${e.id}?taskId=b`)).body.results.map((m: { name: string }) => m.name)).toEqual(['took']);
    expect((await call(`${api.url}/api/v1/metrics/${e.id}?taskRunId=tr1`)).body.total).toBe(2);
  });

  it('answers an empty page for an unknown execution (as Kestra) and 400 for a bad sort', async () => {
    expect((await call(`${api.url}/api/v1/metrics/unknown`)).body).toEqual({ results: [], total: 0 });
    const bad = await call(`${api.url}/api/v1/metrics/unknown?sort=secret:asc`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('sort');
  });
});
