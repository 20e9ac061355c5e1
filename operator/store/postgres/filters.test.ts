// Kestra's search filters on PostgreSQL (real server): the log store and the cluster execution history answer the
// shared cases of test/support/filter-cases.ts as the SQLite stores do (REGEX through `~` after RE2 accepted it).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionFilterCases, filterExecutions, filterLogLines, logFilterCases } from '../../../test/support/filter-cases.js';
import { startPostgres } from '../../../test/support/services.js';
import { PgExecutionArchive } from '../../kube/archive/pg-archive.js';
import { PgLogStore } from './logs.js';

let stopPg: () => Promise<void>;
let pool: pg.Pool;
let logs: PgLogStore;
let archive: PgExecutionArchive;

beforeAll(async () => {
  const service = await startPostgres();
  stopPg = service.stop;
  pool = new pg.Pool({ connectionString: service.url, max: 5 });
  logs = new PgLogStore(pool, { table: 'filter_logs', flushMs: 60_000 });
  logs.append(filterLogLines());
  archive = new PgExecutionArchive(pool, { table: 'filter_archive' });
  let rv = 1;
  for (const e of filterExecutions()) await archive.upsert(e, { resourceVersion: rv++ });
});
afterAll(async () => { await pool?.end(); await stopPg?.(); });

describe('PostgreSQL log search filters', () => {
  logFilterCases(async (filters) => {
    const page = await logs.search({ filters });
    return { messages: page.results.map((l) => l.message), total: page.total };
  });
});

describe('PostgreSQL execution history search filters', () => {
  executionFilterCases(async (filters) => {
    const page = await archive.search({ filters }, []);
    return { ids: page.results.map((e) => e.id), total: page.total };
  });
});

describe('a REGEX PostgreSQL refuses', () => {
  it('fails with invalid_regular_expression (2201B), which the API answers 400 (api/errors.ts)', async () => {
    const { toResponse } = await import('../../../api/errors.js');
    const err = await logs.search({ filters: [{ kind: 'text', field: 'namespace', op: 'REGEX', values: ['(?P<n>a)'] }] }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('2201B');
    expect(toResponse(err)?.status).toBe(400);
  });
});
