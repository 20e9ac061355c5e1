// Kestra's JSON shapes of Execution, TaskRun, Flow, LogEntry, Trigger and the configuration (field names and types
// from io.kestra.core.models and the client SDK's OpenAPI spec), on executions that really ran (embedded service),
// with plugin types answered as the flow's author wrote them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../../support/embedded.js';
import { expectShape, paged, type Shape } from './shape.js';

const STATE: Shape = { current: 'string', histories: [{ state: 'string', date: 'string' }], startDate: 'string', endDate: 'string?', duration: 'string?' };
const LABEL: Shape = { key: 'string', value: 'string' };
const TASK_RUN: Shape = {
  id: 'string', executionId: 'string', namespace: 'string', flowId: 'string', taskId: 'string', parentTaskRunId: 'string?',
  value: 'string?', attempts: [{ state: STATE }], outputs: 'object?', state: STATE, iteration: 'integer?',
};
const EXECUTION: Shape = {
  id: 'string', namespace: 'string', flowId: 'string', flowRevision: 'integer', taskRunList: [TASK_RUN], inputs: 'object?',
  outputs: 'object?', labels: [LABEL], state: STATE, originalId: 'string', deleted: 'boolean',
  metadata: { attemptNumber: 'integer', originalCreatedDate: 'string' },
};
const TASK: Shape = { id: 'string', type: 'string' };
const FLOW: Shape = {
  id: 'string', namespace: 'string', revision: 'integer', description: 'string?', labels: [LABEL], tasks: [TASK],
  triggers: [TASK], disabled: 'boolean', deleted: 'boolean',
};
const LOG_ENTRY: Shape = {
  namespace: 'string', flowId: 'string', taskId: 'string?', executionId: 'string', taskRunId: 'string?',
  attemptNumber: 'integer?', timestamp: 'string', level: 'string', message: 'string',
};
const TRIGGER: Shape = {
  abstractTrigger: TASK,
  triggerContext: { namespace: 'string', flowId: 'string', triggerId: 'string', type: 'string', disabled: 'boolean', date: 'string?', nextExecutionDate: 'string?' },
};
const CONFIG: Shape = {
  uuid: 'string', version: 'string', isTaskRunEnabled: 'boolean', isAnonymousUsageEnabled: 'boolean', isTemplateEnabled: 'boolean',
  isBasicAuthEnabled: 'boolean', isCustomDashboardsEnabled: 'boolean', systemNamespace: 'string', hiddenLabelsPrefixes: ['string'],
  resourceToFilters: [{ name: 'string', fields: [{ name: 'string', value: 'string', operations: [{ name: 'string', value: 'string' }] }] }],
};

const NS = 'compat.shapes';
const SOURCE = `id: hello
namespace: ${NS}
description: Shapes
labels:
  - key: team
    value: data
tasks:
  - id: greet
    type: io.kestra.plugin.core.log.Log
    message: "Hello {{ trigger.body.name ?? 'world' }}"
triggers:
  - id: hook
    type: io.kestra.plugin.core.trigger.Webhook
    key: shapes-webhook-key
  - id: nightly
    type: io.kestra.plugin.core.trigger.Schedule
    cron: "0 3 * * *"
`;

let svc: Embedded;
let executionId: string;

beforeAll(async () => {
  svc = await startEmbedded();
  await svc.createFlow(SOURCE);
  const started = await svc.json(`/executions/webhook/${NS}/hello/shapes-webhook-key`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Ada' }),
  });
  expect(started.status).toBe(200);
  executionId = started.body.id;
  await svc.waitFor(executionId, (e) => e.state.current === 'SUCCESS');
});
afterAll(async () => { await svc?.close(); });

