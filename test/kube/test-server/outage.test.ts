// Outages of the test server, like a kube-apiserver restarting behind its load balancer: 503 ServiceUnavailable with
// Retry-After (for all requests or some resources only), open watches ended, client-node errors that isTransient
// retries, and everything served again once it ends.
import { afterEach, describe, expect, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { isTransient } from '../../../operator/faults.js';
import { startKubeTestServer, type KubeTestServer } from './index.js';
import { widgetCrd } from './fixtures.js';
import { until } from '../../support/wait.js';

const G = 'test.flowpilot.io';
const PATH = `/apis/${G}/v1/namespaces/default/widgets`;
let srv: KubeTestServer | undefined;
afterEach(async () => { await srv?.close(); srv = undefined; });

const listWidgets = (co: CustomObjectsApi) => co.listNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets' });

describe('outage', () => {
  it('answers 503 ServiceUnavailable with Retry-After to every request until it ends', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()] });
    srv.startOutage();
    const res = await fetch(`${srv.url}${PATH}`, { headers: { Authorization: 'Bearer test-token' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503, details: { retryAfterSeconds: 1 } });
    const core = srv.kubeConfig().makeApiClient(CoreV1Api);
    const err = await core.listNamespacedPod({ namespace: 'default' }).catch((e: unknown) => e);
    expect((err as { code?: number }).code).toBe(503);
    expect(isTransient(err)).toBe(true);
    expect(srv.outageRefused).toBe(2);
    srv.endOutage();
    expect((await core.listNamespacedPod({ namespace: 'default' })).items).toEqual([]);
    expect(srv.outageRefused).toBe(2);
  });

  it('limited to some resources: the others are served; watches end when it starts and cannot restart during it', async () => {
    srv = await startKubeTestServer({ crds: [widgetCrd()] });
    const kc = srv.kubeConfig();
    const co = kc.makeApiClient(CustomObjectsApi);
    let ended = false;
    await new Watch(kc).watch(PATH, {}, () => {}, () => { ended = true; });
    srv.startOutage({ resources: ['widgets'] });
    await until(() => ended, 'the open watch to end');
    expect(((await listWidgets(co).catch((e: unknown) => e)) as { code?: number }).code).toBe(503);
    let watchErr: unknown;
    await new Watch(kc).watch(PATH, {}, () => {}, (e) => { watchErr = e; }).catch((e: unknown) => { watchErr = e; });
    await until(() => watchErr !== undefined, 'the watch to be refused');
    expect((await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'default' })).items).toEqual([]);
    expect((await fetch(`${srv.url}/version`)).status).toBe(200);
    srv.endOutage();
    expect((await listWidgets(co) as { items: unknown[] }).items).toEqual([]);
  });
});
