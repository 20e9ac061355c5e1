// The Kestra execution, log, metric and KV routes in the cluster home (test API server, operator, PostgreSQL logs,
// S3 storage, the chart's RBAC): labels and change-status applied by the operator, bulk kill of a running execution,
// log follow until the end, metrics, deletion with its logs and storage folder, KV deletes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionStoragePath } from '../../operator/storage/paths.js';
import { until } from '../support/wait.js';
import { startCluster, type TestCluster } from './cluster.js';
import { closeCluster } from './cluster-test.js';

let c: TestCluster;
beforeAll(async () => { c = await startCluster(); }, 120_000);
afterAll(async () => {
  await closeCluster(c);
});

async function call(path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(`${c.base}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}
const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const NS = 'company.exroutes';

async function ended(id: string): Promise<any> {
  return until(async () => {
    const e = (await call(`/executions/${id}`)).body;
    return ['SUCCESS', 'FAILED', 'KILLED', 'WARNING'].includes(e.state?.current) ? e : undefined;
  }, `execution ${id} to end`, 120_000);
}

describe('execution routes (cluster)', () => {
  it('labels, change-status, log follow, metrics, delete; bulk kill; KV deletes', async () => {
    const saved = await call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: `id: hello
namespace: ${NS}
tasks:
  - id: sh
    type: ai.service.plugin.scripts.shell.Commands
    commands:
      - echo "from the task"
      - echo '::{"metrics":[{"name":"rows","type":"counter","value":7}]}::'
` });
    expect(saved.status).toBe(200);
    await call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: `id: slow
namespace: ${NS}
tasks:
  - id: wait
    type: ai.service.plugin.core.flow.Pause
` });
    const created = (await call(`/executions/${NS}/hello`, { method: 'POST' })).body;
    const follow = fetch(`${c.base}/logs/${created.id}/follow`).then((r) => r.text());
    const done = await ended(created.id);
    expect(done.state.current, JSON.stringify(done.taskRunList)).toBe('SUCCESS');

    // The log follow ends by itself once the execution has ended, with the task's line among its events.
    const events = (await follow).split('\n\n').filter((e) => e.startsWith('id: '));
    expect(events[0]).toBe('id: start\ndata: {}');
    expect(events.slice(1).some((e) => e.startsWith('id: progress') && e.includes('from the task'))).toBe(true);

    const labels = await call(`/executions/${created.id}/labels`, json('POST', [{ key: 'team', value: 'data' }]));
    expect(labels.status).toBe(200);
    expect(labels.body.labels).toContainEqual({ key: 'team', value: 'data' });
    const changed = await call(`/executions/${created.id}/change-status?status=FAILED`, { method: 'POST' });
    expect(changed.status).toBe(200);
    expect(changed.body.state.current).toBe('FAILED');

    const metrics = (await call(`/metrics/${created.id}`)).body;
    expect(metrics.results).toEqual([expect.objectContaining({ name: 'rows', type: 'counter', value: 7, taskId: 'sh' })]);

    // Bulk kill of a paused execution: the operator ends it KILLED.
    const paused = (await call(`/executions/${NS}/slow`, { method: 'POST' })).body;
    await until(async () => (await call(`/executions/${paused.id}`)).body.state.current === 'PAUSED', 'the pause', 60_000);
    expect((await call('/executions/kill/by-ids', json('DELETE', [paused.id]))).body).toEqual({ count: 1 });
    expect((await ended(paused.id)).state.current).toBe('KILLED');

    // Delete: the record, its logs (PostgreSQL) and its storage folder (S3).
    const marker = await c.storage.put(`${executionStoragePath(done)}/outputs/marker.txt`, Buffer.from('m'));
    expect((await c.logs.countForExecution(created.id))).toBeGreaterThan(0);
    expect((await call(`/executions/${created.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`/executions/${created.id}`)).status).toBe(404);
    expect(await c.logs.countForExecution(created.id)).toBe(0);
    expect(await c.storage.exists(marker)).toBe(false);

    const kv = `/namespaces/${NS}/kv`;
    await call(`${kv}/a`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '1' });
    await call(`${kv}/b`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: '2' });
    expect((await call(`${kv}/a`, { method: 'DELETE' })).body).toBe(true);
    expect((await call(`${kv}/a`, { method: 'DELETE' })).body).toBe(false);
    expect((await call(kv, json('DELETE', { keys: ['a', 'b'] }))).body).toEqual({ keys: ['b'] });
  }, 300_000);
});
