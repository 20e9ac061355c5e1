// The whole JSON Schema (draft-07) of a flow document: top-level fields, inputs, outputs, triggers,
// conditions, plugin defaults, and the task dispatch (one `if type = X then $ref X` per known task type).
import { ExecutionStates, InputTypes } from '../core/types.js';
import {
  ANY, BOOL, DURATION, FLOW_ID_PATTERN, INPUT_ID_PATTERN, LABELS, LOG_LEVEL, NAMESPACE_PATTERN, OBJECT, SCALAR,
  STRING, TASKS, TASKS_REQUIRED, flowRetrySchema, labelSchema, ref, taskRetrySchema, type Schema,
} from './schema-common.js';
import { requiredInCrd, tag } from './schema-roles.js';
import { memoByCatalog } from '../plugins/catalog.js';
import { taskTypeSchemas, taskDispatchSchema, taskRunnerSchema } from './schema-tasks.js';
import { conditionDispatch } from './schema-conditions.js';
import { PLUGIN_TRIGGER_SCHEMAS } from './schema-triggers.js';
import { CONDITION_TYPES, PREFIX, TRIGGER_TYPES } from './task-types.js';

const needs = (type: string, fields: string[]): Schema =>
  ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: { required: fields } });

const inputSchema: Schema = requiredInCrd({
  type: 'object',
  required: ['id', 'type'],
  properties: {
    id: tag({ type: 'string', pattern: INPUT_ID_PATTERN }, { kind: 'id', dots: true }),
    /** Kestra's former spelling of `id` (normalize.ts moves it); left here only when it differs from `id`. */
    name: STRING,
    type: { type: 'string', enum: [...InputTypes] },
    required: BOOL,
    defaults: ANY,
    description: STRING,
    displayName: STRING,
    values: { type: 'array', minItems: 1, items: SCALAR },
    itemType: { type: 'string', enum: InputTypes.filter((t) => t !== 'ARRAY' && t !== 'FILE' && t !== 'MULTISELECT') },
    min: { type: ['number', 'string'] },
    max: { type: ['number', 'string'] },
    validator: STRING,
  },
  additionalProperties: false,
  allOf: [needs('ENUM', ['values']), needs('SELECT', ['values']), needs('MULTISELECT', ['values']), needs('ARRAY', ['itemType'])],
}, ['type']);

const outputSchema: Schema = {
  type: 'object',
  required: ['id', 'type', 'value'],
  properties: {
    id: tag({ type: 'string', pattern: INPUT_ID_PATTERN }, { kind: 'id', dots: true }),
    /** Kestra's former spelling of `id` (normalize.ts moves it); left here only when it differs from `id`. */
    name: STRING,
    type: { type: 'string', enum: [...InputTypes] },
    value: ANY,
    description: STRING,
    displayName: STRING,
    required: BOOL,
  },
  additionalProperties: false,
};

const conditionSchema: Schema = {
  type: 'object',
  required: ['type'],
  properties: { type: tag({ type: 'string', enum: [...CONDITION_TYPES] }, { kind: 'condition-type' }) },
  allOf: conditionDispatch(),
};

const CONDITIONS: Schema = { type: 'array', items: ref('condition') };

/** Kestra's deprecated flow `listeners`: tasks run after the execution ended, when all `conditions` hold. */
const listenerSchema: Schema = {
  type: 'object',
  required: ['tasks'],
  properties: { description: STRING, conditions: CONDITIONS, tasks: TASKS_REQUIRED },
  additionalProperties: false,
};

/** Properties every trigger accepts. */
export const TRIGGER_COMMON: Record<string, Schema> = {
  id: tag({ type: 'string', pattern: FLOW_ID_PATTERN }, { kind: 'id', dots: true }),
  type: STRING,
  description: STRING,
  disabled: BOOL,
  conditions: CONDITIONS,
  stopAfter: { type: 'array', items: { type: 'string', enum: [...ExecutionStates] } },
  logToFile: BOOL,
  minLogLevel: LOG_LEVEL,
  workerGroup: ANY,
};

const triggerType = (props: Record<string, Schema>): Schema =>
  ({ properties: { ...TRIGGER_COMMON, ...props }, additionalProperties: false });

