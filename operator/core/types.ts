// Domain types shared by every layer: flows, executions, task runs and their states.
// Pure data only; the engine core, stores, plugins and the API all speak these shapes (Kestra-compatible JSON).

/** Every execution state of the contract. */
export const ExecutionStates = [
  'CREATED', 'QUEUED', 'RUNNING', 'PAUSED', 'SUCCESS', 'WARNING', 'FAILED',
  'RETRYING', 'RETRIED', 'RESTARTED', 'CANCELLED', 'KILLING', 'KILLED',
] as const;
export type ExecutionState = (typeof ExecutionStates)[number];

/** Task runs never take QUEUED, CANCELLED, PAUSED or RESTARTED. */
export const TaskRunStates = [
  'CREATED', 'RUNNING', 'SUCCESS', 'WARNING', 'FAILED', 'RETRYING', 'RETRIED', 'KILLING', 'KILLED',
] as const;
export type TaskRunState = (typeof TaskRunStates)[number];

export type State = ExecutionState;

export interface StateHistory { state: State; date: string }

/** Kestra's `state` object: current state, every transition with its date, start and end. */
export interface StateRecord<S extends State = State> {
  current: S;
  histories: StateHistory[];
  startDate: string;
  endDate?: string;
  /** ISO 8601 duration, set when terminal. */
  duration?: string;
}

export interface Label { key: string; value: string }

/** Labels under this prefix (Kestra's `system.`) are set by the service itself, never by a caller. */
export const SYSTEM_LABEL_PREFIX = 'system.';
export const isSystemLabel = (key: string): boolean => key.startsWith(SYSTEM_LABEL_PREFIX);

export type RetryType = 'constant' | 'exponential' | 'random';

export interface RetryPolicy {
  type: RetryType;
  interval?: string;
  maxInterval?: string;
  minInterval?: string;
  delayFactor?: number;
  maxAttempt?: number;
  maxDuration?: string;
  warningOnRetry?: boolean;
  /** Flow level only. */
  behavior?: 'CREATE_NEW_EXECUTION' | 'RETRY_FAILED_TASK';
}

/** A task as written in the flow: common fields plus type-specific properties. */
export interface Task {
  id: string;
  type: string;
  description?: string;
  retry?: RetryPolicy;
  timeout?: string;
  disabled?: boolean;
  logLevel?: LogLevel;
  allowFailure?: boolean;
  /** A WARNING ends the run SUCCESS (and, with allowFailure, a failure too). */
  allowWarning?: boolean;
  /** Rendered when the run is created: false ends it at once, SUCCESS, with no attempt and no child. */
  runIf?: string | boolean;
  [property: string]: unknown;
}

export const InputTypes = [
  'STRING', 'INT', 'FLOAT', 'ENUM', 'BOOLEAN', 'DATETIME', 'DATE', 'TIME', 'DURATION',
  'FILE', 'JSON', 'URI', 'SECRET', 'ARRAY',
  // Kestra's newer names: BOOL (BOOLEAN), SELECT (ENUM), MULTISELECT (several of `values`, a list).
  'BOOL', 'SELECT', 'MULTISELECT',
] as const;
export type InputType = (typeof InputTypes)[number];

export interface Input {
  id: string;
  type: InputType;
  required?: boolean;
  defaults?: unknown;
  description?: string;
  displayName?: string;
  values?: string[];
  itemType?: InputType;
  min?: number | string;
  max?: number | string;
  validator?: string;
}

export interface FlowOutput {
  id: string; type: string; value: unknown; description?: string;
  /** false: a value that cannot be rendered (a task that did not run) leaves the output out instead of failing (Kestra). */
  required?: boolean;
}

export interface Trigger {
  id: string;
  type: string;
  description?: string;
  disabled?: boolean;
  [property: string]: unknown;
}

export interface PluginDefault { type: string; values: Record<string, unknown>; forced?: boolean }

export interface Concurrency { limit: number; behavior?: 'QUEUE' | 'CANCEL' | 'FAIL' }

/** A namespace as a thing (Kestra's Namespace): what the flows of the namespace and of its children inherit. */
export interface NamespaceSpec {
  id: string;
  description?: string;
  /** Read by templates as `namespace.<name>` (children's variables win over their parents'). */
  variables: Record<string, unknown>;
  /** Applied to the tasks of the namespace's flows and of its children's flows (after the flow's own). */
  pluginDefaults: PluginDefault[];
}

/**
 * What a flow's namespace and its parents give an execution (the namespace store's `variables` and `pluginDefaults`):
 * attached by the controller to the flow it runs (operator/controller/namespaces.ts), never saved with the flow.
 */
export interface NamespaceContext {
  /** Variables of the namespace and its parents (the nearest wins, maps merged), read as `namespace.<name>`. */
  variables: Record<string, unknown>;
  /** Plugin defaults per namespace, nearest first (the flow's namespace, then its parent...). */
  pluginDefaults: PluginDefault[][];
}

export interface Listener { description?: string; conditions?: Record<string, unknown>[]; tasks: Task[] }

