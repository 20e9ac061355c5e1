// API compatibility: the plugin routes (Kestra's Plugin list, DocumentationWithSchema, the flow JSON schema editors
// load) over HTTP with Kestra's shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../helpers.js';
import { expectShape } from './shape.js';

const ELEMENT = { cls: 'string', deprecated: 'boolean', title: 'string?' };

let api: TestApi;
beforeAll(async () => { api = await startTestApi(); });
afterAll(async () => { await api?.close(); });
const get = (path: string) => call(`${api.url}/api/v1${path}`);

describe('plugins', () => {
  it('GET /plugins: Kestra\'s Plugin list', async () => {
    const r = await get('/plugins');
    expect(r.status).toBe(200);
    expectShape(r.body, [{
      name: 'string', title: 'string', group: 'string', description: 'string', version: 'string', aliases: ['string'],
      tasks: [ELEMENT], triggers: [ELEMENT], conditions: [ELEMENT], taskRunners: [ELEMENT],
    }]);
    const core = r.body.find((p: any) => p.name === 'core');
    expect(core.tasks.map((t: any) => t.cls)).toContain('ai.service.plugin.core.flow.Subflow');
    expect(core.triggers.map((t: any) => t.cls)).toContain('ai.service.plugin.core.trigger.Schedule');
  });

  it('GET /plugins/{cls}: DocumentationWithSchema, by our name or Kestra\'s; 404 for an unknown type', async () => {
    const r = await get('/plugins/io.kestra.plugin.core.log.Log');
    expect(r.status).toBe(200);
    expectShape(r.body, { markdown: 'string', schema: { properties: { properties: 'object', required: 'array' }, definitions: 'object' } });
    expect(r.body.schema.properties.properties).toHaveProperty('message');
    expect((await get('/plugins/ai.service.plugin.core.trigger.Webhook')).body.schema.properties.properties).toHaveProperty('key');
    expect((await get('/plugins/io.kestra.plugin.nope.Nope')).status).toBe(404);
  });

  it('GET /plugins/schemas/flow: draft 7 with definitions and a $ref to the flow; task, trigger, arrayOf; 404 otherwise', async () => {
    const r = await get('/plugins/schemas/flow');
    expect(r.status).toBe(200);
    expectShape(r.body, { $schema: 'string', $ref: 'string', definitions: 'object' });
    expect(r.body.$ref).toBe('#/definitions/flow');
    expect(r.body.definitions.flow.required).toEqual(['id', 'namespace', 'tasks']);
    expect(r.body.definitions.task.properties.type.enum).toEqual(expect.arrayContaining(['ai.service.plugin.core.log.Log', 'io.kestra.plugin.core.log.Log']));
    expect((await get('/plugins/schemas/task')).body.$ref).toBe('#/definitions/task');
    expect((await get('/plugins/schemas/trigger?arrayOf=true')).body).toMatchObject({ type: 'array', items: { $ref: '#/definitions/trigger' } });
    expect((await get('/plugins/schemas/dashboard')).status).toBe(404);
  });
});
