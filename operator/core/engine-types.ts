// Events the engine consumes, actions it emits, and the dependencies injected into it (time, ids, rendering).
import type { SharedRuns } from './shared-runs.js';
import type { OpenSecret } from './context.js';
import type { FlowIndex } from './flow-index.js';
import type { Limits } from './limits.js';
import type { RunIndex } from './run-index.js';
import type { Execution, ExecutionState, Flow, Label, LogLevel, Metric, TaskRun } from './types.js';

export interface TaskOutcome {
  state: 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED';
  outputs?: Record<string, unknown>;
  metrics?: Metric[];
  executionLabels?: Label[];
  error?: string;
  /**
   * FAILED because the attempt's infrastructure failed, not the task (its runner could not start, exited without a
   * result, reported its own failure): the engine makes a new attempt, bounded by TASK_INFRA_RETRIES and not counted
   * against the task's `retry` policy.
   */
  infrastructure?: boolean;
  /**
   * Values the attempt declared sensitive, sealed (operator/secrets `sealedValues`): a task Pod's runner reports them so
   * the operator masks them too. The controller takes them off before the engine sees the outcome.
   */
  secrets?: string[];
}

export type TimerKind = 'retry' | 'timeout' | 'pause' | 'loop' | 'flow-retry';

export type EngineEvent =
  /** Start (or dequeue) a CREATED/QUEUED execution; `runningCount` = executions of the flow holding a concurrency slot. */
  | { type: 'start'; runningCount: number }
  | { type: 'task-result'; taskRunId: string; attempt: number; outcome: TaskOutcome }
  | { type: 'timer'; kind: TimerKind; taskRunId?: string; attempt?: number }
  | { type: 'kill' }
  | { type: 'resume'; inputs?: Record<string, unknown> }
  | { type: 'restart' }
  /** Replaces the labels (an ended execution's too: the API checked it may). */
  | { type: 'set-labels'; labels: Label[] }
  /** Moves an ended execution to another terminal state (ignored while it runs). */
  | { type: 'change-state'; state: ExecutionState }
  /**
   * The controller created (or found) a child execution of a Subflow run, or of a ForEachItem `_items` run (then
   * `iteration` is its batch). A child that ended at once (a disabled flow) is reported by `subflow-ended` alone.
   */
  | { type: 'subflow-created'; taskRunId: string; executionId: string; iteration?: number }
  | { type: 'subflow-error'; taskRunId: string; error: string; iteration?: number }
  | { type: 'subflow-ended'; taskRunId: string; iteration?: number; child: ChildEnd }
  /** Re-evaluate (after a restart of the controller, say). */
  | { type: 'tick' };

/** How a child execution ended, as its parent hears it; `error` is why it failed (its own error, else its first failed task's). */
export interface ChildEnd { id: string; state: ExecutionState; outputs?: Record<string, unknown>; error?: string }

export interface SubflowRequest {
  taskRunId: string;
  /** Task id of the run (the child's `trigger.id`, as Kestra records it). */
  taskId?: string;
  /** ForEachItem: the batch (0-based; the child's `trigger.variables.taskRunIteration`). */
  iteration?: number;
  executionId: string;
  namespace: string;
  flowId: string;
  revision?: number;
  inputs: Record<string, unknown>;
  labels: Label[];
  wait: boolean;
  /** Type of the task that asks (the child's `trigger.type`). */
  taskType?: string;
  /** Deprecated Subflow `outputs` (Kestra before 0.15): output templates the child renders when its flow declares none. */
  outputs?: Record<string, unknown>;
  /** `scheduleDate` rendered (ISO): the child is created CREATED and starts at that date. */
  scheduleDate?: string;
}

export type Action =
  | { type: 'launch'; taskRunId: string; attempt: number }
  | { type: 'kill-task'; taskRunId: string; attempt: number }
  | { type: 'create-subflow'; request: SubflowRequest }
  | { type: 'kill-execution'; executionId: string }
  /** Flow-level retry with CREATE_NEW_EXECUTION: the controller creates this execution. */
  | { type: 'create-execution'; execution: Execution }
  | { type: 'log'; level: LogLevel; message: string; taskRunId?: string }
  /** The execution reached a terminal state. */
  | { type: 'ended'; state: ExecutionState }
  /** The step created as many runs as one step may (RUNS_PER_STEP) and more are due: step again (a `tick`). */
  | { type: 'continue' };

export interface Renderer {
  render(template: string, vars: Record<string, unknown>): string;
  renderTyped(value: unknown, vars: Record<string, unknown>): unknown;
  renderValue<T>(value: T, vars: Record<string, unknown>): T;
}

export interface EngineDeps {
  now: Date;
  newId(): string;
  /** In [0, 1): random retry delays. */
  random(): number;
  renderer: Renderer;
  /** Opens encrypted input values for templates (absent: they are seen as stored). */
  openSecret?: OpenSecret;
  /** Safety limits (task runs per execution, subflow depth); DEFAULT_LIMITS when not given. */
  limits?: Limits;
}

/** Mutable working state of one step. */
export interface StepContext {
  flow: Flow;
  exec: Execution;
  deps: EngineDeps;
  actions: Action[];
  /** The runs of `exec` by id and by parent, kept in line as runs are created (run-index.ts). */
  runs: RunIndex;
  index: FlowIndex;
  /** Runs shared frozen with the record the step was given, copied on first change (shared-runs.ts). */
  shared?: SharedRuns;
  /** Runs flowables created in this step so far (at most RUNS_PER_STEP), and whether some were left for the next. */
  created: number;
  more: boolean;
}
