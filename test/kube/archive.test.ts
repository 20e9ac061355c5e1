// Execution history off etcd, end to end on the test API server with real PostgreSQL: finished executions are archived
// and their resources deleted after the TTL; the API still reads them (GET, search with label/state filters, paging
// across live + archived), restarts and replays them; a leader stopped between archive and delete only delays it, and
// the archive holds one row per execution; a child read by a running parent stays until the parent ends; archived
// executions leave the executions caches of the operator and of the API (labelled) while their resources wait for the
// TTL, GET/search still answer them, a restart makes the same resource live again, and the TTL delete still happens.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionName, GROUP, LABELS, VERSION } from '../../operator/kube/names.js';
import { CLUSTER_NS, startCluster, type TestCluster } from './cluster.js';
import { closeCluster } from './cluster-test.js';
import { until } from '../support/wait.js';

let c: TestCluster;
const tmp = mkdtempSync(join(tmpdir(), 'archive-test-'));

// The first operator keeps archived resources an hour: the crash test needs it; it is replaced by one with TTL 0.
beforeAll(async () => { c = await startCluster({ archive: { ttlSeconds: 3600, sweepIntervalMs: 150 }, leaseDurationSec: 3 }); }, 120_000);
afterAll(async () => {
  try { await closeCluster(c); } finally { rmSync(tmp, { recursive: true, force: true }); }
});

async function call(path: string, init?: RequestInit): Promise<any> {
  const res = await fetch(`${c.base}${path}`, init);
  const text = await res.text();
  if (res.status >= 300) throw Object.assign(new Error(`${path}: ${res.status} ${text}`), { status: res.status });
  return text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text || undefined;
}
const saveFlow = (yaml: string) => call('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });
const start = (flowId: string, query = '') => call(`/executions/company.arch/${flowId}${query}`, { method: 'POST' });
let last: any;
const ended = (id: string, state?: string) => until(async () => {
  const e = last = await call(`/executions/${id}`);
  return ['SUCCESS', 'FAILED', 'KILLED', 'WARNING'].includes(e.state.current) && (!state || e.state.current === state) ? e : undefined;
}, `execution ${id} to end${state ? ` ${state}` : ''}`, 90_000);

const custom = () => c.kc.makeApiClient(CustomObjectsApi);
const resource = async (id: string) => custom().getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: CLUSTER_NS, plural: 'executions', name: executionName(id) })
  .then((o) => o as { metadata: { uid: string; labels?: Record<string, string> } }, (err: { code?: number }) => { if (err.code === 404) return undefined; throw err; });
const rows = async (id: string) => (await c.pg.query('SELECT archived_at, resource_version FROM flowpilot_executions WHERE id = $1', [id])).rows;
const gone = (id: string) => until(async () => (await resource(id)) === undefined, `the resource of ${id} to be deleted`, 60_000);