export interface Flow {
  id: string;
  namespace: string;
  revision?: number;
  description?: string;
  labels?: Record<string, string> | Label[];
  inputs?: Input[];
  outputs?: FlowOutput[];
  variables?: Record<string, unknown>;
  tasks: Task[];
  errors?: Task[];
  finally?: Task[];
  /** Tasks run once the execution reached its final state, which they do not change (Kestra >= 0.21). */
  afterExecution?: Task[];
  /** Kestra's deprecated listeners: tasks run after the execution, when all their (execution) conditions hold. */
  listeners?: Listener[];
  triggers?: Trigger[];
  pluginDefaults?: PluginDefault[];
  retry?: RetryPolicy;
  concurrency?: Concurrency;
  disabled?: boolean;
  /** Set at run time from the namespace store (not part of a flow document: the schema refuses it). */
  namespaceContext?: NamespaceContext;
}

export interface Metric { name: string; type: 'counter' | 'timer'; value: number; tags?: Record<string, string> }

export interface TaskRunAttempt {
  state: StateRecord<TaskRunState>;
  metrics?: Metric[];
  /** The attempt failed because its infrastructure did (its runner), not the task: not one of the task's own tries. */
  infrastructure?: boolean;
}

export interface TaskRun {
  id: string;
  executionId: string;
  namespace: string;
  flowId: string;
  taskId: string;
  parentTaskRunId?: string;
  /** Loop value (always a string, JSON for objects), set on children of Each* and ForEachItem. */
  value?: string;
  /** ForEachItem: URI of this batch's items file. */
  items?: string;
  /**
   * Loop iteration of this run: the index of its value (EachSequential, EachParallel, ForEach), the iteration number
   * 1, 2... (LoopUntil), the batch index (ForEachItem).
   */
  iteration?: number;
  state: StateRecord<TaskRunState>;
  attempts: TaskRunAttempt[];
  outputs?: Record<string, unknown>;
  /** Engine bookkeeping (persisted so that a restart resumes exactly). */
  /** Which list of the parent this run belongs to. */
  branch?: Branch;
  /** When a RETRYING run starts its next attempt. */
  nextAttemptDate?: string;
  /** Pause: when it resumes (or times out) by itself; LoopUntil: when its next iteration starts. */
  resumeDate?: string;
  /** Subflow: id of the child execution (a ForEachItem `_items` run keeps one per batch in its bookkeeping). */
  subflowExecutionId?: string;
  /** Error message of the last failed attempt. */
  error?: string;
  /** Flowable bookkeeping (loop values, chosen branch, pause status...), internal to the engine. */
  flowableState?: Record<string, unknown>;
}

/** Which list a run belongs to: a flowable's (or the flow's) tasks, errors, finally; the flow's afterExecution and listeners. */
export type Branch = 'tasks' | 'errors' | 'finally' | 'afterExecution' | 'listeners';

/** The end of an execution while its afterExecution (and listener) tasks run: the final state already decided. */
export interface Ending {
  state: 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED';
  /** Indexes of the flow's listeners whose conditions held when the execution ended (these run). */
  listeners?: number[];
}

/** Origin of an execution. */
export interface ExecutionTrigger {
  id: string;
  type: string;
  variables?: Record<string, unknown>;
}

export interface ExecutionMetadata { attemptNumber: number; originalCreatedDate: string }

export interface ParentLink { executionId: string; taskRunId: string; namespace: string; flowId: string }

export interface Execution {
  id: string;
  namespace: string;
  flowId: string;
  flowRevision: number;
  state: StateRecord<ExecutionState>;
  /** Unchanged across replays and retries. */
  originalId: string;
  labels: Label[];
  inputs: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  trigger?: ExecutionTrigger;
  taskRunList: TaskRun[];
  parent?: ParentLink;
  /**
   * Kestra's execution metadata: `attemptNumber` (1 on the first execution, +1 per flow-level retry, carried to the
   * new execution of CREATE_NEW_EXECUTION) and `originalCreatedDate` (creation of the first execution of the retry
   * chain, from which a flow retry's `maxDuration` is measured). Absent on records written before it existed.
   */
  metadata?: ExecutionMetadata;
  /**
   * Set while the flow's afterExecution tasks (and listeners) run: the final state decided when its tasks ended. The
   * execution stays RUNNING until they end, then takes that state (they never change it).
   */
  ending?: Ending;
  /** Why the execution failed, when it did outside a task (disabled flow, concurrency, outputs). */
  error?: string;
  /**
   * The deprecated `outputs` of the Subflow task that started this execution (Kestra before 0.15): output templates
   * rendered against this execution when it ends, used when its flow declares no `outputs` of its own.
   */
  legacyOutputs?: Record<string, unknown>;
  /** Set when the execution must not start before this date (flow retry delay, a Subflow/ForEachItem `scheduleDate`). */
  scheduleDate?: string;
  /**
   * Number of Subflow/ForEachItem executions above this one (absent on a root execution): set when a parent creates
   * it, kept by flow-level retries and replays, bounded by MAX_SUBFLOW_DEPTH.
   */
  depth?: number;
}

export const LogLevels = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LogLevels)[number];

export interface LogLine {
  executionId: string;
  namespace: string;
  flowId: string;
  taskId?: string;
  taskRunId?: string;
  attemptNumber?: number;
  level: LogLevel;
  timestamp: string;
  message: string;
}

const TERMINAL: ReadonlySet<State> = new Set<State>(['SUCCESS', 'WARNING', 'FAILED', 'RETRIED', 'CANCELLED', 'KILLED']);
export const isTerminal = (s: State): boolean => TERMINAL.has(s);
