// A flow may rely on the plugin defaults of its namespace (and the namespace's parents) for required task properties,
// as in Kestra: POST /flows, /flows/validate and the admission webhook validate with them; elsewhere the flow is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewFlow } from '../../api/admission.js';
import { call, jsonInit, startTestApi, yamlInit, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  const body = { pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { message: 'from the namespace' } }] };
  expect((await call(`${api.url}/api/v1/namespaces/defaults`, jsonInit('PUT', body))).status).toBe(200);
});
afterAll(async () => { await api.close(); });

const flow = (namespace: string) => `id: relies
namespace: ${namespace}
tasks:
  - id: log
    type: io.kestra.plugin.core.log.Log
`;

describe('validation with inherited plugin defaults', () => {
  it('POST /flows accepts a Log without message under a namespace that defaults it, refuses it elsewhere', async () => {
    const ok = await call(`${api.url}/api/v1/flows`, yamlInit('POST', flow('defaults.team')));
    expect(ok.status).toBe(200);
    expect(ok.body.tasks[0].message).toBeUndefined(); // stored as written: the default applies when it runs
    const refused = await call(`${api.url}/api/v1/flows`, yamlInit('POST', flow('elsewhere')));
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: { path: string }) => e.path)).toContain('tasks[0].message');
  });

  it('POST /flows/validate validates each document with its namespace\'s defaults', async () => {
    const res = await call(`${api.url}/api/v1/flows/validate`, yamlInit('POST', `${flow('defaults')}---\n${flow('elsewhere')}`));
    expect(res.body[0].constraints).toBeUndefined();
    expect(res.body[1].constraints).toContain('message');
  });

  it('the admission webhook validates with the defaults it is given', () => {
    const request = {
      uid: 'u', operation: 'CREATE', kind: { group: 'flowpilot.io', version: 'v1', kind: 'Flow' },
      object: { metadata: { name: 'relies' }, spec: { id: 'relies', namespace: 'defaults.team', tasks: [{ id: 'log', type: 'io.kestra.plugin.core.log.Log' }] } },
    };
    expect(reviewFlow(request).allowed).toBe(false);
    const inherited = [[{ type: 'io.kestra.plugin.core.log.Log', values: { message: 'x' } }]];
    expect(reviewFlow(request, { inheritedDefaults: (ns) => (ns === 'defaults.team' ? inherited : []) }).allowed).toBe(true);
  });
});
