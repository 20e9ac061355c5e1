// Apply-then-run: the API on cluster stores whose watches lag 1.5 s behind the server (a loaded API server, test server
// option watchDelayMs) answers a run of a Flow created a moment ago with kubectl, reconciled or not, and reads of an
// execution or KV pair another process just wrote, instead of 404; floods of reads for names that do not exist stay
// a bounded number of API calls. MissReads' coalescing rules as a table with an injected clock.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.js';
import { startServer } from '../../../api/server.js';
import { call, jsonInit } from '../../../test/api/helpers.js';
import { startKubeTestServer, type KubeTestServer } from '../../../test/kube/test-server/index.js';
import { openEmbeddedStores } from '../../store/sqlite/index.js';
import { sampleExecution, tempDir } from '../../store/sqlite/test-fixtures.js';
import { GROUP, VERSION } from '../names.js';
import { type KubeStores, openKubeStores } from './index.js';
import { MissReads, readMissTtlMs } from './read-through.js';
import { K8S_NAMESPACE as NS, until } from './test-support.js';

const LAG_MS = 1500;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => { for (const c of cleanup.splice(0).reverse()) await c(); });

async function stores(srv: KubeTestServer, readMissTtlMs?: number): Promise<KubeStores> {
  const tmp = tempDir('read-through-');
  const local = openEmbeddedStores(tmp.dir);
  const s = await openKubeStores({ kc: srv.kubeConfig(), namespace: NS, logs: local.logs, storage: local.storage, resyncMs: 0, readMissTtlMs });
  cleanup.push(() => tmp.remove(), () => local.close(), () => s.close());
  await s.ready();
  return s;
}

/** The cluster API (Koa app) over its own cluster stores, on a test server whose watches lag. */
async function laggingApi(readMissTtl?: number): Promise<{ srv: KubeTestServer; api: KubeStores; url: string; co: CustomObjectsApi }> {
  const srv = await startKubeTestServer({ watchDelayMs: LAG_MS, namespaces: ['default', NS] });
  cleanup.push(() => srv.close());
  const api = await stores(srv, readMissTtl);
  const server = await startServer(createApp({ stores: api }), 0, '127.0.0.1');
  cleanup.push(() => server.close());
  return { srv, api, url: `http://127.0.0.1:${server.port}/api/v1`, co: srv.kubeConfig().makeApiClient(CustomObjectsApi) };
}

