// JSON Schemas of every known task type (keyed by canonical type) and of script task runners.
// Required properties are enforced; properties not listed here are rejected as unknown.
import {
  ANY, BOOL, DURATION, FILES_MAP_OR_STRING, LABELS, NAMESPACE_FILES, OBJECT, SCALAR, SCALAR_MAP, STRING, STRING_LIST, STRING_LIST_OR_EXPR,
  TASKS, TASKS_REQUIRED, TPL_BOOL, TPL_NUMBER, ref, taskSchema, tplInt, type Schema,
} from './schema-common.js';
import { tag, templatedEnum } from './schema-roles.js';
import { PREFIX, TASK_RUNNER_TYPES, shortType } from './task-types.js';
import { inferenceTaskSchemas } from './schema-inference.js';
import { memoByCatalog, pluginDefinitions } from '../plugins/catalog.js';

/** errors/finally lists accepted by every flowable task that has children. */
const HANDLERS = { errors: TASKS, finally: TASKS };

const subflowCall: Record<string, Schema> = {
  namespace: STRING,
  flowId: STRING,
  revision: tplInt(1),
  inputs: OBJECT,
  labels: LABELS,
  inheritLabels: BOOL,
  wait: BOOL,
  transmitFailed: BOOL,
  scheduleDate: STRING,
};

const FLOWABLE: Record<string, Schema> = {
  'core.flow.Sequential': taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks']),
  'core.flow.Parallel': taskSchema({ tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS }, ['tasks']),
  'core.flow.Switch': taskSchema({
    value: SCALAR,
    cases: { type: 'object', additionalProperties: TASKS },
    defaults: TASKS,
    ...HANDLERS,
  }, ['value']),
  'core.flow.If': taskSchema({ condition: SCALAR, then: TASKS_REQUIRED, else: TASKS, ...HANDLERS }, ['condition', 'then']),
  'core.flow.EachSequential': taskSchema({ value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, ...HANDLERS },
    ['value', 'tasks']),
  'core.flow.EachParallel': taskSchema({
    value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS,
  }, ['value', 'tasks']),
  'core.flow.ForEachItem': taskSchema({
    items: STRING,
    batch: {
      type: 'object',
      properties: { rows: tplInt(1), bytes: { type: ['string', 'integer'] }, partitions: tplInt(1) },
      additionalProperties: false,
    },
    ...subflowCall,
    /** What a restart of the failed execution does (core/foreach-item.ts retryFailedBatches). */
    restartBehavior: { type: 'string', enum: ['RETRY_FAILED', 'NEW_EXECUTION'] },
  }, ['items', 'namespace', 'flowId']),
  // `outputs`: Kestra's deprecated mapping of subflow outputs (before 0.15), rendered by the child (core/subflow.ts).
  'core.flow.Subflow': taskSchema({ ...subflowCall, outputs: OBJECT }, ['namespace', 'flowId']),
  'core.flow.AllowFailure': taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks']),
  'core.execution.Fail': taskSchema({ condition: SCALAR, errorMessage: STRING }),
  'core.flow.WorkingDirectory': taskSchema({
    tasks: TASKS_REQUIRED,
    inputFiles: FILES_MAP_OR_STRING,
    outputFiles: STRING_LIST,
    namespaceFiles: NAMESPACE_FILES,
    ...HANDLERS,
  }, ['tasks']),
  'core.flow.Pause': taskSchema({
    delay: DURATION,
    pauseDuration: DURATION,
    behavior: { type: 'string', enum: ['RESUME', 'WARN', 'FAIL', 'CANCEL'] },
    onResume: { type: 'array', items: ref('input') },
    /** Kestra's deprecated spelling: tasks run after the resume, inside the Pause. */
    tasks: TASKS,
    ...HANDLERS,
  }),
  'core.flow.ForEach': taskSchema({
    values: { type: ['array', 'string'] }, concurrencyLimit: tplInt(0), tasks: TASKS_REQUIRED, ...HANDLERS,
  }, ['values', 'tasks']),
  'core.flow.LoopUntil': taskSchema({
    condition: SCALAR,
    tasks: TASKS_REQUIRED,
    failOnMaxReached: TPL_BOOL,
    checkFrequency: {
      type: 'object',
      properties: { maxIterations: tplInt(1), maxDuration: DURATION, interval: DURATION },
      additionalProperties: false,
    },
    ...HANDLERS,
  }, ['condition', 'tasks']),
  'core.execution.Exit': taskSchema({
    state: templatedEnum(['SUCCESS', 'WARNING', 'KILLED', 'FAILED', 'CANCELED', 'CANCELLED']),
  }),
  'core.flow.DAG': taskSchema({
    tasks: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['task'],
        properties: { task: ref('task'), dependsOn: { type: 'array', items: STRING } },
        additionalProperties: false,
      },
    },
    concurrent: tplInt(0),
    ...HANDLERS,
  }, ['tasks']),
};

const scriptCommon: Record<string, Schema> = {
  taskRunner: ref('taskRunner'),
  containerImage: STRING,
  env: SCALAR_MAP,
  inputFiles: FILES_MAP_OR_STRING,
  outputFiles: STRING_LIST_OR_EXPR,
  namespaceFiles: NAMESPACE_FILES,
  beforeCommands: STRING_LIST_OR_EXPR,
  warningOnStdErr: TPL_BOOL,
  interpreter: STRING_LIST_OR_EXPR,
  docker: OBJECT,
  failFast: TPL_BOOL,
  targetOS: { type: 'string', enum: ['LINUX', 'WINDOWS', 'AUTO'] },
  outputDirectory: BOOL,
  /** Kestra's former runner switch (PROCESS or DOCKER), superseded by taskRunner. */
  runner: { type: 'string', enum: ['PROCESS', 'DOCKER'] },
};

/** Script and Commands schemas of one script language family. */
function scriptFamily(family: string, extra: Record<string, Schema> = {}): Record<string, Schema> {
  return {
    [`scripts.${family}.Script`]: taskSchema({ ...scriptCommon, ...extra, script: STRING }, ['script']),
    [`scripts.${family}.Commands`]: taskSchema({ ...scriptCommon, ...extra, commands: STRING_LIST_OR_EXPR }, ['commands']),
  };
}

const RUNNABLE: Record<string, Schema> = {
  'core.templating.TemplatedTask': taskSchema({ spec: STRING }, ['spec']),
  ...scriptFamily('shell'),
  ...scriptFamily('python', { dependencies: STRING_LIST_OR_EXPR, pythonVersion: STRING }),
  ...['node', 'ruby', 'r', 'julia', 'powershell'].reduce((acc, f) => ({ ...acc, ...scriptFamily(f) }), {}),
  // Beyond the contract's list (implemented in operator/plugins).
};

const prefixed = (table: Record<string, Schema>): Record<string, Schema> =>
  Object.fromEntries(Object.entries(table).map(([k, v]) => [PREFIX + k, v]));

/** Schema per canonical task type (rebuilt when packages register definitions). */
export const taskTypeSchemas: () => Record<string, Schema> = memoByCatalog(() => Object.fromEntries(
  Object.entries({
    ...prefixed(FLOWABLE), ...prefixed(RUNNABLE), ...inferenceTaskSchemas,
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

