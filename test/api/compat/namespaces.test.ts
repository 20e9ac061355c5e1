// Kestra JSON shapes of the namespace routes: Namespace (get, create, update), PagedResults<NamespaceWithDisabled>
// (search), inherited variables (a map) and plugin defaults (List<PluginDefault>), the distinct-namespace lists
// (List<String>) and List<FlowForExecution> (the SDK's OpenAPI spec and io.kestra.core.models).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, type TestApi } from '../helpers.js';
import { expectShape, paged, type Shape } from './shape.js';

const PLUGIN_DEFAULT: Shape = { type: 'string', values: 'object', forced: 'boolean?' };
const NAMESPACE: Shape = {
  id: 'string', deleted: 'boolean', description: 'string?', variables: 'object', pluginDefaults: [PLUGIN_DEFAULT],
  allowedNamespaces: [{ namespace: 'string' }],
};
const NAMESPACE_WITH_DISABLED: Shape = { ...(NAMESPACE as Record<string, Shape>), disabled: 'boolean' };
const TASK_FOR_EXECUTION: Shape = { id: 'string', type: 'string' };
const FLOW_FOR_EXECUTION: Shape = {
  id: 'string', namespace: 'string', revision: 'integer', inputs: 'array', tasks: [TASK_FOR_EXECUTION],
  errors: [TASK_FOR_EXECUTION], triggers: 'array', disabled: 'boolean', deleted: 'boolean',
};

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, simpleFlow('compat.ns.child', 'f'));
  const body = { id: 'compat.ns', description: 'd', variables: { a: 1 }, pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'WARN' }, forced: false }] };
  await call(`${api.url}/api/v1/namespaces`, jsonInit('POST', body));
});
afterAll(async () => { await api.close(); });

const get = async (path: string): Promise<unknown> => (await call(`${api.url}/api/v1${path}`)).body;

describe('namespace routes answer Kestra shapes', () => {
  it('GET /namespaces/{id} (stored and flow-only), POST and PUT answer a Namespace', async () => {
    expectShape(await get('/namespaces/compat.ns'), NAMESPACE);
    expectShape(await get('/namespaces/compat.ns.child'), NAMESPACE);
    expectShape((await call(`${api.url}/api/v1/namespaces/compat.ns`, jsonInit('PUT', { variables: { b: 2 } }))).body, NAMESPACE);
    expectShape((await call(`${api.url}/api/v1/namespaces`, jsonInit('POST', { id: 'compat.other' }))).body, NAMESPACE);
  });

  it('GET /namespaces/search answers PagedResults<NamespaceWithDisabled>', async () => {
    expectShape(await get('/namespaces/search?q=compat'), paged(NAMESPACE_WITH_DISABLED));
  });

  it('inherited variables are a map, inherited plugin defaults a List<PluginDefault>', async () => {
    expectShape(await get('/namespaces/compat.ns.child/inherited-variables'), 'object');
    expectShape(await get('/namespaces/compat.ns.child/inherited-plugindefaults'), [PLUGIN_DEFAULT]);
  });

  it('the distinct-namespace lists are List<String>, the executable flows List<FlowForExecution>', async () => {
    expectShape(await get('/flows/distinct-namespaces'), ['string']);
    expectShape(await get('/executions/namespaces'), ['string']);
    expectShape(await get('/namespaces/ids'), ['string']);
    expectShape((await call(`${api.url}/api/v1/namespaces/autocomplete`, jsonInit('POST', { q: 'compat' }))).body, ['string']);
    expectShape(await get('/executions/namespaces/compat.ns.child/flows'), [FLOW_FOR_EXECUTION]);
  });
});
