// Webhook trigger conditions and inputs on the real API: conditions that do not hold answer 204 and create nothing;
// `inputs` are rendered against trigger.body/headers/parameters (secrets through the renderer given to the API) and
// validated; a trigger disabled through the trigger state store answers 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer } from '../../operator/controller/secrets.js';
import type { Stores } from '../../operator/store/types.js';
import { createConditionEvaluator } from '../../operator/triggers/conditions/evaluator.js';
import { call, createFlow, LOG_TYPE, startTestApi, type TestApi } from './helpers.js';

const NS = 'hooks.cond';
const C = 'io.kestra.plugin.core.condition.';
let api: TestApi;

const flow = (id: string, trigger: string) => `id: ${id}
namespace: ${NS}
labels: { env: prod }
inputs:
  - { id: name, type: STRING, defaults: nobody }
  - { id: count, type: INT, defaults: 0 }
  - { id: token, type: STRING, defaults: none }
tasks:
  - { id: t, type: ${LOG_TYPE}, message: "{{ inputs.name }}" }
triggers:
  - id: hook
    type: io.kestra.plugin.core.trigger.Webhook
    key: the-key
${trigger}
`;

const hook = (id: string, query = '') => `${api.url}/api/v1/executions/webhook/${NS}/${id}/the-key${query}`;
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  call(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
const count = async (id: string): Promise<number> =>
  (await call(`${api.url}/api/v1/executions/search?namespace=${NS}&flowId=${id}`)).body.total;

beforeAll(async () => {
  // The API gets the trigger service's renderer (with secrets) and evaluator, as main.ts wires them; both reach the
  // stores only when used, so they are bound to the test API's stores once it is up.
  const stores = {} as Stores;
  const renderer = createSecretRenderer(stores, { SECRET_HOOK_TOKEN: Buffer.from('t0k3n').toString('base64') });
  const conditions = createConditionEvaluator({ stores, renderer, clock: () => new Date(), env: {}, onError: () => {} });
  api = await startTestApi({ renderer, conditions });
  Object.assign(stores, api.stores);
  await createFlow(api, flow('gated', `    conditions:
      - { type: ${C}ExpressionCondition, expression: "{{ trigger.body.go == true and trigger.parameters.mode[0] == 'live' }}" }
      - { type: ${C}ExecutionLabelsCondition, labels: { env: prod } }
    inputs:
      name: "{{ trigger.body.name }}"
      count: "{{ trigger.body.items | length }}"
      token: "{{ secret('HOOK_TOKEN') }}"`));
  await createFlow(api, flow('typed', `    inputs:
      count: "{{ trigger.body.count }}"`));
  await createFlow(api, flow('broken', `    inputs:
      name: "{{ trigger.body.missing.deeper }}"`));
  await createFlow(api, flow('paused', ''));
});
afterAll(async () => { await api?.close(); });

describe('webhook conditions', () => {
  it('conditions met: the execution starts with inputs rendered from body, parameters and secrets', async () => {
    const res = await post(hook('gated', '?mode=live'), { go: true, name: 'ada', items: [1, 2, 3] });
    expect(res.status).toBe(200);
    expect(res.body.inputs).toEqual({ name: 'ada', count: 3, token: 't0k3n' });
    expect(res.body.trigger.variables.body).toEqual({ go: true, name: 'ada', items: [1, 2, 3] });
  });

  it('conditions not met: 204 and nothing created', async () => {
    const before = await count('gated');
    for (const [body, query] of [[{ go: false, items: [] }, '?mode=live'], [{ go: true, items: [] }, '?mode=test'], [{}, '']] as const) {
      const res = await post(hook('gated', query), body);
      expect(res.status).toBe(204);
      expect(res.body).toBe('');
    }
    expect(await count('gated')).toBe(before);
  });

  it('rendered inputs are validated like any execution inputs', async () => {
    const ok = await post(hook('typed'), { count: '7' });
    expect(ok.status).toBe(200);
    expect(ok.body.inputs.count).toBe(7);
    const before = await count('typed');
    const bad = await post(hook('typed'), { count: 'many' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toBe('inputs.count');
    expect(await count('typed')).toBe(before);
  });

  it('inputs that cannot be rendered answer 400 and create nothing', async () => {
    const res = await post(hook('broken'), { other: 1 });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/webhook inputs/);
    expect(await count('broken')).toBe(0);
  });

  it('a trigger disabled through the trigger state store answers 404', async () => {
    expect((await post(hook('paused'), {})).status).toBe(200);
    await api.stores.triggers.put({ namespace: NS, flowId: 'paused', triggerId: 'hook', disabled: true, state: {} }, 0);
    const before = await count('paused');
    expect((await post(hook('paused'), {})).status).toBe(404);
    expect(await count('paused')).toBe(before);
  });
});

describe('webhook conditions without a service-provided evaluator', () => {
  it('uses a default evaluator (no secrets)', async () => {
    const plain = await startTestApi();
    try {
      await createFlow(plain, flow('gated', `    conditions:
      - { type: ${C}ExpressionCondition, expression: "{{ trigger.body.go }}" }
    inputs:
      name: "{{ trigger.body.name }}"`));
      const url = `${plain.url}/api/v1/executions/webhook/${NS}/gated/the-key`;
      expect((await post(url, { go: false })).status).toBe(204);
      const res = await post(url, { go: true, name: 'bob' });
      expect(res.status).toBe(200);
      expect(res.body.inputs.name).toBe('bob');
    } finally {
      await plain.close();
    }
  });
});
