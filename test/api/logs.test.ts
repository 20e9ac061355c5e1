// API tests of the log routes over the real log store: per execution (JSON, level filter, text download) and search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogLine } from '../../operator/core/types.js';
import { call, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const line = (i: number, level: LogLine['level'], message: string, executionId = 'exec1'): LogLine => ({
  executionId, namespace: 'logs.team', flowId: 'f', taskId: 't1', taskRunId: `tr${i % 2}`, level,
  timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), message,
});

beforeAll(async () => {
  api = await startTestApi();
  api.stores.logs.append([
    line(1, 'DEBUG', 'starting up'), line(2, 'INFO', 'processing banana'), line(3, 'WARN', 'slow banana'),
    line(4, 'ERROR', 'exploded'), line(5, 'INFO', 'banana elsewhere', 'exec2'),
    { ...line(6, 'INFO', 'other task'), taskId: 't2' },
  ]);
  await api.stores.logs.flush();
});
afterAll(async () => { await api.close(); });

const logs = (path: string): string => `${api.url}/api/v1/logs/${path}`;

describe('logs', () => {
  it('lists the lines of one execution in time order, filtered by level and task run', async () => {
    const all = await call(logs('exec1'));
    expect(all.status).toBe(200);
    expect(all.body.map((l: LogLine) => l.message)).toEqual(['starting up', 'processing banana', 'slow banana', 'exploded', 'other task']);
    expect((await call(logs('exec1?taskId=t2'))).body.map((l: LogLine) => l.message)).toEqual(['other task']);
    const warn = await call(logs('exec1?minLevel=WARN'));
    expect(warn.body.map((l: LogLine) => l.level)).toEqual(['WARN', 'ERROR']);
    const tr = await call(logs('exec1?taskRunId=tr0'));
    expect(tr.body.map((l: LogLine) => l.message)).toEqual(['processing banana', 'exploded', 'other task']);
    expect((await call(logs('exec1?minLevel=LOUD'))).status).toBe(400);
    expect((await call(logs('unknown'))).body).toEqual([]);
  });

  it('downloads the lines as text', async () => {
    const res = await fetch(logs('exec1/download'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[1]).toBe('2024-01-01T00:00:02.000Z INFO t1 processing banana');
  });

  it('searches the full text across executions, with filters and paging', async () => {
    const res = await call(logs('search?q=banana'));
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    const warn = await call(logs('search?q=banana&level=WARN'));
    expect(warn.body.results.map((l: LogLine) => l.message)).toEqual(['slow banana']);
    const paged = await call(logs('search?q=banana&size=2&page=2'));
    expect(paged.body.total).toBe(3);
    expect(paged.body.results).toHaveLength(1);
    const byNs = await call(logs('search?namespace=logs.team&flowId=f'));
    expect(byNs.body.total).toBe(6);
  });

  it('deletes the lines of one execution (204)', async () => {
    expect((await call(logs('exec2'), { method: 'DELETE' })).status).toBe(204);
    expect((await call(logs('exec2'))).body).toEqual([]);
    expect((await call(logs('exec1'))).body).toHaveLength(5);
  });

  it('answers 400, not 500, for a malformed search query', async () => {
    const res = await call(logs('search?q=%22unbalanced'));
    expect([200, 400]).toContain(res.status);
  });
});
