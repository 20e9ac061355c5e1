// The execution history table on a real PostgreSQL server: idempotent upserts (a re-archive writes the same row once,
// an older resource version never replaces a newer one), every search filter, the live-id exclusion, paging, NULs.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startPostgres } from '../../../test/support/services.js';
import type { Execution, ExecutionState } from '../../core/types.js';
import { PgExecutionArchive } from './pg-archive.js';

let stopPg: () => Promise<void>;
let pool: pg.Pool;
let archive: PgExecutionArchive;
let tableNo = 0;

beforeAll(async () => {
  const service = await startPostgres();
  stopPg = service.stop;
  pool = new pg.Pool({ connectionString: service.url, max: 5 });
});
afterAll(async () => { await pool?.end(); await stopPg?.(); });
beforeEach(async () => { archive = new PgExecutionArchive(pool, { table: `archive_${++tableNo}` }); await archive.init(); });

const exec = (id: string, o: { ns?: string; flow?: string; state?: ExecutionState; second?: number; labels?: Record<string, string> } = {}): Execution => ({
  id, namespace: o.ns ?? 'company.team', flowId: o.flow ?? 'hello', flowRevision: 1, originalId: id, inputs: {},
  labels: Object.entries(o.labels ?? {}).map(([key, value]) => ({ key, value })),
  state: { current: o.state ?? 'SUCCESS', histories: [], startDate: new Date(Date.UTC(2026, 0, 1, 0, 0, o.second ?? 0)).toISOString(), endDate: '2026-01-01T01:00:00.000Z' },
  taskRunList: [{ id: `${id}-run`, taskId: 'hello', state: { current: 'SUCCESS', histories: [], startDate: '2026-01-01T00:00:00.000Z' }, attempts: [], outputs: { value: 'x'.repeat(1000) } } as unknown as Execution['taskRunList'][number]],
});

const rows = async () => Number((await pool.query(`SELECT count(*) AS n FROM ${archive.table}`)).rows[0].n);

