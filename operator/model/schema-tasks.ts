// JSON Schemas of every known task type (keyed by canonical type: the flowables' declarations of flowable-types.ts and
// the definitions of the plugin catalog) and of script task runners. Required properties are enforced; properties not
// declared are rejected as unknown.
import { ANY, DURATION, OBJECT, STRING, STRING_LIST, STRING_LIST_OR_EXPR, TPL_BOOL, ref, type Schema } from './schema-common.js';
import { tag } from './schema-roles.js';
import { PREFIX, TASK_RUNNER_TYPES, shortType } from './task-types.js';
import { memoByCatalog, pluginDefinitions } from '../plugins/catalog.js';
import { FLOWABLES } from './flowable-types.js';

/** Schema per canonical task type (rebuilt when packages register definitions). */
export const taskTypeSchemas: () => Record<string, Schema> = memoByCatalog(() => Object.fromEntries(
  Object.entries({
    ...Object.fromEntries(Object.values(FLOWABLES).map((f) => [PREFIX + f.type, f.schema])),
    ...Object.fromEntries(pluginDefinitions().map((d) => [d.type, d.schema])),
  })
    .map(([t, schema]) => [t, tag(schema, { kind: 'task-schema', type: shortType(t) })]),
));

const [PROCESS, DOCKER] = TASK_RUNNER_TYPES;

/** Docker options we accept (most are passed through to the container runtime or ignored). */
const dockerRunner: Record<string, Schema> = {
  containerImage: STRING,
  pullPolicy: { type: 'string', enum: ['ALWAYS', 'NEVER', 'IF_NOT_PRESENT'] },
  entryPoint: STRING_LIST_OR_EXPR,
  user: STRING,
  volumes: STRING_LIST,
  networkMode: STRING,
  memory: OBJECT,
  cpu: OBJECT,
  credentials: OBJECT,
  config: ANY,
  delete: TPL_BOOL,
  wait: TPL_BOOL,
  privileged: TPL_BOOL,
  shmSize: STRING,
  extraHosts: STRING_LIST,
  fileHandlingStrategy: { type: 'string', enum: ['MOUNT', 'VOLUME'] },
  deviceRequests: { type: 'array' },
  resume: TPL_BOOL,
  killTimeout: DURATION,
};

export const taskRunnerSchema: Schema = {
  type: 'object',
  required: ['type'],
  properties: { type: tag({ type: 'string', enum: [...TASK_RUNNER_TYPES] }, { kind: 'runner-type' }) },
  allOf: [
    { if: { properties: { type: { const: PROCESS } }, required: ['type'] },
      then: { properties: { type: STRING, version: STRING }, additionalProperties: false } },
    { if: { properties: { type: { const: DOCKER } }, required: ['type'] },
      then: { properties: { type: STRING, version: STRING, ...dockerRunner }, additionalProperties: false } },
  ],
};

/** `{ if type is X then <schema of X> }` for every known task type, plus the base task shape. */
export function taskDispatchSchema(): Schema {
  const schemas = taskTypeSchemas();
  return {
    type: 'object',
    required: ['id', 'type'],
    properties: { type: tag({ type: 'string', enum: Object.keys(schemas) }, { kind: 'task-type' }) },
    allOf: Object.keys(schemas).map((t) => ({
      if: { properties: { type: { const: t } }, required: ['type'] },
      then: ref(t),
    })),
  };
}

