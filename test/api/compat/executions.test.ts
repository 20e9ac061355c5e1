// API compatibility: Kestra's JSON shapes of the execution, log-follow, metric and KV-delete routes, as a Kestra
// client or its UI reads them (ExecutionController, LogController, MetricController, KVController; models BulkResponse,
// BulkErrorResponse, Label, MetricEntry, LogEntry; SSE events with ids start/progress/end).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../../operator/core/types.js';
import { startEmbedded, type Embedded } from '../../support/embedded.js';
import { call, jsonInit, simpleFlow } from '../helpers.js';
import { expectShape, paged, type Shape } from './shape.js';

const BULK_RESPONSE: Shape = { count: 'integer' };
const BULK_ERROR_RESPONSE: Shape = { message: 'string', invalids: [{ message: 'string', invalidValue: 'any' }] };
const LABEL: Shape = { key: 'string', value: 'string' };
const STATE: Shape = { current: 'string', histories: [{ state: 'string', date: 'string' }], startDate: 'string' };
const EXECUTION: Shape = { id: 'string', namespace: 'string', flowId: 'string', flowRevision: 'integer', state: STATE, labels: [LABEL], taskRunList: ['any'] };
const METRIC_ENTRY: Shape = {
  namespace: 'string', flowId: 'string', taskId: 'string?', executionId: 'string?', taskRunId: 'string?',
  type: 'string', name: 'string', value: 'number', timestamp: 'string', tags: 'object?', deleted: 'boolean',
};
const LOG_ENTRY: Shape = { namespace: 'string', flowId: 'string', executionId: 'string', level: 'string', timestamp: 'string', message: 'string' };

// The whole embedded service: labels and change-status are applied by the controller.
let svc: Embedded;
const NS = 'compat.exec';
const root = (): string => svc.base.replace(/\/api\/v1$/, '');
const base = (): string => `${root()}/api/v1/main/executions`;

beforeAll(async () => {
  svc = await startEmbedded();
  await svc.createFlow(simpleFlow(NS, 'f'));
}, 60_000);
afterAll(async () => { await svc?.close(); });

/** An execution run to its end (SUCCESS), then moved to `state` through change-status when another is asked for. */
async function inState(state: 'SUCCESS' | 'FAILED'): Promise<Execution> {
  const e = (await call(`${base()}/${NS}/f?wait=true`, { method: 'POST' })).body as Execution;
  expect(e.state.current).toBe('SUCCESS');
  if (state === 'SUCCESS') return e;
  return (await call(`${base()}/${e.id}/change-status?status=${state}`, { method: 'POST' })).body as Execution;
}

/** Every event of a stream that ends by itself: `{id, data}`. */
async function events(url: string): Promise<{ id: string; data: unknown }[]> {
  const text = await (await fetch(url)).text();
  return text.split('\n\n').filter((e) => e !== '' && !e.startsWith(':')).map((e) => {
    const lines = e.split('\n');
    const field = (name: string): string => lines.find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2);
    return { id: field('id'), data: JSON.parse(field('data')) };
  });
}

describe('Kestra shapes of the execution routes', () => {
  it('POST /executions/{id}/labels answers the Execution with labels as [{key, value}]', async () => {
    const e = await inState('SUCCESS');
    const res = await call(`${base()}/${e.id}/labels`, jsonInit('POST', [{ key: 'k', value: 'v' }]));
    expect(res.status).toBe(200);
    expectShape(res.body, EXECUTION, 'Execution');
  });

  it('POST /executions/{id}/change-status answers the Execution', async () => {
    const e = await inState('FAILED');
    const res = await call(`${base()}/${e.id}/change-status?status=SUCCESS`, { method: 'POST' });
    expectShape(res.body, EXECUTION, 'Execution');
  });

  it('bulk routes answer BulkResponse, or BulkErrorResponse (400) for invalid ids', async () => {
    const e = await inState('FAILED');
    const ok = await call(`${base()}/restart/by-ids`, jsonInit('POST', [e.id]));
    expect(ok.status).toBe(200);
    expectShape(ok.body, BULK_RESPONSE, 'BulkResponse');
    const bad = await call(`${base()}/kill/by-ids`, jsonInit('DELETE', ['missing']));
    expect(bad.status).toBe(400);
    expectShape(bad.body, BULK_ERROR_RESPONSE, 'BulkErrorResponse');
    const byQuery = await call(`${base()}/by-query?namespace=${NS}&state=KILLED`, { method: 'DELETE' });
    expectShape(byQuery.body, BULK_RESPONSE, 'BulkResponse');
  });

  it('GET /executions/{id}/follow sends start ({id}), then Executions as progress, and end', async () => {
    const e = await inState('SUCCESS');
    const list = await events(`${base()}/${e.id}/follow`);
    expect(list.map((x) => x.id)).toEqual(['start', 'end']);
    expect(list[0]!.data).toEqual({ id: e.id });
    expectShape(list[1]!.data, EXECUTION, 'Execution');
  });

  it('GET /logs/{executionId}/follow sends start, then LogEntry events as progress', async () => {
    const e = await inState('SUCCESS');
    svc.stores.logs.append([{ executionId: e.id, namespace: NS, flowId: 'f', taskId: 'hello', level: 'INFO', timestamp: new Date().toISOString(), message: 'hi' }]);
    const list = await events(`${root()}/api/v1/main/logs/${e.id}/follow`);
    expect(list[0]!.id).toBe('start');
    expect(list.slice(1).map((x) => x.id)).toEqual(list.slice(1).map(() => 'progress'));
    expect(list.slice(1).map((x) => (x.data as { message: string }).message)).toContain('hi');
    for (const x of list.slice(1)) expectShape(x.data, LOG_ENTRY, 'LogEntry');
  });

  it('GET /metrics/{executionId} answers PagedResults<MetricEntry>', async () => {
    const e = await inState('SUCCESS');
    const stored = (await svc.stores.executions.get(e.id))!;
    const date = new Date().toISOString();
    const state = { current: 'SUCCESS' as const, histories: [{ state: 'SUCCESS' as const, date }], startDate: date, endDate: date };
    stored.execution.taskRunList = [{
      id: 'tr', executionId: e.id, namespace: NS, flowId: 'f', taskId: 'hello', state,
      attempts: [{ state, metrics: [{ name: 'n', type: 'counter', value: 1 }] }],
    }] as Execution['taskRunList'];
    await svc.stores.executions.update(stored.execution, stored.resourceVersion);
    const res = await call(`${root()}/api/v1/main/metrics/${e.id}`);
    expectShape(res.body, paged(METRIC_ENTRY), 'PagedResults<MetricEntry>');
    expect(res.body.total).toBe(1);
  });

  it('KV deletes answer a boolean and ApiDeleteBulkResponse {keys}', async () => {
    const kv = `${root()}/api/v1/main/namespaces/${NS}/kv`;
    await call(`${kv}/a`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '1' });
    expectShape((await call(`${kv}/a`, { method: 'DELETE' })).body, 'boolean', 'delete');
    expectShape((await call(kv, jsonInit('DELETE', { keys: ['a'] }))).body, { keys: ['string'] }, 'ApiDeleteBulkResponse');
  });
});
