// API tests of the webhook endpoint: matching key creates an execution whose trigger holds body, headers and query;
// wrong key, disabled trigger or disabled flow give 404 and create nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createFlow, LOG_TYPE, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const NS = 'hooks.team';
const KEY = 'k3y-4wjtkzwVGBM9yKnjm3yv8r';

const hookFlow = (id: string, extra = '', triggerExtra = ''): string => `id: ${id}
namespace: ${NS}
${extra}
tasks:
  - id: t
    type: ${LOG_TYPE}
    message: "{{ trigger.body }}"
triggers:
  - id: other
    type: ai.service.plugin.core.trigger.Webhook
    key: another-key
    disabled: true
  - id: hook
    type: ai.service.plugin.core.trigger.Webhook
    key: ${KEY}
${triggerExtra}
`;

beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, hookFlow('wh'));
  await createFlow(api, hookFlow('offflow', 'disabled: true'));
});
afterAll(async () => { await api.close(); });

const hook = (flowId: string, key: string, query = ''): string => `${api.url}/api/v1/executions/webhook/${NS}/${flowId}/${key}${query}`;
const count = async (): Promise<number> => (await call(`${api.url}/api/v1/executions/search?namespace=${NS}`)).body.total;

describe('webhook', () => {
  it('creates an execution with the JSON body, headers and query as trigger variables', async () => {
    const res = await call(hook('wh', KEY, '?a=1&a=2&b=x'), {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Custom': 'yes' }, body: JSON.stringify({ hello: 'world' }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ namespace: NS, flowId: 'wh', state: { current: 'CREATED' } });
    expect(res.body.trigger).toMatchObject({ id: 'hook', type: 'ai.service.plugin.core.trigger.Webhook' });
    const v = res.body.trigger.variables;
    expect(v.body).toEqual({ hello: 'world' });
    expect(v.headers['x-custom']).toEqual(['yes']);
    expect(v.parameters).toEqual({ a: ['1', '2'], b: ['x'] });
    expect((await call(`${api.url}/api/v1/executions/${res.body.id}`)).status).toBe(200);
  });

  it('accepts GET and PUT, keeping a non-JSON body as text', async () => {
    const get = await call(hook('wh', KEY));
    expect(get.status).toBe(200);
    expect(get.body.trigger.variables.body).toBeNull();
    const put = await call(hook('wh', KEY), { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'plain {text' });
    expect(put.status).toBe(200);
    expect(put.body.trigger.variables.body).toBe('plain {text');
  });

  it('answers 404 and creates nothing for a wrong key, a disabled trigger or a disabled flow', async () => {
    const before = await count();
    for (const url of [hook('wh', 'wrong'), hook('wh', `${KEY}x`), hook('wh', 'another-key'), hook('offflow', KEY), hook('nope', KEY)]) {
      const res = await call(url, { method: 'POST', body: '{}' });
      expect(res.status).toBe(404);
      expect(res.body.message).toBeTypeOf('string');
    }
    expect(await count()).toBe(before);
  });
});
