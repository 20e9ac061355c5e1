// One declaration per flowable task type: its name (Kestra's after `io.kestra.plugin.`) and the JSON schema of its
// properties. The type lists (task-types.ts), the flow schema (schema-tasks.ts) and the engine's names (core/flow-index.ts
// FLOWABLE) derive from it; the engine's resolver of each is keyed by the same short name (core/flowables.ts RESOLVERS,
// compile-checked to cover every declaration). Pure data, no I/O.
import {
  BOOL, DURATION, FILES_MAP_OR_STRING, LABELS, NAMESPACE_FILES, OBJECT, SCALAR, STRING, STRING_LIST, TASKS, TASKS_REQUIRED,
  TPL_BOOL, ref, taskSchema, tplInt, type Schema,
} from './schema-common.js';
import { templatedEnum } from './schema-roles.js';

/** A flowable's declaration: its type (after the prefix) and schema. */
const flowable = <T extends string>(type: T, schema: Schema): { readonly type: T; readonly schema: Schema } => ({ type, schema });

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

export const FLOWABLES = {
  Sequential: flowable('core.flow.Sequential', taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks'])),
  Parallel: flowable('core.flow.Parallel', taskSchema({ tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS }, ['tasks'])),
  Switch: flowable('core.flow.Switch', taskSchema({
    value: SCALAR,
    cases: { type: 'object', additionalProperties: TASKS },
    defaults: TASKS,
    ...HANDLERS,
  }, ['value'])),
  If: flowable('core.flow.If', taskSchema({ condition: SCALAR, then: TASKS_REQUIRED, else: TASKS, ...HANDLERS }, ['condition', 'then'])),
  EachSequential: flowable('core.flow.EachSequential', taskSchema({ value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, ...HANDLERS },
    ['value', 'tasks'])),
  EachParallel: flowable('core.flow.EachParallel', taskSchema({
    value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS,
  }, ['value', 'tasks'])),
  ForEachItem: flowable('core.flow.ForEachItem', taskSchema({
    items: STRING,
    batch: {
      type: 'object',
      properties: { rows: tplInt(1), bytes: { type: ['string', 'integer'] }, partitions: tplInt(1) },
      additionalProperties: false,
    },
    ...subflowCall,
    /** What a restart of the failed execution does (core/foreach-item.ts retryFailedBatches). */
    restartBehavior: { type: 'string', enum: ['RETRY_FAILED', 'NEW_EXECUTION'] },
  }, ['items', 'namespace', 'flowId'])),
  // `outputs`: Kestra's deprecated mapping of subflow outputs (before 0.15), rendered by the child (core/subflow.ts).
  Subflow: flowable('core.flow.Subflow', taskSchema({ ...subflowCall, outputs: OBJECT }, ['namespace', 'flowId'])),
  AllowFailure: flowable('core.flow.AllowFailure', taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks'])),
  Fail: flowable('core.execution.Fail', taskSchema({ condition: SCALAR, errorMessage: STRING })),
  WorkingDirectory: flowable('core.flow.WorkingDirectory', taskSchema({
    tasks: TASKS_REQUIRED,
    inputFiles: FILES_MAP_OR_STRING,
    outputFiles: STRING_LIST,
    namespaceFiles: NAMESPACE_FILES,
    ...HANDLERS,
  }, ['tasks'])),
  Pause: flowable('core.flow.Pause', taskSchema({
    delay: DURATION,
    pauseDuration: DURATION,
    behavior: { type: 'string', enum: ['RESUME', 'WARN', 'FAIL', 'CANCEL'] },
    onResume: { type: 'array', items: ref('input') },
    /** Kestra's deprecated spelling: tasks run after the resume, inside the Pause. */
    tasks: TASKS,
    ...HANDLERS,
  })),
  ForEach: flowable('core.flow.ForEach', taskSchema({
    values: { type: ['array', 'string'] }, concurrencyLimit: tplInt(0), tasks: TASKS_REQUIRED, ...HANDLERS,
  }, ['values', 'tasks'])),
  LoopUntil: flowable('core.flow.LoopUntil', taskSchema({
    condition: SCALAR,
    tasks: TASKS_REQUIRED,
    failOnMaxReached: TPL_BOOL,
    checkFrequency: {
      type: 'object',
      properties: { maxIterations: tplInt(1), maxDuration: DURATION, interval: DURATION },
      additionalProperties: false,
    },
    ...HANDLERS,
  }, ['condition', 'tasks'])),
  Exit: flowable('core.execution.Exit', taskSchema({
    state: templatedEnum(['SUCCESS', 'WARNING', 'KILLED', 'FAILED', 'CANCELED', 'CANCELLED']),
  })),
  DAG: flowable('core.flow.DAG', taskSchema({
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
  }, ['tasks'])),
} as const;

/** Short names of the flowables (`Sequential`, `DAG`...): the keys the engine's resolvers are declared under. */
export type FlowableName = keyof typeof FLOWABLES;
