// API tests of the log routes over the real log store: per execution (JSON, Kestra's filters, paging, the LOGS_MAX_LINES
// bound, streamed text download) and search.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../operator/core/limits.js';
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
    expect((await call(logs('exec1?taskRunId=tr1&attempt=0'))).body).toEqual([]);
  });

  it('answers 200 [] for an unknown execution, as Kestra does', async () => {
    const res = await call(logs('unknown'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get('x-total-count')).toBe('0');
  });

  it('pages the lines of one execution with page and size, the matching total in X-Total-Count', async () => {
    const page2 = await call(logs('exec1?page=2&size=2'));
    expect(page2.status).toBe(200);
    expect(page2.body.map((l: LogLine) => l.message)).toEqual(['slow banana', 'exploded']);
    expect(page2.headers.get('x-total-count')).toBe('5');
    expect(page2.headers.get('x-truncated')).toBeNull();
    expect((await call(logs('exec1?page=3&size=2'))).body.map((l: LogLine) => l.message)).toEqual(['other task']);
    expect((await call(logs('exec1?page=4&size=2'))).body).toEqual([]);
    const firstTen = await call(logs('exec1?page=1'));
    expect(firstTen.body).toHaveLength(5);
    const filtered = await call(logs('exec1?minLevel=INFO&taskId=t1&size=1&page=2'));
    expect(filtered.body.map((l: LogLine) => l.message)).toEqual(['slow banana']);
    expect(filtered.headers.get('x-total-count')).toBe('3');
  });

  it.each([
    ['page=0', 'page'], ['page=abc', 'page'], ['page=1.5', 'page'], ['size=0', 'size'], ['size=10001', 'size'],
    ['size=10&page=9007199254740991', 'page'], ['attempt=-1', 'attempt'],
  ])('answers 400 naming the parameter for %s', async (query, name) => {
    for (const path of [`exec1?${query}`, `exec1/download?${query}`].filter((p) => !p.includes('download') || name === 'attempt')) {
      const res = await call(logs(path));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(name);
    }
  });

  it('downloads the lines as text', async () => {
    const res = await fetch(logs('exec1/download'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const lines = (await res.text()).trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[1]).toBe('2024-01-01T00:00:02.000Z INFO t1 processing banana');
    const warn = await (await fetch(logs('exec1/download?minLevel=WARN'))).text();
    expect(warn).toBe('2024-01-01T00:00:03.000Z WARN t1 slow banana\n2024-01-01T00:00:04.000Z ERROR t1 exploded\n');
    expect(await (await fetch(logs('unknown/download'))).text()).toBe('');
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

  it('answers 400 naming page or size for a search page out of range', async () => {
    for (const [query, name] of [['page=0', 'page'], ['size=1001', 'size'], ['size=1000&page=9007199254740991', 'page']]) {
      const res = await call(logs(`search?q=banana&${query}`));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe(name);
    }
  });

  it('answers 400, not 500, for a malformed search query', async () => {
    const res = await call(logs('search?q=%22unbalanced'));
    expect([200, 400]).toContain(res.status);
  });
});

describe('logs over LOGS_MAX_LINES', () => {
  let small: TestApi;
  const many = Array.from({ length: 2_500 }, (_, i) => line(i, 'INFO', `line ${i}`, 'big'));
  beforeAll(async () => {
    small = await startTestApi({ limits: { ...DEFAULT_LIMITS, logsMaxLines: 1_000 } });
    small.stores.logs.append(many);
  });
  afterAll(async () => { await small.close(); });
  const url = (path: string): string => `${small.url}/api/v1/logs/${path}`;

  it('answers at most LOGS_MAX_LINES lines without paging, saying so in X-Truncated', async () => {
    const res = await call(url('big'));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1_000);
    expect(res.body[999].message).toBe('line 999');
    expect(res.headers.get('x-total-count')).toBe('2500');
    expect(res.headers.get('x-truncated')).toBe('true');
    const last = await call(url('big?page=3&size=1000'));
    expect(last.body.map((l: LogLine) => l.message)).toEqual(many.slice(2_000).map((l) => l.message));
    expect(last.headers.get('x-truncated')).toBeNull();
    const tooBig = await call(url('big?size=1001'));
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.message).toBe("Invalid 'size': expected an integer between 1 and 1000, got '1001'");
  });

  it('downloads every line, across the store\'s pages, in order', async () => {
    const res = await fetch(url('big/download'));
    expect(res.headers.get('content-length')).toBeNull(); // streamed (chunked), not built whole
    const text = await res.text();
    expect(text.split('\n').slice(0, -1)).toEqual(many.map((l) => `${l.timestamp} INFO t1 ${l.message}`));
  });
});