describe('execution archive (cluster)', () => {
  it('a leader stopped between archive and delete only delays the delete; one archive row', async () => {
    await until(() => c.leader(), 'a leader');
    await saveFlow(`id: ok
namespace: company.arch
tasks:
  - id: hello
    type: ai.service.plugin.core.debug.Return
    format: "hello {{ labels.team ?? 'none' }}"
`);
    const e = await start('ok', '?labels=team:data');
    await ended(e.id, 'SUCCESS');
    const [row] = await until(async () => { const r = await rows(e.id); return r.length ? r : undefined; }, 'the archive row');
    expect(await resource(e.id), 'kept for the TTL').toBeDefined();
    // The leader "crashes" after archiving and before its TTL passed; the next leader has TTL 0.
    const first = c.leader()!;
    await first.stop();
    c.operators.splice(c.operators.indexOf(first), 1);
    await c.addOperator('second', { ttlSeconds: 0, sweepIntervalMs: 150 });
    await until(() => c.leader(), 'the second operator to lead');
    await gone(e.id);
    const after = await rows(e.id);
    expect(after).toHaveLength(1);
    expect(after[0].archived_at, 'the second leader did not archive it again').toEqual(row.archived_at);
    const read = await call(`/executions/${e.id}`);
    expect(read.state.current).toBe('SUCCESS');
    expect(read.taskRunList[0].outputs.value).toBe('hello data');
    expect(read.labels).toContainEqual({ key: 'team', value: 'data' });
  }, 180_000);

  it('GET and search (labels, state, paging across live + archived) read archived executions through the API', async () => {
    await saveFlow(`id: wait
namespace: company.arch
tasks:
  - id: approve
    type: ai.service.plugin.core.flow.Pause
`);
    const archived = [];
    for (let i = 0; i < 3; i++) {
      const e = await start('ok', `?labels=batch:b1&labels=n:${i}`);
      await ended(e.id, 'SUCCESS');
      archived.push(e.id);
    }
    for (const id of archived) await gone(id);
    const live = await start('wait', '?labels=batch:b1');
    await until(async () => (await call(`/executions/${live.id}`)).state.current === 'PAUSED', 'the paused execution');
    expect(await resource(live.id)).toBeDefined();

    const all = await call('/executions/search?labels=batch:b1&size=100');
    expect(all.total).toBe(4);
    expect(all.results.map((e: any) => e.id).sort()).toEqual([...archived, live.id].sort());
    expect(all.results[0].id, 'newest first: the live one').toBe(live.id);
    const paged = [];
    for (let page = 1; page <= 4; page++) {
      const p = await call(`/executions/search?labels=batch:b1&size=1&page=${page}`);
      expect(p.total).toBe(4);
      paged.push(...p.results.map((e: any) => e.id));
    }
    expect(paged).toEqual(all.results.map((e: any) => e.id));
    expect((await call('/executions/search?labels=batch:b1&state=SUCCESS&size=10')).results.map((e: any) => e.id).sort()).toEqual([...archived].sort());
    expect((await call('/executions/search?labels=batch:b1&state=PAUSED')).results.map((e: any) => e.id)).toEqual([live.id]);
    expect((await call('/executions/search?labels=n:1&namespace=company.arch&flowId=ok')).results.map((e: any) => e.id)).toEqual([archived[1]]);
    expect((await call(`/executions/${archived[2]}`)).id).toBe(archived[2]);

    // Deleting through the API removes the archive row too.
    await call(`/executions/${archived[0]}`, { method: 'DELETE' });
    expect(await rows(archived[0])).toHaveLength(0);
    await expect(call(`/executions/${archived[0]}`)).rejects.toMatchObject({ status: 404 });
    await call(`/executions/${live.id}/kill`, { method: 'DELETE' });
    await ended(live.id);
  }, 180_000);

  it('restart of an archived FAILED execution re-creates its resource and ends SUCCESS; replay of an archived one too', async () => {
    const marker = join(tmp, 'fixed');
    await saveFlow(`id: flaky
namespace: company.arch
tasks:
  - id: first
    type: ai.service.plugin.core.debug.Return
    format: first
  - id: check
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["test -f ${marker}"]
`);
    const e = await start('flaky');
    const failed = await ended(e.id, 'FAILED');
    await gone(e.id);
    const [before] = await rows(e.id);
    expect(before).toBeDefined();
    writeFileSync(marker, '');
    const restarted = await call(`/executions/${e.id}/restart`, { method: 'POST' });
    expect(restarted.id).toBe(e.id);
    const done = await ended(e.id, 'SUCCESS').catch((err) => { throw new Error(`${err.message}: ${JSON.stringify(last.state)} ${JSON.stringify(last.taskRunList.map((r: any) => [r.taskId, r.state.current, r.attempts?.length]))}`); });
    expect(done.taskRunList.find((r: any) => r.taskId === 'first').id, 'the first task is not run again').toBe(failed.taskRunList.find((r: any) => r.taskId === 'first').id);
    // Ended again: archived anew (the newer version replaces the row) and deleted again.
    await gone(e.id);
    const after = await rows(e.id);
    expect(after).toHaveLength(1);
    expect(Number(after[0].resource_version)).toBeGreaterThan(Number(before.resource_version));
    expect((await call(`/executions/${e.id}`)).state.current).toBe('SUCCESS');

    const replay = await call(`/executions/${e.id}/replay`, { method: 'POST' });
    expect(replay.id).not.toBe(e.id);
    expect(replay.originalId).toBe(e.id);
    expect((await ended(replay.id, 'SUCCESS')).id).toBe(replay.id);
  }, 180_000);

  it('a child execution read by its running parent stays a resource until the parent ends', async () => {
    await saveFlow(`id: child
namespace: company.arch
tasks:
  - id: hi
    type: ai.service.plugin.core.debug.Return
    format: child
`);
    await saveFlow(`id: parent
namespace: company.arch
tasks:
  - id: call
    type: ai.service.plugin.core.flow.Subflow
    namespace: company.arch
    flowId: child
    wait: true
  - id: approve
    type: ai.service.plugin.core.flow.Pause
`);
    const parent = await start('parent');
    const paused = await until(async () => { const p = await call(`/executions/${parent.id}`); return p.state.current === 'PAUSED' ? p : undefined; }, 'the parent to pause');
    const childId = paused.taskRunList.find((r: any) => r.taskId === 'call').subflowExecutionId;
    await until(async () => (await rows(childId)).length > 0, 'the child to be archived');
    await c.leader()!.stop().then(() => undefined, () => undefined).finally(() => c.operators.splice(0, c.operators.length));
    // A leader restarted with the child archived decides again: still kept while the parent runs.
    await c.addOperator('third', { ttlSeconds: 0, sweepIntervalMs: 150 });
    await until(() => c.leader(), 'the third operator to lead');
    await until(async () => (await rows(childId)).length > 0, 'the child archive row');
    expect(await resource(childId), 'kept while the parent runs').toBeDefined();
    await call(`/executions/${parent.id}/resume`, { method: 'POST' });
    await ended(parent.id, 'SUCCESS');
    await gone(childId);
    await gone(parent.id);
    expect((await call(`/executions/${childId}`)).state.current).toBe('SUCCESS');
  }, 180_000);
  it('archived executions leave the operator and API caches; GET, search and restart still work; the TTL delete still happens', async () => {
    // A leader that keeps archived resources an hour.
    for (const op of c.operators.splice(0)) await op.stop().catch(() => undefined);
    const op = await c.addOperator('fourth', { ttlSeconds: 3600, sweepIntervalMs: 150 });
    await until(() => c.leader(), 'the fourth operator to lead');
    const marker = join(tmp, 'fixed-cache');
    await saveFlow(`id: flaky2
namespace: company.arch
tasks:
  - id: first
    type: ai.service.plugin.core.debug.Return
    format: first
  - id: check
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["test -f ${marker}"]
`);
    const done = [];
    for (let i = 0; i < 3; i++) done.push((await start('ok', '?labels=batch:cache')).id);
    const e = await start('flaky2', '?labels=batch:cache');
    for (const id of done) await ended(id, 'SUCCESS');
    await ended(e.id, 'FAILED');
    const ids = [...done, e.id];
    const labelled = async (id: string) => (await resource(id))?.metadata.labels?.[LABELS.archived] === 'true';
    for (const id of ids) await until(() => labelled(id), `${id} to be labelled archived`);
    const caches = { operator: op.stores.executions.cache, api: c.apiStores.executions.cache };
    for (const [who, cache] of Object.entries(caches)) {
      await until(() => ids.every((id) => !cache.get(executionName(id))), `the ${who} cache to drop the archived executions`);
    }
    // Each cache holds exactly the resources not labelled archived (still on the server, but not in memory).
    const all = (await custom().listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: CLUSTER_NS, plural: 'executions' }) as { items: { metadata: { name: string; labels?: Record<string, string> } }[] }).items;
    const unlabelled = all.filter((o) => !o.metadata.labels?.[LABELS.archived]).map((o) => o.metadata.name).sort();
    expect(all.length - unlabelled.length).toBeGreaterThanOrEqual(4);
    for (const cache of Object.values(caches)) {
      await until(() => cache.list().length === unlabelled.length, 'the cache to hold only the unlabelled resources');
      expect(cache.list().map((o) => o.metadata.name).sort()).toEqual(unlabelled);
    }
    // The API answers them from the archive.
    expect((await call(`/executions/${e.id}`)).state.current).toBe('FAILED');
    const found = await call('/executions/search?labels=batch:cache&size=10');
    expect(found.total).toBe(4);
    expect(found.results.map((x: any) => x.id).sort()).toEqual([...ids].sort());
    expect(ids.some((id) => caches.api.get(executionName(id))), 'reads do not put them back in the cache').toBe(false);

    // Restart of the archived, not yet deleted execution: the same resource goes live again and the execution proceeds.
    const { uid } = (await resource(e.id))!.metadata;
    const [before] = await rows(e.id);
    writeFileSync(marker, '');
    expect((await call(`/executions/${e.id}/restart`, { method: 'POST' })).id).toBe(e.id);
    await ended(e.id, 'SUCCESS');
    expect((await resource(e.id))!.metadata.uid, 'made live in place, not re-created').toBe(uid);
    await until(async () => Number((await rows(e.id))[0]?.resource_version) > Number(before.resource_version), 'the new version archived');
    await until(() => labelled(e.id), 'labelled again');
    await until(() => !caches.operator.get(executionName(e.id)) && !caches.api.get(executionName(e.id)), 'out of the caches again');

    // The TTL delete still finds labelled resources (by the label scan, not the cache).
    for (const o of c.operators.splice(0)) await o.stop().catch(() => undefined);
    await c.addOperator('fifth', { ttlSeconds: 0, sweepIntervalMs: 150 });
    await until(() => c.leader(), 'the fifth operator to lead');
    for (const id of ids) await gone(id);
    expect((await call(`/executions/${e.id}`)).state.current).toBe('SUCCESS');
  }, 180_000);
});
