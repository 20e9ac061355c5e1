// Log store on a real SQLite file: buffered appends visible to reads, levels, paged reads (LIMIT/OFFSET and keyset), FTS5 search and its fallback, deletion.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { logLine, logStorePagingCases, tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

const at = (second: number) => `2026-05-01T00:00:${String(second).padStart(2, '0')}.000Z`;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir, { logFlushMs: 60_000 }); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('SqliteLogStore', () => {
  it('reads flush buffered lines first, in time order, filtered by level and task run', async () => {
    stores.logs.append([
      logLine('e1', 'second', 'DEBUG', at(2)),
      logLine('e1', 'first', 'INFO', at(1)),
      logLine('e1', 'third', 'ERROR', at(3), { taskRunId: 'tr-b', taskId: undefined, attemptNumber: undefined }),
      logLine('e2', 'elsewhere', 'INFO', at(1)),
    ]);
    expect((await stores.logs.forExecution('e1')).map((l) => l.message)).toEqual(['first', 'second', 'third']);
    expect((await stores.logs.forExecution('e1', { minLevel: 'INFO' })).map((l) => l.message)).toEqual(['first', 'third']);
    const [third] = await stores.logs.forExecution('e1', { taskRunId: 'tr-b' });
    expect(third).toEqual({ executionId: 'e1', namespace: 'company.team', flowId: 'hello', taskRunId: 'tr-b', level: 'ERROR', timestamp: at(3), message: 'third' });
  });

  it('searches with FTS5 syntax, newest first, with a total', async () => {
    stores.logs.append([
      logLine('e1', 'Connecting to database orders', 'INFO', at(1)),
      logLine('e1', 'database connection refused', 'ERROR', at(2)),
      logLine('e2', 'Fetched 42 rows from orders', 'INFO', at(3), { namespace: 'company', flowId: 'other' }),
      logLine('e3', 'orders exported', 'WARN', at(4), { namespace: 'companyx' }),
    ]);
    const page = await stores.logs.search({ q: 'orders' });
    expect(page.results.map((l) => l.executionId)).toEqual(['e3', 'e2', 'e1']);
    expect(page.total).toBe(3);
    expect((await stores.logs.search({ q: 'database AND refused' })).results.map((l) => l.timestamp)).toEqual([at(2)]);
    expect((await stores.logs.search({ q: 'conn*' })).total).toBe(2);
    expect((await stores.logs.search({ q: 'orders', namespace: 'company' })).results.map((l) => l.executionId)).toEqual(['e2', 'e1']);
    expect((await stores.logs.search({ q: 'orders', minLevel: 'WARN' })).total).toBe(1);
    expect((await stores.logs.search({ flowId: 'other' })).total).toBe(1);
    expect((await stores.logs.search({ executionId: 'e1', limit: 1, offset: 1 })).results.map((l) => l.timestamp)).toEqual([at(1)]);
  });

  it('falls back to a phrase query when the FTS5 syntax is malformed', async () => {
    stores.logs.append([logLine('e1', 'value is "quoted" (AND more', 'INFO', at(1)), logLine('e1', 'nothing', 'INFO', at(2))]);
    expect((await stores.logs.search({ q: '"quoted" (AND' })).total).toBe(1);
    expect((await stores.logs.search({ q: 'AND OR NOT' })).total).toBe(0);
    expect((await stores.logs.search({ q: 'col:value' })).total).toBe(0);
  });

  logStorePagingCases(() => stores.logs);

  it('deletes the lines of an execution and its full-text entries', async () => {
    stores.logs.append([logLine('e1', 'unique marker alpha', 'INFO', at(1)), logLine('e2', 'unique marker beta', 'INFO', at(2))]);
    await stores.logs.deleteExecution('e1');
    expect(await stores.logs.forExecution('e1')).toEqual([]);
    expect((await stores.logs.search({ q: 'marker' })).results.map((l) => l.executionId)).toEqual(['e2']);
    expect((await stores.logs.search({ q: 'alpha' })).total).toBe(0);
  });

  it('close flushes lines still buffered', async () => {
    stores.logs.append([logLine('e1', 'kept on close', 'INFO', at(1))]);
    await stores.close();
    stores = openEmbeddedStores(tmp.dir);
    expect((await stores.logs.forExecution('e1')).map((l) => l.message)).toEqual(['kept on close']);
  });

  it('flushes by itself on the next event-loop turn when no timer is configured', async () => {
    await stores.close();
    stores = openEmbeddedStores(tmp.dir);
    stores.logs.append([logLine('e1', 'auto', 'INFO', at(1))]);
    await new Promise((resolve) => setImmediate(resolve));
    const reader = openEmbeddedStores(tmp.dir);
    try {
      expect((await reader.logs.forExecution('e1')).map((l) => l.message)).toEqual(['auto']);
    } finally {
      await reader.close();
    }
  });
});
