// POST /stats/executions/daily over the real SQLite stores: counts per UTC day and state (days without executions
// included, every state present), durations of the ended executions, Kestra's filters (namespace prefix, flowId, q),
// the STATS_MAX_DAYS bound and field errors; the aggregate reads no execution record (bodies made unreadable still count).
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import { sampleExecution } from '../../operator/store/sqlite/test-fixtures.js';
import { expectShape } from './compat/shape.js';
import { call, jsonInit, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const daily = (body: unknown) => call(`${api.url}/api/v1/stats/executions/daily`, jsonInit('POST', body));

function ended(id: string, opts: { namespace?: string; flowId?: string; state: ExecutionState; start: string; seconds?: number; labels?: { key: string; value: string }[] }): Execution {
  const e = sampleExecution(id, { namespace: opts.namespace, flowId: opts.flowId, state: opts.state, startDate: opts.start, labels: opts.labels });
  if (opts.seconds !== undefined) e.state.endDate = new Date(Date.parse(opts.start) + opts.seconds * 1000).toISOString();
  return e;
}

beforeAll(async () => {
  api = await startTestApi();
  const seeds = [
    ended('e1', { namespace: 'stats.a', flowId: 'f1', state: 'SUCCESS', start: '2024-03-01T08:00:00Z', seconds: 2 }),
    ended('e2', { namespace: 'stats.a', flowId: 'f1', state: 'SUCCESS', start: '2024-03-01T23:59:59Z', seconds: 4 }),
    ended('e3', { namespace: 'stats.a.child', flowId: 'f2', state: 'FAILED', start: '2024-03-01T10:00:00Z', seconds: 6, labels: [{ key: 'team', value: 'nightly' }] }),
    ended('e4', { namespace: 'stats.b', flowId: 'f1', state: 'RUNNING', start: '2024-03-03T00:00:00Z' }),
    ended('e5', { namespace: 'stats.b', flowId: 'f1', state: 'FAILED', start: '2024-03-03T12:00:00Z', seconds: 1 }),
    ended('e6', { namespace: 'stats.ab', flowId: 'f1', state: 'SUCCESS', start: '2024-03-02T12:00:00Z', seconds: 1 }),
    ended('out', { namespace: 'stats.a', flowId: 'f1', state: 'SUCCESS', start: '2024-02-20T12:00:00Z', seconds: 1 }),
  ];
  for (const e of seeds) await api.stores.executions.create(e);
});
afterAll(async () => { await api?.close(); });

const RANGE = { startDate: '2024-03-01T00:00:00Z', endDate: '2024-03-03T23:59:59Z' };

describe('POST /stats/executions/daily', () => {
  it('answers one entry per day of the range in Kestra\'s shape, counts by state and durations of the ended ones', async () => {
    const res = await daily(RANGE);
    expect(res.status).toBe(200);
    expectShape(res.body, [{
      startDate: 'string', groupBy: 'string',
      duration: { min: 'string', avg: 'string', max: 'string', sum: 'string', count: 'integer' },
      executionCounts: { CREATED: 'integer', RUNNING: 'integer', SUCCESS: 'integer', WARNING: 'integer', FAILED: 'integer', KILLED: 'integer' },
    }]);
    expect(res.body.map((d: any) => d.startDate)).toEqual(['2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z', '2024-03-03T00:00:00Z']);
    const [d1, d2, d3] = res.body;
    expect(d1.executionCounts).toMatchObject({ SUCCESS: 2, FAILED: 1, RUNNING: 0, KILLED: 0 });
    expect(d1.duration).toEqual({ min: 'PT2S', max: 'PT6S', sum: 'PT12S', avg: 'PT4S', count: 3 });
    expect(d2.executionCounts).toMatchObject({ SUCCESS: 1, FAILED: 0 });
    // A running execution is counted, but has no duration yet.
    expect(d3.executionCounts).toMatchObject({ RUNNING: 1, FAILED: 1 });
    expect(d3.duration).toEqual({ min: 'PT1S', max: 'PT1S', sum: 'PT1S', avg: 'PT1S', count: 1 });
    const total = res.body.reduce((n: number, d: any) => n + Object.values(d.executionCounts as Record<string, number>).reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(6); // the execution of February is outside the range
  });

  it('includes days without executions, with zero counts', async () => {
    const res = await daily({ startDate: '2024-03-04T00:00:00Z', endDate: '2024-03-05T10:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(Object.values(res.body[0].executionCounts).every((n) => n === 0)).toBe(true);
    expect(res.body[0].duration).toEqual({ min: 'PT0S', max: 'PT0S', sum: 'PT0S', avg: 'PT0S', count: 0 });
  });

  it('filters by namespace (and its children, not its siblings), flowId and q', async () => {
    const sum = (body: any[], state: string) => body.reduce((n, d) => n + d.executionCounts[state], 0);
    const ns = await daily({ ...RANGE, namespace: 'stats.a' });
    expect([sum(ns.body, 'SUCCESS'), sum(ns.body, 'FAILED')]).toEqual([2, 1]); // stats.ab is not a child of stats.a
    const flow = await daily({ ...RANGE, namespace: 'stats.a', flowId: 'f2' });
    expect([sum(flow.body, 'SUCCESS'), sum(flow.body, 'FAILED')]).toEqual([0, 1]);
    const q = await daily({ ...RANGE, q: 'nightly' });
    expect([sum(q.body, 'SUCCESS'), sum(q.body, 'FAILED')]).toEqual([0, 1]);
  });

  it('defaults to the last 30 days', async () => {
    const res = await daily(undefined);
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThanOrEqual(30);
    expect(res.body.length).toBeLessThanOrEqual(32);
    expect(res.body.at(-1).startDate).toBe(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  });

  it('refuses a range over STATS_MAX_DAYS, a reversed or malformed range and unknown fields, naming the field', async () => {
    const long = await daily({ startDate: '2020-01-01T00:00:00Z', endDate: '2024-01-01T00:00:00Z' });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain('STATS_MAX_DAYS');
    expect(long.body.errors?.[0]?.path ?? long.body.path).toBeDefined();
    expect(JSON.stringify(long.body)).toContain('startDate');
    const reversed = await daily({ startDate: '2024-03-02T00:00:00Z', endDate: '2024-03-01T00:00:00Z' });
    expect(reversed.status).toBe(400);
    const bad = await daily({ startDate: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('startDate');
    const unknown = await daily({ ...RANGE, state: 'FAILED' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("Unknown field 'state'");
    const wrongType = await daily({ ...RANGE, namespace: 3 });
    expect(wrongType.status).toBe(400);
    expect(JSON.stringify(wrongType.body)).toContain('namespace');
  });

  it('reads no execution record: the counts come from the summary columns alone', async () => {
    const before = (await daily(RANGE)).body;
    // Another connection to the same file (this is the file's last test: the records stay unreadable).
    const db = new Database(join(api.dataDir, 'store.db'));
    try { db.prepare("UPDATE execution_bodies SET body = 'not json'").run(); } finally { db.close(); }
    await expect(api.stores.executions.get('e1')).rejects.toThrow();
    const after = await daily(RANGE);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
  });
});
