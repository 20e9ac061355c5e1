// Watches and client-node informers against the test server: events, selectors, resume from a resourceVersion,
// 410 Expired for a resourceVersion out of the history window, and an informer relisting after it.
import { afterEach, describe, expect, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi, Watch, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from './index.js';
import { widgetCrd } from './fixtures.js';
import { until } from '../../support/wait.js';

const G = 'test.flowpilot.io';
const PATH = `/apis/${G}/v1/namespaces/default/widgets`;
let srv: KubeTestServer | undefined;
afterEach(async () => { await srv?.close(); srv = undefined; });


const widget = (name: string, labels?: Record<string, string>) => ({ apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name, labels }, spec: { size: 1 } });

describe('watch', () => {
  it('streams ADDED / MODIFIED / DELETED with a label selector and resumes from a resourceVersion', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()] });
    const kc = srv.kubeConfig();
    const co = kc.makeApiClient(CustomObjectsApi);
    const events: string[] = [];
    const w = new Watch(kc);
    const req = await w.watch(PATH, { labelSelector: 'app=x', allowWatchBookmarks: true }, (type, obj) => { if (type !== 'BOOKMARK') events.push(`${type} ${obj.metadata.name}`); }, () => {});
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('a', { app: 'x' }) });
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('b', { app: 'y' }) });
    const mid: any = await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'a', body: [{ op: 'replace', path: '/spec/size', value: 2 }] });
    // b starts matching the selector: the watcher sees it ADDED; a stops matching: DELETED.
    await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'b', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'x' }] });
    await co.patchNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'a', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'z' }] });
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'b' });
    await until(() => events.length >= 5, 'events');
    expect(events).toEqual(['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a', 'DELETED b']);
    req.abort();

    const resumed: string[] = [];
    let done = false;
    await w.watch(PATH, { resourceVersion: mid.metadata.resourceVersion, timeoutSeconds: 1 }, (type, obj) => resumed.push(`${type} ${obj.metadata.name}`), () => { done = true; });
    await until(() => done, 'the watch timeout');
    expect(resumed).toEqual(['MODIFIED b', 'MODIFIED a', 'DELETED b']);
  });

  it('answers ERROR 410 Expired for a resourceVersion older than the history window', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()], historyLimit: 3 });
    const kc = srv.kubeConfig();
    const co = kc.makeApiClient(CustomObjectsApi);
    const first: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('a') });
    for (let i = 0; i < 5; i++) await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget(`n${i}`) });
    const got: { type: string; obj: any }[] = [];
    let ended = false;
    await new Watch(kc).watch(PATH, { resourceVersion: first.metadata.resourceVersion }, (type, obj) => got.push({ type, obj }), () => { ended = true; });
    await until(() => ended, 'the watch to end');
    expect(got).toHaveLength(1);
    expect(got[0].type).toBe('ERROR');
    expect(got[0].obj).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(got[0].obj.message).toMatch(/too old resource version/);
  });

  it('keeps the history per resource type: writes to other types do not expire a quiet type\'s watch', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()], historyLimit: 3 });
    const kc = srv.kubeConfig();
    const co = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const w: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('quiet') });
    for (let i = 0; i < 8; i++) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `noise${i}` } } });
    await co.deleteNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'quiet' });
    const got: string[] = [];
    let ended = false;
    await new Watch(kc).watch(PATH, { resourceVersion: w.metadata.resourceVersion, timeoutSeconds: 1 }, (type, obj) => got.push(`${type} ${obj.metadata?.name}`), () => { ended = true; });
    await until(() => ended, 'the watch to end');
    expect(got).toEqual(['DELETED quiet']);
  });

  it('keeps a client-node informer in sync, including a relist after 410', async () => {
    srv = await startKubeTestServer({ historyLimit: 3 });
    const kc = srv.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
    const seen = new Set<string>();
    const deleted: string[] = [];
    let connects = 0;
    informer.on('add', (o: KubernetesObject) => { seen.add(o.metadata!.name!); });
    informer.on('delete', (o: KubernetesObject) => { deleted.push(o.metadata!.name!); });
    informer.on('connect', () => { connects++; });
    await informer.start();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } });
    await until(() => seen.has('one'), 'one in the informer');
    const listedBefore = connects;

    // The watch falls behind: new watches are held while more than historyLimit events happen, including a delete.
    srv.suspendWatches();
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'one' });
    for (let i = 0; i < 5; i++) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `cm${i}` } } });
    srv.resumeWatches();
    await until(() => seen.has('cm4') && deleted.includes('one'), 'the informer to relist');
    expect(informer.list().map((o) => o.metadata!.name).sort()).toEqual(['cm0', 'cm1', 'cm2', 'cm3', 'cm4']);
    expect(connects).toBeGreaterThan(listedBefore);
    // and it keeps watching after the relist
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'after' } } });
    await until(() => seen.has('after'), 'an object created after the relist');
    await informer.stop();
  });

  it('speaks the raw protocol: ?watch=1, chunked newline-delimited JSON, bookmarks, initial events, timeoutSeconds', async () => {
    srv = await startKubeTestServer({ bookmarkIntervalMs: 50 });
    const core = srv.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'raw' } } });
    const res = await fetch(`${srv.url}/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'raw' } } });
    expect(lines[1]).toMatchObject({ type: 'BOOKMARK', object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } } });
    expect(lines.slice(2).length).toBeGreaterThan(0);
    expect(lines.slice(2).every((l) => l.type === 'BOOKMARK' && l.object.metadata.resourceVersion === srv!.resourceVersion)).toBe(true);
    const bad = await fetch(`${srv.url}/api/v1/namespaces/default/configmaps?watch=true&labelSelector=${encodeURIComponent('a in (')}`);
    expect(bad.status).toBe(400);
  });
  it('delivers events late with watchDelayMs (a loaded server): a GET sees a created object before the watch does', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()], watchDelayMs: 1500 });
    const kc = srv.kubeConfig();
    const co = kc.makeApiClient(CustomObjectsApi);
    const events: string[] = [];
    const req = await new Watch(kc).watch(PATH, {}, (type, obj) => events.push(`${type} ${obj.metadata.name}`), () => {});
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('late') });
    await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: widget('later') });
    const got: any = await co.getNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'late' });
    expect(got.metadata.name).toBe('late');
    expect(events).toEqual([]); // not yet: the watch lags behind the writes
    await until(() => events.length >= 2, 'the late events');
    expect(events).toEqual(['ADDED late', 'ADDED later']); // in order
    req.abort();
  });

  it('ends an expired watch by dropping the connection with watchAbruptEnd: client-node reports "Premature close"', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()], watchTimeoutSeconds: 0.3, watchAbruptEnd: true });
    let ended: unknown = 'running';
    await new Watch(srv.kubeConfig()).watch(PATH, {}, () => {}, (err) => { ended = err; });
    await until(() => ended !== 'running', 'the watch to end');
    expect(String((ended as Error)?.message)).toMatch(/Premature close/);
    // Without the option the same expiry ends the stream cleanly (done without an error).
    await srv.close();
    srv = await startKubeTestServer({ crds: [widgetCrd()], watchTimeoutSeconds: 0.3 });
    let clean: unknown = 'running';
    await new Watch(srv.kubeConfig()).watch(PATH, {}, () => {}, (err) => { clean = err; });
    await until(() => clean !== 'running', 'the watch to end');
    expect(clean).toBeNull();
  });
});
