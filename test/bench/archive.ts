// Execution history bench: the API (cluster stores on the Kubernetes API test server) over 10,000 archived executions
// in a real PostgreSQL plus a few live ones: search pages (first, deep), filtered searches and a GET of an archived
// execution, through HTTP. Printed, never asserted. BENCH=archive (also part of BENCH=kube); BENCH_ARCHIVED sets the count.
import pg from 'pg';
import { createApp } from '../../api/app.js';
import { startServer } from '../../api/server.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import { PgExecutionArchive } from '../../operator/kube/archive/pg-archive.js';
import { openKubeStores } from '../../operator/kube/store/index.js';
import { openEmbeddedStores } from '../../operator/store/sqlite/index.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { startKubeTestServer } from '../kube/test-server/index.js';
import { startPostgres } from '../support/services.js';

const ARCHIVED = Number(process.env.BENCH_ARCHIVED ?? 10_000);
const LIVE = 50;
const STATES: ExecutionState[] = ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'];

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? NaN; };

function record(i: number, state: ExecutionState): Execution {
  const id = `bench-${String(i).padStart(6, '0')}`;
  const start = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  return {
    id, namespace: `company.team${i % 5}`, flowId: `flow${i % 20}`, flowRevision: 1, originalId: id, inputs: { n: i },
    labels: [{ key: 'batch', value: `b${i % 100}` }, { key: 'env', value: i % 2 ? 'prod' : 'dev' }],
    state: { current: state, histories: [{ state: 'CREATED', date: start }, { state, date: start }], startDate: start, ...(state === 'RUNNING' ? {} : { endDate: start }) },
    taskRunList: Array.from({ length: 5 }, (_, t) => ({
      id: `${id}-t${t}`, executionId: id, namespace: 'company.team', flowId: 'flow', taskId: `t${t}`,
      state: { current: 'SUCCESS', histories: [], startDate: start, endDate: start }, attempts: [{ state: { current: 'SUCCESS', histories: [], startDate: start } }],
      outputs: { value: `output of task ${t} of execution ${i}` },
    })) as unknown as Execution['taskRunList'],
  };
}

export async function runArchiveBench(): Promise<void> {
  const pgSvc = await startPostgres();
  const srv = await startKubeTestServer();
  const tmp = tempDir('archive-bench-');
  const local = openEmbeddedStores(tmp.dir);
  const pool = new pg.Pool({ connectionString: pgSvc.url, max: 8 });
  try {
    const archive = new PgExecutionArchive(pool);
    await archive.init();
    let t0 = performance.now();
    for (let i = 0; i < ARCHIVED; i += 8) {
      await Promise.all(Array.from({ length: Math.min(8, ARCHIVED - i) }, (_, k) => archive.upsert(record(i + k, STATES[(i + k) % STATES.length]!), { resourceVersion: i + k + 1 })));
    }
    const archiveMs = performance.now() - t0;
    const stores = await openKubeStores({ kc: srv.kubeConfig(), namespace: 'bench', logs: local.logs, storage: local.storage, resyncMs: 0, archive });
    await stores.ready();
    for (let i = 0; i < LIVE; i++) await stores.executions.create(record(ARCHIVED + i, 'RUNNING'));
    const api = await startServer(createApp({ stores }), 0, '127.0.0.1');
    const base = `http://127.0.0.1:${api.port}/api/v1`;
    const time = async (path: string, rounds = 20): Promise<{ ms: number; total?: number }> => {
      let total: number | undefined;
      const ms: number[] = [];
      for (let r = 0; r < rounds; r++) {
        t0 = performance.now();
        const res = await fetch(`${base}${path}`);
        const body = await res.json() as { total?: number };
        ms.push(performance.now() - t0);
        if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
        total = body.total;
      }
      return { ms: median(ms), ...(total !== undefined ? { total } : {}) };
    };
    const cases: [string, string][] = [
      ['search, first page of 25 (all)', '/executions/search?size=25'],
      ['search, page 200 of 25 (deep)', '/executions/search?size=25&page=200'],
      ['search, page of 100', '/executions/search?size=100&page=3'],
      ['search by namespace (children too) + flow', '/executions/search?namespace=company.team1&flowId=flow1&size=25'],
      ['search by label', '/executions/search?labels=batch:b42&size=25'],
      ['search by two labels + state', '/executions/search?labels=batch:b42&labels=env:dev&state=WARNING&size=25'],
      ['search by start dates', `/executions/search?startDate=${new Date(Date.UTC(2026, 0, 1, 1)).toISOString()}&endDate=${new Date(Date.UTC(2026, 0, 1, 2)).toISOString()}&size=25`],
      ['GET one archived execution', '/executions/bench-004242'],
      ['GET one live execution', `/executions/bench-${String(ARCHIVED + 7).padStart(6, '0')}`],
    ];
    console.log(`\n== Execution history (${ARCHIVED} archived in PostgreSQL + ${LIVE} live resources; API over HTTP, median of 20) ==`);
    console.log(`archiving ${ARCHIVED} records (5 task runs each, 8 at a time): ${(archiveMs / 1000).toFixed(1)} s (${(ARCHIVED / (archiveMs / 1000)).toFixed(0)}/s)`);
    for (const [name, path] of cases) {
      const r = await time(path);
      console.log(`${name}: ${r.ms.toFixed(1)} ms${r.total !== undefined ? ` (total ${r.total})` : ''}`);
    }
    await api.close();
    await stores.close();
  } finally {
    await pool.end();
    await local.close();
    await srv.close();
    tmp.remove();
    await pgSvc.stop();
  }
}
