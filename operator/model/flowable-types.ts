// One declaration per flowable task type: its name (Kestra's after `io.kestra.plugin.`), what it does and the JSON
// schema of its properties. The type lists (task-types.ts), the flow schema (schema-tasks.ts) and the engine's names (core/flow-index.ts
// FLOWABLE) derive from it; the engine's resolver of each is keyed by the same short name (core/flowables.ts RESOLVERS,
// compile-checked to cover every declaration). Pure data, no I/O.
import {
  BOOL, DURATION, FILES_MAP_OR_STRING, LABELS, NAMESPACE_FILES, OBJECT, SCALAR, STRING, STRING_LIST, TASKS, TASKS_REQUIRED,
  TPL_BOOL, ref, taskSchema, tplInt, type Schema,
} from './schema-common.js';
import { templatedEnum } from './schema-roles.js';

/** A flowable's declaration: its type (after the prefix), what it does (for the docs) and schema. */
const flowable = <T extends string>(type: T, description: string, schema: Schema): { readonly type: T; readonly description: string; readonly schema: Schema } =>
  ({ type, description, schema });

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
  Sequential: flowable('core.flow.Sequential', 'Runs its tasks one after the other.', taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks'])),
  Parallel: flowable('core.flow.Parallel', 'Runs its tasks at the same time (at most `concurrent` at once; 0: no limit).', taskSchema({ tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS }, ['tasks'])),
  Switch: flowable('core.flow.Switch', 'Runs the tasks of the case `value` renders to, else `defaults` (no match and no defaults fails it, as in Kestra).', taskSchema({
    value: SCALAR,
    cases: { type: 'object', additionalProperties: TASKS },
    defaults: TASKS,
    ...HANDLERS,
  }, ['value'])),
  If: flowable('core.flow.If', 'Runs `then` when `condition` is true, else `else`.', taskSchema({ condition: SCALAR, then: TASKS_REQUIRED, else: TASKS, ...HANDLERS }, ['condition', 'then'])),
  EachSequential: flowable('core.flow.EachSequential', 'Runs its tasks once per item of `value`, one item after the other (`taskrun.value` is the item).', taskSchema({ value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, ...HANDLERS },
    ['value', 'tasks'])),
  EachParallel: flowable('core.flow.EachParallel', 'Runs its tasks once per item of `value`, items at the same time (at most `concurrent`).', taskSchema({
    value: { type: ['array', 'string'] }, tasks: TASKS_REQUIRED, concurrent: tplInt(0), ...HANDLERS,
  }, ['value', 'tasks'])),
  ForEachItem: flowable('core.flow.ForEachItem', 'Splits the `items` file into batches and starts the subflow once per batch; its outputs are merged into one file.', taskSchema({
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
  Subflow: flowable('core.flow.Subflow', 'Starts an execution of another flow, waiting for it (`wait`) and failing with it (`transmitFailed`) as asked.', taskSchema({ ...subflowCall, outputs: OBJECT }, ['namespace', 'flowId'])),
  AllowFailure: flowable('core.flow.AllowFailure', 'Runs its tasks; a failure among them ends it in WARNING instead of failing the execution.', taskSchema({ tasks: TASKS_REQUIRED, ...HANDLERS }, ['tasks'])),
  Fail: flowable('core.execution.Fail', 'Fails (when `condition` is true, if set) with `errorMessage` (default: Task failure).', taskSchema({ condition: SCALAR, errorMessage: STRING })),
  WorkingDirectory: flowable('core.flow.WorkingDirectory', 'Runs its tasks in one shared directory, seeded with namespace files and `inputFiles`; stores `outputFiles` at the end.', taskSchema({
    tasks: TASKS_REQUIRED,
    inputFiles: FILES_MAP_OR_STRING,
    outputFiles: STRING_LIST,
    namespaceFiles: NAMESPACE_FILES,
    ...HANDLERS,
  }, ['tasks'])),
  Pause: flowable('core.flow.Pause', 'Pauses the execution until a resume (API), or for `pauseDuration`, then does what `behavior` says.', taskSchema({
    delay: DURATION,
    pauseDuration: DURATION,
    behavior: { type: 'string', enum: ['RESUME', 'WARN', 'FAIL', 'CANCEL'] },
    onResume: { type: 'array', items: ref('input') },
    /** Kestra's deprecated spelling: tasks run after the resume, inside the Pause. */
    tasks: TASKS,
    ...HANDLERS,
  })),
  ForEach: flowable('core.flow.ForEach', 'Runs its tasks once per item of `values` (at most `concurrencyLimit` items at once, default 1; 0: no limit).', taskSchema({
    values: { type: ['array', 'string'] }, concurrencyLimit: tplInt(0), tasks: TASKS_REQUIRED, ...HANDLERS,
  }, ['values', 'tasks'])),
  LoopUntil: flowable('core.flow.LoopUntil', 'Runs its tasks again until `condition` is true, within `checkFrequency` (maxIterations, maxDuration, interval).', taskSchema({
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
  Exit: flowable('core.execution.Exit', 'Ends the execution now in `state` (SUCCESS, WARNING, KILLED, FAILED or CANCELLED).', taskSchema({
    state: templatedEnum(['SUCCESS', 'WARNING', 'KILLED', 'FAILED', 'CANCELED', 'CANCELLED']),
  })),
  DAG: flowable('core.flow.DAG', 'Runs its tasks as their `dependsOn` allow (at most `concurrent` at once).', taskSchema({
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