const KNOWN_TRIGGERS: Record<string, Schema> = {
  [TRIGGER_TYPES.schedule]: triggerType({
    cron: STRING,
    timezone: STRING,
    withSeconds: BOOL,
    inputs: OBJECT,
    labels: LABELS,
    lateMaximumDelay: DURATION,
    recoverMissedSchedules: { type: 'string', enum: ['ALL', 'NONE', 'LAST'] },
    scheduleConditions: CONDITIONS,
    backfill: {
      type: 'object',
      required: ['start'],
      properties: { start: STRING, end: STRING, inputs: OBJECT, labels: LABELS, currentDate: STRING, paused: BOOL },
      additionalProperties: false,
    },
  }),
  [TRIGGER_TYPES.flow]: triggerType({ inputs: OBJECT, states: TRIGGER_COMMON.stopAfter, preconditions: OBJECT }),
  [TRIGGER_TYPES.webhook]: triggerType({ key: { type: 'string', minLength: 1 }, inputs: OBJECT }),
  // Polling and realtime triggers of plugins (operator/triggers/sources).
  ...Object.fromEntries(Object.entries(PLUGIN_TRIGGER_SCHEMAS).map(([t, s]) =>
    [t, { ...triggerType(s.properties as Record<string, Schema>), required: s.required, ...(s.allOf ? { allOf: s.allOf } : {}) }])),
};

const triggerSchema: Schema = {
  type: 'object',
  required: ['id', 'type'],
  properties: { id: TRIGGER_COMMON.id, type: tag({ type: 'string', pattern: `^${PREFIX.replace(/\./g, '\\.')}` }, { kind: 'trigger-type' }) },
  allOf: [
    needs(TRIGGER_TYPES.schedule, ['cron']),
    needs(TRIGGER_TYPES.webhook, ['key']),
    ...Object.entries(KNOWN_TRIGGERS).map(([t, schema]) => ({
      if: { properties: { type: { const: t } }, required: ['type'] },
      then: schema,
    })),
  ],
};

const pluginDefaultSchema: Schema = {
  type: 'object',
  required: ['type', 'values'],
  properties: { type: STRING, values: OBJECT, forced: BOOL },
  additionalProperties: false,
};

const concurrencySchema: Schema = {
  type: 'object',
  required: ['limit'],
  properties: {
    limit: { type: 'integer', minimum: 1 },
    behavior: { type: 'string', enum: ['QUEUE', 'CANCEL', 'FAIL'] },
  },
  additionalProperties: false,
};

/** The whole JSON Schema of a flow document (rebuilt when packages register task types: PLUGINS setting). */
export const flowJsonSchema: () => Schema = memoByCatalog(() => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://ai.service/schemas/flow.json',
  title: 'Flow',
  type: 'object',
  required: ['id', 'namespace', 'tasks'],
  properties: {
    id: tag({ type: 'string', pattern: FLOW_ID_PATTERN, maxLength: 100 }, { kind: 'id', dots: true }),
    namespace: tag({ type: 'string', pattern: NAMESPACE_PATTERN, maxLength: 150 }, { kind: 'namespace' }),
    revision: { type: 'integer', minimum: 1 },
    description: STRING,
    labels: LABELS,
    inputs: { type: 'array', items: ref('input') },
    outputs: { type: 'array', items: ref('output') },
    variables: OBJECT,
    tasks: TASKS_REQUIRED,
    errors: TASKS,
    finally: TASKS,
    afterExecution: TASKS,
    listeners: { type: 'array', items: ref('listener') },
    triggers: { type: 'array', items: ref('trigger') },
    pluginDefaults: { type: 'array', items: ref('pluginDefault') },
    retry: ref('flowRetry'),
    concurrency: ref('concurrency'),
    disabled: BOOL,
  },
  additionalProperties: false,
  definitions: {
    task: taskDispatchSchema(),
    tasks: { type: 'array', items: ref('task') },
    taskRetry: taskRetrySchema,
    flowRetry: flowRetrySchema,
    taskRunner: taskRunnerSchema,
    label: labelSchema,
    input: inputSchema,
    output: outputSchema,
    trigger: triggerSchema,
    condition: conditionSchema,
    listener: listenerSchema,
    pluginDefault: pluginDefaultSchema,
    concurrency: concurrencySchema,
    ...taskTypeSchemas(),
  },
}));