describe('PgExecutionArchive', () => {
  it('keeps the full record; re-archiving writes the same row once; an older version never replaces a newer one', async () => {
    const e = exec('a1', { labels: { team: 'data' } });
    await archive.upsert(e, { uid: 'u1', resourceVersion: 10 });
    await archive.upsert(e, { uid: 'u1', resourceVersion: 10 });
    expect(await rows()).toBe(1);
    expect(await archive.get('a1')).toEqual(e);
    const restarted = { ...e, state: { ...e.state, current: 'FAILED' as const } };
    await archive.upsert(restarted, { uid: 'u2', resourceVersion: 20 });
    await archive.upsert(e, { uid: 'u1', resourceVersion: 10 }); // a stale replica's late write
    expect((await archive.get('a1'))!.state.current).toBe('FAILED');
    expect(await rows()).toBe(1);
    expect(await archive.archivedVersions(['a1', 'nope'])).toEqual(new Map([['a1', 20]]));
    expect(await archive.delete('a1')).toBe(true);
    expect(await archive.delete('a1')).toBe(false);
    expect(await archive.get('a1')).toBeUndefined();
  });

  it('filters on namespace (and children), flow, states, labels and start dates; excludes live ids; pages newest first', async () => {
    const all = [
      exec('e1', { second: 1, labels: { team: 'data', env: 'prod' } }),
      exec('e2', { second: 2, state: 'FAILED', labels: { team: 'data' } }),
      exec('e3', { second: 3, ns: 'company.team.sub', labels: { team: 'ops' } }),
      exec('e4', { second: 4, ns: 'company.teamx', flow: 'other' }),
      exec('e5', { second: 4, state: 'KILLED' }),
    ];
    let rv = 1;
    for (const e of all) await archive.upsert(e, { resourceVersion: rv++ });
    const ids = async (q: Parameters<PgExecutionArchive['search']>[0], exclude: string[] = []) => {
      const page = await archive.search(q, exclude);
      return { ids: page.results.map((e) => e.id), total: page.total };
    };
    expect(await ids({})).toEqual({ ids: ['e5', 'e4', 'e3', 'e2', 'e1'], total: 5 });
    expect(await ids({ namespace: 'company.team' })).toEqual({ ids: ['e5', 'e3', 'e2', 'e1'], total: 4 });
    expect(await ids({ flowId: 'other' })).toEqual({ ids: ['e4'], total: 1 });
    expect(await ids({ state: ['FAILED', 'KILLED'] })).toEqual({ ids: ['e5', 'e2'], total: 2 });
    expect(await ids({ labels: { team: 'data' } })).toEqual({ ids: ['e2', 'e1'], total: 2 });
    expect(await ids({ labels: { team: 'data', env: 'prod' } })).toEqual({ ids: ['e1'], total: 1 });
    expect(await ids({ startDate: '2026-01-01T00:00:02Z', endDate: '2026-01-01T00:00:03Z' })).toEqual({ ids: ['e3', 'e2'], total: 2 });
    expect(await ids({ limit: 2, offset: 1 })).toEqual({ ids: ['e4', 'e3'], total: 5 });
    expect(await ids({ limit: 0 })).toEqual({ ids: [], total: 5 });
    expect(await ids({ namespace: 'company.team' }, ['e5', 'e1', 'not-archived'])).toEqual({ ids: ['e3', 'e2'], total: 2 });
  });

  it('stores records and labels holding NUL characters and hostile label keys', async () => {
    const e = exec('nul', { labels: { 'k"\'); DROP TABLE x; --': 'v\0w' } });
    e.outputs = { text: 'a\0b' };
    await archive.upsert(e, { resourceVersion: 1 });
    expect((await archive.get('nul'))!.outputs).toEqual({ text: 'a\0b' });
    expect((await archive.search({ labels: { 'k"\'); DROP TABLE x; --': 'v\uFFFDw' } }, [])).total).toBe(1);
  });

  it('counts by UTC day and state with the durations of the ended ones, filters applied, live ids left out', async () => {
    const at = (id: string, start: string, seconds: number | undefined, o: { ns?: string; state?: ExecutionState } = {}): Execution => {
      const e = exec(id, o);
      e.state = { current: o.state ?? 'SUCCESS', histories: [], startDate: start, ...(seconds === undefined ? {} : { endDate: new Date(Date.parse(start) + seconds * 1000).toISOString() }) };
      return e;
    };
    let rv = 1;
    for (const e of [
      at('d1', '2026-02-01T01:00:00.000Z', 2), at('d2', '2026-02-01T23:00:00.000Z', 4), at('d3', '2026-02-01T05:00:00.000Z', 6, { state: 'FAILED' }),
      at('d4', '2026-02-02T05:00:00.000Z', undefined, { state: 'RUNNING' }), at('d5', '2026-02-02T06:00:00.000Z', 1, { ns: 'other' }),
      at('d6', '2026-01-31T23:59:59.000Z', 1),
    ]) await archive.upsert(e, { resourceVersion: rv++ });
    const q = { namespace: 'company.team', startDate: '2026-02-01T00:00:00Z', endDate: '2026-02-02T23:59:59Z' };
    const zero = { durationMinMs: 0, durationMaxMs: 0, durationSumMs: 0 };
    expect(await archive.dailyStats(q, [])).toEqual([
      { day: '2026-02-01', state: 'FAILED', count: 1, ended: 1, durationMinMs: 6000, durationMaxMs: 6000, durationSumMs: 6000 },
      { day: '2026-02-01', state: 'SUCCESS', count: 2, ended: 2, durationMinMs: 2000, durationMaxMs: 4000, durationSumMs: 6000 },
      { day: '2026-02-02', state: 'RUNNING', count: 1, ended: 0, ...zero },
    ]);
    expect(await archive.dailyStats(q, ['d1', 'd3', 'd4'])).toEqual([
      { day: '2026-02-01', state: 'SUCCESS', count: 1, ended: 1, durationMinMs: 4000, durationMaxMs: 4000, durationSumMs: 4000 },
    ]);
  });
});