describe('Kestra JSON shapes', () => {
  it('Execution and TaskRun: deleted, metadata, the trigger type as written', async () => {
    const { body } = await svc.json(`/executions/${executionId}`);
    expectShape(body, { ...(EXECUTION as object), trigger: { id: 'string', type: 'string', variables: 'object?' } });
    expect(body.deleted).toBe(false);
    expect(body.metadata).toEqual({ attemptNumber: 1, originalCreatedDate: body.state.histories[0].date });
    expect(body.trigger.type).toBe('io.kestra.plugin.core.trigger.Webhook');
    expect(body.taskRunList).toHaveLength(1);
    const search = await svc.json(`/executions/search?filters[namespace][EQUALS]=${NS}`);
    expectShape(search.body, paged(EXECUTION));
    expect(search.body.results[0].trigger.type).toBe('io.kestra.plugin.core.trigger.Webhook');
    const ofFlow = await svc.json(`/executions/flows/${NS}/hello`);
    expectShape(ofFlow.body, paged(EXECUTION));
    expect(ofFlow.body.results.map((e: { id: string }) => e.id)).toEqual([executionId]);
  });

  it('Flow: labels as a list, disabled and deleted, task and trigger types as written', async () => {
    const { body } = await svc.json(`/flows/${NS}/hello`);
    expectShape(body, FLOW);
    expect(body.labels).toEqual([{ key: 'team', value: 'data' }]);
    expect(body).toMatchObject({ disabled: false, deleted: false });
    expect(body.tasks[0].type).toBe('io.kestra.plugin.core.log.Log');
    expect(body.triggers.map((t: { type: string }) => t.type)).toEqual(['io.kestra.plugin.core.trigger.Webhook', 'io.kestra.plugin.core.trigger.Schedule']);
    const search = await svc.json(`/flows/search?filters[namespace][EQUALS]=${NS}`);
    expectShape(search.body, paged(FLOW));
    expect(search.body.results[0].tasks[0].type).toBe('io.kestra.plugin.core.log.Log');
  });

  it('LogEntry', async () => {
    const logs = await svc.json(`/logs/${executionId}`);
    expect(logs.body.length).toBeGreaterThan(0);
    expectShape(logs.body, [LOG_ENTRY]);
    const search = await svc.json(`/logs/search?filters[executionId][EQUALS]=${executionId}`);
    expectShape(search.body, paged(LOG_ENTRY));
    expect(search.body.results.some((l: { message: string }) => l.message.includes('Hello Ada'))).toBe(true);
  });

  it('Trigger: the abstract trigger and its context, types as written', async () => {
    const { body } = await svc.json(`/triggers/search?filters[namespace][EQUALS]=${NS}`);
    expectShape(body, paged(TRIGGER));
    expect(body.results.map((t: { abstractTrigger: { type: string } }) => t.abstractTrigger.type))
      .toEqual(['io.kestra.plugin.core.trigger.Webhook', 'io.kestra.plugin.core.trigger.Schedule']);
    expect(body.results.map((t: { triggerContext: { type: string } }) => t.triggerContext.type))
      .toEqual(['io.kestra.plugin.core.trigger.Webhook', 'io.kestra.plugin.core.trigger.Schedule']);
    const ofFlow = await svc.json(`/triggers/${NS}/hello`);
    expect(ofFlow.body.results[1].type).toBe('io.kestra.plugin.core.trigger.Schedule');
  });

  it('GET /configs: the configuration, with the search filters each resource takes', async () => {
    const { status, body } = await svc.json('/configs');
    expect(status).toBe(200);
    expectShape(body, CONFIG);
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.systemNamespace).toBe('system');
    const executions = body.resourceToFilters.find((r: { name: string }) => r.name === 'EXECUTION');
    const state = executions.fields.find((f: { value: string }) => f.value === 'state');
    expect(state.operations.map((o: { value: string }) => o.value)).toEqual(['EQUALS', 'NOT_EQUALS', 'IN', 'NOT_IN']);
  });

  it('GET /executions/{id}/flow: the flow at the revision the execution ran, deleted flows too', async () => {
    await svc.createFlow(SOURCE.replace('description: Shapes', 'description: Shapes v2'));
    const { status, body } = await svc.json(`/executions/${executionId}/flow`);
    expect(status).toBe(200);
    expectShape(body, FLOW);
    expect(body).toMatchObject({ revision: 1, description: 'Shapes' });
    expect(body.tasks[0].type).toBe('io.kestra.plugin.core.log.Log');
    expect((await svc.json('/executions/missing-id/flow')).status).toBe(404);

    expect((await svc.json(`/flows/${NS}/hello`, { method: 'DELETE' })).status).toBe(204);
    const deleted = await svc.json(`/flows/${NS}/hello?revision=2`);
    expect(deleted.body).toMatchObject({ revision: 2, deleted: true });
    expect((await svc.json(`/executions/${executionId}/flow`)).body.revision).toBe(1);
  });
});
