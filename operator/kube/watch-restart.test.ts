// Watch expiries are routine: against the Kubernetes API test server ending every watch after ~1 s by dropping the
// connection (client-node reports "Premature close", as against real clusters), the store caches and the Secrets
// informers log nothing across several expiries and miss no event; real failures are reported once per streak.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import { startKubeTestServer, type KubeTestServer } from '../../test/kube/test-server/index.js';
import { openEmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { openKubeStores, type KubeStores } from './store/index.js';
import { until } from './store/test-support.js';
import { startKubeSecrets } from './secrets.js';
import { MIN_ROUTINE_GAP_MS, WatchRestarts, isWatchEnd } from './watch-restart.js';

const NS = 'flowpilot-test';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => { for (const c of cleanup.splice(0).reverse()) await c(); vi.restoreAllMocks(); });

async function stores(srv: KubeTestServer, onWatchError: (e: unknown) => void): Promise<KubeStores> {
  const tmp = tempDir('watch-restart-');
  const local = openEmbeddedStores(tmp.dir);
  const s = await openKubeStores({ kc: srv.kubeConfig(), namespace: NS, logs: local.logs, storage: local.storage, resyncMs: 0, onWatchError });
  cleanup.push(() => tmp.remove(), () => local.close(), () => s.close());
  await s.ready();
  return s;
}

it('tells a watch end (node-fetch "Premature close", also as a cause) from failures', () => {
  const premature = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  expect(isWatchEnd(premature)).toBe(true);
  expect(isWatchEnd(new Error('Invalid response body while trying to fetch http://x: Premature close'))).toBe(true);
  expect(isWatchEnd(new Error('watch', { cause: premature }))).toBe(true);
  expect(isWatchEnd(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(false);
  expect(isWatchEnd({ code: 403, body: 'forbidden' })).toBe(false);
  expect(isWatchEnd(undefined)).toBe(false);
});

it('restarts routine ends at once, backs off and reports failures once per streak, and treats ends in quick succession as failures', () => {
  let now = 0;
  const r = new WatchRestarts(250, () => now);
  const end = Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  expect(r.next(end)).toEqual({ routine: true });
  now += MIN_ROUTINE_GAP_MS;
  expect(r.next(end)).toEqual({ routine: true });
  const first = r.next(refused);
  const second = r.next(refused);
  expect(first).toMatchObject({ routine: false, report: true });
  expect(second).toMatchObject({ routine: false, report: false });
  now += 1; // an end right after another: a server dropping every watch at once is not routine
  expect(r.next(end)).toMatchObject({ routine: false, report: false });
  r.ok();
  expect(r.next(refused)).toMatchObject({ routine: false, report: true });
  now += MIN_ROUTINE_GAP_MS;
  expect(r.next(end)).toEqual({ routine: true });
  expect(r.failing).toBe(0);
});

it('logs nothing across several watch expiries ("Premature close") and misses no event', async () => {
  const srv = await startKubeTestServer({ watchTimeoutSeconds: 1.1, watchAbruptEnd: true, namespaces: ['default', NS] });
  cleanup.push(() => srv.close());
  const warn = vi.spyOn(console, 'warn');
  const error = vi.spyOn(console, 'error');
  const watchErrors: unknown[] = [];
  const secretErrors: unknown[] = [];
  const s = await stores(srv, (e) => watchErrors.push(e));
  const peer = await stores(srv, () => {});
  const secrets = await startKubeSecrets({ kc: srv.kubeConfig(), namespace: NS, secretName: 'flow-secrets', onError: (e) => secretErrors.push(e) });
  cleanup.push(() => secrets.stop());
  const core = srv.kubeConfig().makeApiClient(CoreV1Api);
  const watchesBefore = srv.stats.reads['WATCH kvpairs'] ?? 0;
  // Write through several expiries of every watch; each write must reach the other process's cache.
  for (let i = 0; i < 8; i++) {
    await peer.kv.set({ namespace: 'company', key: `k${i}`, value: i });
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: i === 0 ? 'flow-secrets' : `other-${i}`, namespace: NS }, stringData: { [`S${i}`]: `value-${i}` } } });
    await until(() => s.kv.getSync('company', `k${i}`), `pair k${i}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await until(() => (srv.stats.reads['WATCH kvpairs'] ?? 0) >= watchesBefore + 3, 'three watch expiries');
  await core.patchNamespacedSecret({ name: 'flow-secrets', namespace: NS, body: { stringData: { S0: 'changed' } } },
    { headers: { 'Content-Type': 'application/merge-patch+json' } } as never).catch(async () => {
    await core.replaceNamespacedSecret({ name: 'flow-secrets', namespace: NS, body: { metadata: { name: 'flow-secrets', namespace: NS }, stringData: { S0: 'changed' } } });
  });
  await until(() => secrets.lookup('S0') === 'changed', 'the changed Secret after the expiries');
  expect((await s.kv.list('company')).map((e) => e.key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']);
  expect(watchErrors).toEqual([]);
  expect(secretErrors).toEqual([]);
  expect(warn).not.toHaveBeenCalled();
  expect(error).not.toHaveBeenCalled();
}, 40_000);

it('still reports a real failure, once per streak', async () => {
  const srv = await startKubeTestServer({ namespaces: ['default', NS] });
  const errors: unknown[] = [];
  const s = await stores(srv, (e) => errors.push(e));
  await srv.close(); // the API server goes away: every restart fails (connection refused) until it is back
  await until(() => errors.length >= 1, 'a reported failure');
  await new Promise((r) => setTimeout(r, 1500)); // several backed-off restarts fail meanwhile
  const kinds = new Set(errors.map(String));
  expect(errors.length).toBeLessThanOrEqual(6); // one per informer (flows, revisions, executions, kv, namespaces, triggers)
  expect(kinds.size).toBeGreaterThan(0);
  expect(s.kv.getSync('x', 'y')).toBeUndefined();
});
