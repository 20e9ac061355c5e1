// The runnable-task plugin interface: what a task implementation receives (RunContext) and returns
// (TaskResult). The same interface serves embedded mode (in-process / local child processes) and,
// later, the runner program inside a task Pod.
import type { NamespaceFilesView } from '../tenancy/scoped-namespace-files.js';
import type { Execution, Flow, Label, LogLevel, Metric, Task, TaskRun } from '../core/types.js';
import type { InternalStorage, KVStore, ProcessRegistry, TaskProcess } from '../store/types.js';
import type { ExecutionLogReader } from '../tenancy/scoped-logs.js';
import type { ExecutionReader } from '../tenancy/scoped-executions.js';

export interface TaskLogger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  log(level: LogLevel, message: string): void;
}

/** Where the processes a task starts are recorded (embedded mode), and the attempt they belong to. */
export interface ProcessTracking {
  registry: ProcessRegistry;
  owner: Pick<TaskProcess, 'executionId' | 'taskRunId' | 'attempt'>;
}

export interface RunContext {
  flow: Flow;
  execution: Execution;
  taskRun: TaskRun;
  /** Task definition with plugin defaults applied; properties NOT yet rendered. */
  task: Task;
  /** 1-based attempt number. */
  attempt: number;
  /** Renders a template string against this task run's variables (throws ExpressionError). */
  render(template: string, extraVars?: Record<string, unknown>): string;
  /** Renders every string inside a value (objects, arrays) recursively. */
  renderValue<T = unknown>(value: T, extraVars?: Record<string, unknown>): T;
  /** Renders a value that may be a native value or an expression yielding one (lists, maps, numbers). */
  renderTyped(value: unknown, extraVars?: Record<string, unknown>): unknown;
  /** The variables templates see (execution, flow, inputs, outputs, vars, taskrun...). */
  variables: Record<string, unknown>;
  logger: TaskLogger;
  storage: InternalStorage;
  kv: KVStore;
  /** Namespace files of its namespace (or one ALLOWED_NAMESPACES grants), for `namespaceFiles` (operator/tenancy). */
  namespaceFiles: NamespaceFilesView;
  /** Log lines of executions this one may read (core.log.Fetch): its namespace's, or a granted one's. */
  logs: ExecutionLogReader;
  /** Executions this one may read (the notifications' *Execution tasks): its namespace's, or a granted one's. */
  executions: ExecutionReader;
  /** Storage path prefix for files of this task run: `<ns>/<flow>/executions/<exec>/tasks/<task>/<taskrun>`. */
  storagePrefix: string;
  /** Working directory to use (shared when inside a WorkingDirectory task), already created. */
  workingDir: string;
  /** Aborted on kill or timeout: long-running work must stop and resolve promptly. */
  signal: AbortSignal;
  /** Sensitive values (credentials a task rendered): masked in everything the execution writes from now on. */
  secrets: SecretSink;
  /** Embedded mode: records the task's processes so a restart after a crash kills them (absent: not recorded). */
  processes?: ProcessTracking;
}

/** Where a task declares sensitive values (the secret layer of the stores remembers them for its execution). */
export interface SecretSink { add(value: string): unknown }

export interface TaskResult {
  state: 'SUCCESS' | 'WARNING' | 'FAILED';
  outputs?: Record<string, unknown>;
  metrics?: Metric[];
  /** core.execution.Labels: labels to set on the execution (merged by key). */
  executionLabels?: Label[];
  /** Failure message, when FAILED. */
  error?: string;
}

export interface RunnablePlugin {
  type: string;
  /**
   * Pure and quick: starts no process, needs no working directory, calls no network (it renders, logs, reads or writes
   * the stores). The embedded controller runs such an attempt within the engine batch that launched it (its outcome is
   * recorded with the step that started it: operator/controller/inline.ts) instead of a launch and a report round trip.
   */
  inline?: boolean;
  /** Run one attempt. Throwing is the same as returning FAILED with the error's message. */
  run(ctx: RunContext): Promise<TaskResult>;
}