const crd = (plural: string) => ({ group: GROUP, version: VERSION, namespace: NS, plural });
const flowManifest = (name: string, id: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/${VERSION}`, kind: 'Flow', metadata: { name },
  spec: { id, namespace: 'company.team', tasks: [{ id: 'hello', type: 'ai.service.plugin.core.log.Log', message: 'hi' }], ...extra },
});

describe('apply, then run at once (watch events 1.5 s late)', () => {
  it('runs a Flow the operator has not reconciled yet: the API validates it and saves its revision, as the operator would', async () => {
    const { api, url, co } = await laggingApi();
    await co.createNamespacedCustomObject({ ...crd('flows'), body: flowManifest('gitops-hello', 'hello') });
    const run = await call(`${url}/executions/company.team/hello`, jsonInit('POST', {}));
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ namespace: 'company.team', flowId: 'hello', flowRevision: 1 });
    const flow: any = await co.getNamespacedCustomObject({ ...crd('flows'), name: 'gitops-hello' });
    expect(flow.status).toMatchObject({ revision: 1, observedGeneration: 1 });
    expect(flow.status.conditions.find((c: any) => c.type === 'Ready')?.status).toBe('True');
    const revisions: any = await co.listNamespacedCustomObject(crd('flowrevisions'));
    expect(revisions.items.map((r: any) => r.spec.revision)).toEqual([1]);
    // The same flow read through the API, and a second run, use that revision (no second one is made).
    expect((await call(`${url}/flows/company.team/hello`)).body).toMatchObject({ id: 'hello', revision: 1 });
    expect((await call(`${url}/executions/company.team/hello`, jsonInit('POST', {}))).body.flowRevision).toBe(1);
    expect(((await co.listNamespacedCustomObject(crd('flowrevisions'))) as any).items).toHaveLength(1);
    expect(api.flows.misses.reads).toBeGreaterThan(0);
  });

  it('runs a Flow the operator reconciled a moment ago (its revision not yet watched here)', async () => {
    const { srv, url, co } = await laggingApi();
    const operator = await stores(srv);
    const stop = operator.flows.reconcileOnChange();
    cleanup.push(stop);
    await co.createNamespacedCustomObject({ ...crd('flows'), body: flowManifest('reconciled', 'reconciled') });
    await until(async () => ((await co.getNamespacedCustomObject({ ...crd('flows'), name: 'reconciled' })) as any).status?.revision === 1, 'the operator to reconcile');
    const run = await call(`${url}/executions/company.team/reconciled`, jsonInit('POST', {}));
    expect(run.status).toBe(200);
    expect(run.body.flowRevision).toBe(1);
    expect(((await co.listNamespacedCustomObject(crd('flowrevisions'))) as any).items).toHaveLength(1);
  });

  it('still answers 404 for a flow that does not exist, and for an invalid Flow resource (not runnable)', async () => {
    const { url, co } = await laggingApi();
    expect((await call(`${url}/executions/company.team/nowhere`, jsonInit('POST', {}))).status).toBe(404);
    await co.createNamespacedCustomObject({ ...crd('flows'), body: flowManifest('broken', 'broken', { tasks: [{ id: 'x', type: 'no.such.Task' }] }) });
    expect((await call(`${url}/executions/company.team/broken`, jsonInit('POST', {}))).status).toBe(404);
    const flow: any = await co.getNamespacedCustomObject({ ...crd('flows'), name: 'broken' });
    expect(flow.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'False' });
  });

  it('reads an execution (API-made or made with kubectl) and a KV pair another process just wrote', async () => {
    const { srv, url, co } = await laggingApi();
    const peer = await stores(srv);
    await peer.executions.create(sampleExecution('written-elsewhere'));
    expect((await call(`${url}/executions/written-elsewhere`)).status).toBe(200);
    await co.createNamespacedCustomObject({ ...crd('executions'), body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Execution', metadata: { name: 'hand-made' }, spec: { namespace: 'company.team', flowId: 'hello' } } });
    const hand = await call(`${url}/executions/hand-made`);
    expect(hand.status).toBe(200);
    expect(hand.body).toMatchObject({ id: 'hand-made', flowId: 'hello' });
    await peer.kv.set({ namespace: 'company.team', key: 'fresh', value: 'yes' });
    const kv = await call(`${url}/namespaces/company.team/kv/fresh`);
    expect(kv.status).toBe(200);
    expect(JSON.stringify(kv.body)).toContain('yes');
  });
});

describe('hostile misses stay cheap', () => {
  it('a flood of runs of flows that do not exist costs a few lists, and of unknown executions a bounded number of GETs', async () => {
    const { srv, url } = await laggingApi(60_000);
    srv.resetStats();
    const distinct = await Promise.all(Array.from({ length: 200 }, (_, i) => call(`${url}/executions/company.team/nope-${i}`, jsonInit('POST', {}))));
    expect(distinct.every((r) => r.status === 404)).toBe(true);
    const lists = srv.stats.reads['LIST flows'] ?? 0;
    expect(lists).toBeGreaterThanOrEqual(1);
    // One list running, callers meanwhile share the next one, lists at most every 200 ms: a handful, not 200
    // (3 on an idle machine; the bound leaves room for requests trickling in on a loaded one).
    expect(lists).toBeLessThanOrEqual(10);
    // The same names again: answered from memory (KUBE_READ_MISS_TTL_MS), no request at all.
    await Promise.all(Array.from({ length: 200 }, (_, i) => call(`${url}/executions/company.team/nope-${i}`, jsonInit('POST', {}))));
    expect(srv.stats.reads['LIST flows'] ?? 0).toBe(lists);
    // One unknown execution id asked 300 times at once: a read or two (two GETs each: the generated name, then the id
    // as a name), then the remembered miss answers; not 300 reads (4 GETs on an idle machine).
    const same = await Promise.all(Array.from({ length: 300 }, () => call(`${url}/executions/no-such-execution`)));
    expect(same.every((r) => r.status === 404)).toBe(true);
    expect(srv.stats.reads['GET executions'] ?? 0).toBeLessThanOrEqual(8);
  });

  it('KUBE_READ_MISS_TTL_MS is read with a clear error naming it', () => {
    expect(readMissTtlMs({})).toBe(1000);
    expect(readMissTtlMs({ KUBE_READ_MISS_TTL_MS: '250' })).toBe(250);
    expect(() => readMissTtlMs({ KUBE_READ_MISS_TTL_MS: '-1' })).toThrow(/KUBE_READ_MISS_TTL_MS/);
    expect(() => readMissTtlMs({ KUBE_READ_MISS_TTL_MS: 'soon' })).toThrow(/KUBE_READ_MISS_TTL_MS/);
  });
});

describe('MissReads', () => {
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => { open = r; });
    return { p, open };
  };

  it('callers arriving during a read share the next one, which starts after it; a miss is remembered for the TTL', async () => {
    let now = 1000;
    const m = new MissReads(500, () => now);
    const started: number[] = [];
    const gates = [gate(), gate()];
    const read = () => { const n = started.length; started.push(n); return gates[n]!.p.then(() => (n === 0 ? undefined : `found-${n}`)); };
    const first = m.read('k', read);
    const late = [m.read('k', read), m.read('k', read), m.read('k', read)];
    await Promise.resolve();
    expect(started).toEqual([0]); // the waiting read has not started: it must see writes made before these callers asked
    gates[0]!.open();
    expect(await first).toBeUndefined();
    await until(() => started.length === 2, 'the shared second read');
    gates[1]!.open();
    expect(await Promise.all(late)).toEqual(['found-1', 'found-1', 'found-1']);
    expect(m.reads).toBe(2);
    // 'gone' is confirmed missing: answered from memory within the TTL, read again after it, and forgotten on sight.
    expect(await m.read('gone', async () => undefined)).toBeUndefined();
    expect(m.knownMissing('gone')).toBe(true);
    now += 499;
    expect(await m.read('gone', async () => 'never')).toBeUndefined();
    now += 1;
    expect(m.knownMissing('gone')).toBe(false);
    m.remember('gone', now);
    m.forget('gone');
    expect(await m.read('gone', async () => 'here')).toBe('here');
  });

  it('keeps long (caller-chosen) keys as their hash', async () => {
    const m = new MissReads(60_000);
    const long = 'x'.repeat(10_000);
    expect(await m.read(long, async () => undefined)).toBeUndefined();
    expect(m.knownMissing(long)).toBe(true);
    expect(m.knownMissing(`${long}y`)).toBe(false);
    expect(JSON.stringify([...(m as unknown as { misses: Map<string, number> }).misses.keys()]).length).toBeLessThan(200);
    m.forget(long);
    expect(m.knownMissing(long)).toBe(false);
  });

  it('remembers nothing with a TTL of 0', async () => {
    const m = new MissReads(0);
    expect(await m.read('k', async () => undefined)).toBeUndefined();
    expect(m.knownMissing('k')).toBe(false);
  });
});
