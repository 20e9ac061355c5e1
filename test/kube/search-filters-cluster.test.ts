// Kestra's search filters and JSON shapes in cluster mode, end to end (test API server, operator, PostgreSQL logs and
// execution history, the chart's RBAC): filters on live and archived executions, flows, logs and triggers, types as
// written, GET /configs, /executions/flows/{ns}/{id} and /executions/{id}/flow; daily statistics over both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startCluster, type TestCluster } from './cluster.js';
import { closeCluster } from './cluster-test.js';

let c: TestCluster;
const NS = 'company.filters';

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${c.base}${path}`);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
async function post(path: string, body: string, type = 'application/x-yaml'): Promise<any> {
  const res = await fetch(`${c.base}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}
const ids = async (path: string): Promise<string[]> => {
  const { status, body } = await get(path);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.total).toBe(body.results.length);
  return body.results.map((e: { id: string }) => e.id);
};

let done: string;
let failed: string;

// TTL 0: finished executions go to the history table and their resources are deleted, so the searches read both.
beforeAll(async () => { c = await startCluster({ archive: { ttlSeconds: 0, sweepIntervalMs: 150 } }); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

describe('search filters and shapes (cluster)', () => {
  beforeAll(async () => {
    await until(() => c.leader(), 'a leader', 60_000);
    await post('/flows', `id: ok
namespace: ${NS}
labels:
  - key: team
    value: data
tasks:
  - id: hello
    type: io.kestra.plugin.core.debug.Return
    format: "filtered hello"
triggers:
  - id: nightly
    type: io.kestra.plugin.core.trigger.Schedule
    cron: "0 3 * * *"
    disabled: true
`);
    await post('/flows', `id: bad\nnamespace: ${NS}.sub\ntasks:\n  - id: boom\n    type: io.kestra.plugin.core.execution.Fail\n`);
    done = (await post(`/executions/${NS}/ok?labels=env:prod`, '{}', 'application/json')).id;
    failed = (await post(`/executions/${NS}.sub/bad`, '{}', 'application/json')).id;
    for (const id of [done, failed]) {
      await until(async () => ['SUCCESS', 'FAILED'].includes((await get(`/executions/${id}`)).body?.state?.current), `execution ${id} to end`, 90_000);
    }
    // archived: the history rows exist (the searches then read them beside live resources)
    await until(async () => (await c.pg.query('SELECT count(*) AS n FROM flowpilot_executions WHERE id = ANY($1)', [[done, failed]])).rows[0].n === '2', 'archive rows', 60_000);
  }, 180_000);

  it('filters executions (live and archived alike)', async () => {
    expect(await ids(`/executions/search?filters[namespace][PREFIX]=${NS}&filters[state][EQUALS]=FAILED`)).toEqual([failed]);
    expect(await ids(`/executions/search?filters[namespace][EQUALS]=${NS}`)).toEqual([done]);
    expect(await ids(`/executions/search?filters[labels][EQUALS][env]=prod&filters[namespace][PREFIX]=${NS}`)).toEqual([done]);
    expect(await ids(`/executions/search?filters[flowId][REGEX]=%5Eb.d%24&filters[namespace][STARTS_WITH]=company.fil`)).toEqual([failed]);
    expect(await ids(`/executions/search?filters[namespace][PREFIX]=${NS}&filters[childFilter][EQUALS]=CHILD`)).toEqual([]);
    expect(await ids(`/executions/flows/${NS}/ok`)).toEqual([done]);
    expect((await get('/executions/search?filters[nope][EQUALS]=x')).status).toBe(400);
  });

  it('counts daily statistics over live and archived executions alike, once each', async () => {
    const res = await fetch(`${c.base}/stats/executions/daily`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ namespace: NS }) });
    expect(res.status).toBe(200);
    const days = await res.json() as { startDate: string; executionCounts: Record<string, number>; duration: { count: number } }[];
    const sum = (state: string) => days.reduce((n, d) => n + d.executionCounts[state]!, 0);
    expect([sum('SUCCESS'), sum('FAILED'), sum('RUNNING')]).toEqual([1, 1, 0]);
    expect(days.reduce((n, d) => n + d.duration.count, 0)).toBe(2);
    expect(days.reduce((n, d) => n + Object.values(d.executionCounts).reduce((a, b) => a + b, 0), 0)).toBe(2);
  });

  it('filters flows, logs and triggers', async () => {
    expect(await ids(`/flows/search?filters[namespace][PREFIX]=${NS}&filters[labels][EQUALS][team]=data`)).toEqual(['ok']);
    expect(await ids(`/flows/search?filters[namespace][PREFIX]=${NS}&filters[flowId][NOT_EQUALS]=ok`)).toEqual(['bad']);
    const logs = await until(async () => {
      const r = await get(`/logs/search?filters[executionId][EQUALS]=${failed}&filters[level][EQUALS]=ERROR`);
      return r.body?.total > 0 ? r : undefined;
    }, 'the failed execution\'s error lines', 30_000);
    expect(logs.body.results.every((l: { executionId: string; level: string }) => l.executionId === failed && l.level === 'ERROR')).toBe(true);
    const triggers = await get(`/triggers/search?filters[namespace][PREFIX]=${NS}&filters[triggerState][EQUALS]=disabled`);
    expect(triggers.body.results.map((t: any) => [t.triggerContext.triggerId, t.abstractTrigger.type]))
      .toEqual([['nightly', 'io.kestra.plugin.core.trigger.Schedule']]);
  });

  it('answers Kestra shapes: types as written, labels as a list, deleted and metadata, the flow of an execution, configs', async () => {
    const flow = (await get(`/flows/${NS}/ok`)).body;
    expect(flow).toMatchObject({ labels: [{ key: 'team', value: 'data' }], disabled: false, deleted: false });
    expect(flow.tasks[0].type).toBe('io.kestra.plugin.core.debug.Return');
    const execution = (await get(`/executions/${done}`)).body;
    expect(execution).toMatchObject({ deleted: false, metadata: { attemptNumber: 1 } });
    const ofExecution = await get(`/executions/${done}/flow`);
    expect(ofExecution.status).toBe(200);
    expect(ofExecution.body).toMatchObject({ id: 'ok', namespace: NS, revision: 1 });
    const configs = await get('/configs');
    expect(configs.status).toBe(200);
    expect(configs.body.resourceToFilters.map((r: { name: string }) => r.name)).toEqual(['FLOW', 'EXECUTION', 'LOG', 'TRIGGER']);
  });
});
