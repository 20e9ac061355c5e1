// The namespace routes in cluster mode: the real Koa app over the cluster stores (FlowNamespace and Flow resources on the
// Kubernetes API test server): create, read, search with the parents of flow namespaces, the namespace lists, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { startServer } from '../../api/server.js';
import { flowNamespaceName } from '../../operator/kube/names.js';
import { crd, startStoreHarness, type StoreHarness } from '../../operator/kube/store/test-support.js';
import { call, jsonInit, simpleFlow, yamlInit } from '../api/helpers.js';

let h: StoreHarness;
let server: Awaited<ReturnType<typeof startServer>>;
let base = '';
beforeAll(async () => {
  h = await startStoreHarness();
  server = await startServer(createApp({ stores: h.stores }), 0, '127.0.0.1');
  base = `http://127.0.0.1:${server.port}/api/v1`;
  expect((await call(`${base}/flows`, yamlInit('POST', simpleFlow('kube.team.etl', 'load')))).status).toBe(200);
});
afterAll(async () => { await server?.close(); await h?.close(); });

describe('namespace routes over the cluster stores', () => {
  it('stores a namespace as a FlowNamespace resource and answers it', async () => {
    const body = { variables: { region: 'eu' }, pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'WARN' } }] };
    expect((await call(`${base}/namespaces/kube.team`, jsonInit('PUT', body))).status).toBe(200);
    expect((await call(`${base}/namespaces`, jsonInit('POST', { id: 'kube.team' }))).status).toBe(409);
    expect((await call(`${base}/namespaces/kube.team`)).body).toMatchObject({ id: 'kube.team', ...body });
    const raw = (await h.co.getNamespacedCustomObject({ ...crd('flownamespaces'), name: flowNamespaceName('kube.team') })) as any;
    expect(raw.spec).toMatchObject({ id: 'kube.team', variables: { region: 'eu' } });
    expect((await call(`${base}/namespaces/kube.team.etl/inherited-variables`)).body).toEqual({ region: 'eu' });
  });

  it('searches stored namespaces and the parents of flow namespaces; lists the namespaces of flows', async () => {
    const ids = (await call(`${base}/namespaces/search?q=kube&size=50`)).body.results.map((n: { id: string }) => n.id);
    expect(ids).toEqual(['kube', 'kube.team', 'kube.team.etl']);
    expect((await call(`${base}/flows/distinct-namespaces`)).body).toEqual(['kube.team.etl']);
    expect((await call(`${base}/executions/namespaces`)).body).toEqual(['kube.team.etl']);
    expect((await call(`${base}/executions/namespaces/kube.team.etl/flows`)).body.map((f: { id: string }) => f.id)).toEqual(['load']);
  });

  it('deletes the stored namespace (the flows stay)', async () => {
    expect((await call(`${base}/namespaces/kube.team`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`${base}/namespaces/kube.team`, { method: 'DELETE' })).status).toBe(404);
    expect((await call(`${base}/namespaces/kube.team`)).body.variables).toEqual({});
    expect((await call(`${base}/namespaces/search?existing=true`)).body.total).toBe(0);
  });
});
