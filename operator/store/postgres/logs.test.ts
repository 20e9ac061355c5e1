// PostgreSQL log store on a real PostgreSQL server: the SQLite log store's cases (buffered appends visible to reads,
// levels, search, deletion), plus phrases, prefixes, OR/NOT, hostile queries, large batches and failed writes kept.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startPostgres } from '../../../test/support/services.js';
import { logLine, logStorePagingCases } from '../sqlite/test-fixtures.js';
import { PgLogStore } from './logs.js';

let stopPg: () => Promise<void>;
let pool: pg.Pool;
let store: PgLogStore;
let tableNo = 0;

const at = (second: number) => `2026-05-01T00:00:${String(second).padStart(2, '0')}.000Z`;

beforeAll(async () => {
  const service = await startPostgres();
  stopPg = service.stop;
  pool = new pg.Pool({ connectionString: service.url, max: 5 });
});
afterAll(async () => { await pool?.end(); await stopPg?.(); });
beforeEach(() => { store = new PgLogStore(pool, { table: `logs_${++tableNo}`, flushMs: 60_000 }); });

const total = async (q: string) => (await store.search({ q })).total;

describe('PgLogStore', () => {
  it('reads flush buffered lines first, in time order, filtered by level and task run', async () => {
    store.append([
      logLine('e1', 'second', 'DEBUG', at(2)),
      logLine('e1', 'first', 'INFO', at(1)),
      logLine('e1', 'third', 'ERROR', at(3), { taskRunId: 'tr-b', taskId: undefined, attemptNumber: undefined }),
      logLine('e2', 'elsewhere', 'INFO', at(1)),
    ]);
    expect((await store.forExecution('e1')).map((l) => l.message)).toEqual(['first', 'second', 'third']);
    expect((await store.forExecution('e1', { minLevel: 'INFO' })).map((l) => l.message)).toEqual(['first', 'third']);
    const [third] = await store.forExecution('e1', { taskRunId: 'tr-b' });
    expect(third).toEqual({ executionId: 'e1', namespace: 'company.team', flowId: 'hello', taskRunId: 'tr-b', level: 'ERROR', timestamp: at(3), message: 'third' });
    const [first] = await store.forExecution('e1');
    expect(first).toEqual(logLine('e1', 'first', 'INFO', at(1)));
  });

  it('searches words, newest first, with a total and the other filters', async () => {
    store.append([
      logLine('e1', 'Connecting to database orders', 'INFO', at(1)),
      logLine('e1', 'database connection refused', 'ERROR', at(2)),
      logLine('e2', 'Fetched 42 rows from orders', 'INFO', at(3), { namespace: 'company', flowId: 'other' }),
      logLine('e3', 'orders exported', 'WARN', at(4), { namespace: 'companyx' }),
    ]);
    const page = await store.search({ q: 'orders' });
    expect(page.results.map((l) => l.executionId)).toEqual(['e3', 'e2', 'e1']);
    expect(page.total).toBe(3);
    expect((await store.search({ q: 'database AND refused' })).results.map((l) => l.timestamp)).toEqual([at(2)]);
    expect((await store.search({ q: 'database refused' })).results.map((l) => l.timestamp)).toEqual([at(2)]);
    expect(await total('conn*')).toBe(2);
    expect(await total('CONN*')).toBe(2);
    expect((await store.search({ q: 'orders', namespace: 'company' })).results.map((l) => l.executionId)).toEqual(['e2', 'e1']);
    expect((await store.search({ q: 'orders', minLevel: 'WARN' })).total).toBe(1);
    expect((await store.search({ flowId: 'other' })).total).toBe(1);
    expect((await store.search({})).total).toBe(4);
    expect((await store.search({ executionId: 'e1', limit: 1, offset: 1 })).results.map((l) => l.timestamp)).toEqual([at(1)]);
    const limited = await store.search({ q: 'orders', limit: 1 });
    expect([limited.total, limited.results.length]).toEqual([3, 1]);
  });

  it('matches quoted phrases in order, prefixes, OR and NOT', async () => {
    store.append([
      logLine('e1', 'connection refused by host', 'INFO', at(1)),
      logLine('e1', 'host refused connection', 'INFO', at(2)),
      logLine('e1', 'timeout while reading', 'INFO', at(3)),
    ]);
    expect((await store.search({ q: '"connection refused"' })).results.map((l) => l.timestamp)).toEqual([at(1)]);
    expect(await total('"refused connection" host')).toBe(1);
    expect(await total('refused OR timeout')).toBe(3);
    expect(await total('refused NOT timeout')).toBe(2);
    expect(await total('connection -host')).toBe(0);
    expect(await total('read*')).toBe(1);
    expect(await total('time* host')).toBe(0);
  });

  it('treats malformed syntax and operator characters as plain text', async () => {
    store.append([logLine('e1', 'value is "quoted" (AND more', 'INFO', at(1)), logLine('e1', 'nothing', 'INFO', at(2))]);
    expect(await total('"quoted" (AND')).toBe(1);
    expect(await total('AND OR NOT')).toBe(0);
    expect(await total('col:value')).toBe(0);
    expect(await total('"unterminated quoted')).toBe(0);
    expect(await total('***')).toBe(0);
    expect(await total("'; DROP TABLE logs; --")).toBe(0);
    expect(await total("value' | 'nothing")).toBe(0);
    expect(await total('nothing:* | !value & (')).toBe(0);
    expect(await total("nothing'*")).toBe(1);
    expect(await total('noth*')).toBe(1);
    expect((await store.search({})).total).toBe(2);
  });

  logStorePagingCases(() => store);

  it('deletes the lines of an execution', async () => {
    store.append([logLine('e1', 'unique marker alpha', 'INFO', at(1)), logLine('e2', 'unique marker beta', 'INFO', at(2))]);
    await store.deleteExecution('e1');
    expect(await store.forExecution('e1')).toEqual([]);
    expect((await store.search({ q: 'marker' })).results.map((l) => l.executionId)).toEqual(['e2']);
    expect(await total('alpha')).toBe(0);
  });

  it('close flushes lines still buffered and later appends are dropped', async () => {
    store.append([logLine('e1', 'kept on close', 'INFO', at(1))]);
    await store.close();
    store.append([logLine('e1', 'too late', 'INFO', at(2))]);
    const reader = new PgLogStore(pool, { table: store.table });
    expect((await reader.forExecution('e1')).map((l) => l.message)).toEqual(['kept on close']);
  });

  it('flushes by itself when no timer is configured', async () => {
    const auto = new PgLogStore(pool, { table: store.table });
    auto.append([logLine('e1', 'auto', 'INFO', at(1))]);
    for (let i = 0; i < 200; i++) {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${store.table}`).catch(() => ({ rows: [{ n: 0 }] }));
      if (rows[0].n === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await pool.query(`SELECT message FROM ${store.table}`)).rows).toEqual([{ message: 'auto' }]);
  });

  it('writes large appends in batches and keeps odd characters intact', async () => {
    const batched = new PgLogStore(pool, { table: store.table, batchSize: 1000, flushMs: 60_000 });
    const lines = Array.from({ length: 4500 }, (_, i) => logLine('big', `line ${i} ünïcödé 🚀 "q" 'a' \\ tab\t`, 'INFO', new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString()));
    lines.push(logLine('big', 'nul\0byte', 'INFO', '2026-01-02T00:00:00.000Z'));
    batched.append(lines);
    const read = await batched.forExecution('big');
    expect(read.length).toBe(4501);
    expect(read[4499]!.message).toBe(`line 4499 ünïcödé 🚀 "q" 'a' \\ tab\t`);
    expect(read[4500]!.message).toBe('nul\uFFFDbyte');
    expect((await batched.search({ q: 'ünïcödé' })).total).toBe(4500);
  });

  it('creates its table once even when several stores start together', async () => {
    const stores = Array.from({ length: 4 }, () => new PgLogStore(pool, { table: store.table }));
    await Promise.all(stores.map((s, i) => { s.append([logLine('e1', `from ${i}`, 'INFO', at(i))]); return s.flush(); }));
    expect((await store.forExecution('e1')).map((l) => l.message)).toEqual(['from 0', 'from 1', 'from 2', 'from 3']);
  });

  it('keeps lines buffered when a write fails and writes them on the next flush', async () => {
    await store.init();
    store.append([logLine('e1', 'survives', 'INFO', at(1))]);
    await pool.query(`ALTER TABLE ${store.table} RENAME TO ${store.table}_away`);
    await expect(store.flush()).rejects.toThrow(/does not exist/);
    await pool.query(`ALTER TABLE ${store.table}_away RENAME TO ${store.table}`);
    expect((await store.forExecution('e1')).map((l) => l.message)).toEqual(['survives']);
  });

  it('rejects a table name that is not a plain identifier', () => {
    expect(() => new PgLogStore(pool, { table: 'logs; DROP TABLE x' })).toThrow(/invalid log table name/);
  });
});
