// Builds the RunContext a runnable plugin receives in embedded mode: rendering with the task run's variables (SECRET
// inputs opened through the stores' secret layer), a logger writing to the log store (masked there), storage, KV, a
// working directory and an abort signal.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildVariables } from '../core/context.js';
import type { Execution, Flow, LogLevel, Task, TaskRun } from '../core/types.js';
import { LogLevels } from '../core/types.js';
import type { Renderer } from '../core/engine-types.js';
import type { ProcessTracking, RunContext, SecretSink, TaskLogger } from '../plugins/types.js';
import type { NamespaceFilesView } from '../tenancy/scoped-namespace-files.js';
import type { ExecutionLogReader } from '../tenancy/scoped-logs.js';
import type { ExecutionReader } from '../tenancy/scoped-executions.js';
import { executionKV } from '../secrets/masked-stores.js';
import type { InternalStorage, KVStore, Stores } from '../store/types.js';
import type { RenderViews, SecretRenderer } from './secrets.js';
import type { Limits } from '../core/limits.js';
import { ExpressionError } from '../expr/index.js';
import { logRow } from '../plugins/log.js';
import { taskRunStoragePath } from '../storage/paths.js';
import { fileCallerOf } from '../tenancy/files.js';
import { NO_GRANTS, type NamespaceGrants } from '../tenancy/namespaces.js';
import { scopedKv } from '../tenancy/scoped-kv.js';
import { scopedNamespaceFiles } from '../tenancy/scoped-namespace-files.js';
import { scopedLogs } from '../tenancy/scoped-logs.js';
import { scopedExecutions } from '../tenancy/scoped-executions.js';
import { scopedStorage } from '../tenancy/scoped-storage.js';
import { sharedWorkingDirOf } from './working-directory.js';

const rank = (l: LogLevel) => LogLevels.indexOf(l);

/** The value of `make`, made on first call (views most attempts and steps never use). */
export function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/**
 * A task's logger: lines go to the log store, whose secret layer masks them. A class (methods on its prototype), so an
 * attempt builds one object, not a closure per level.
 */
class StoreLogger implements TaskLogger {
  constructor(private readonly stores: Stores, private readonly exec: Execution, private readonly run: TaskRun,
    private readonly attempt: number, private readonly minLevel: LogLevel) {}

  log(level: LogLevel, message: string): void {
    if (rank(level) < rank(this.minLevel)) return;
    const { exec, run } = this;
    this.stores.logs.append([{
      executionId: exec.id, namespace: exec.namespace, flowId: exec.flowId, taskId: run.taskId, taskRunId: run.id,
      attemptNumber: this.attempt, level, timestamp: new Date().toISOString(), message: String(message),
    }]);
  }

  trace(m: string): void { this.log('TRACE', m); }
  debug(m: string): void { this.log('DEBUG', m); }
  info(m: string): void { this.log('INFO', m); }
  warn(m: string): void { this.log('WARN', m); }
  error(m: string): void { this.log('ERROR', m); }
}

/** A task's logger: lines go to the log store, whose secret layer masks them. */
export function makeLogger(stores: Stores, exec: Execution, run: TaskRun, attempt: number, minLevel: LogLevel): TaskLogger {
  return new StoreLogger(stores, exec, run, attempt, minLevel);
}

/**
 * Where a task attempt works: the nearest WorkingDirectory ancestor's directory (shared with its children, seeded by
 * runAttempt before the child runs: working-directory.ts), else a directory of its own. The context makes it on
 * first use only: most tasks never touch disk.
 */
function workingDirOf(flow: Flow, exec: Execution, run: TaskRun, attempt: number, workRoot: string): string {
  const shared = sharedWorkingDirOf(flow, exec, run, workRoot);
  return shared ? shared.dir : join(workRoot, exec.id, `${run.id}-${attempt}`);
}

/** Whether the task's templates (or the flow variables they may render) call `errorLogs()`. */
export function callsErrorLogs(flow: Flow, task: Task): boolean {
  let calls = errorLogCalls.get(task);
  if (calls === undefined) {
    calls = /\berrorLogs\s*\(/.test(JSON.stringify(task)) || /\berrorLogs\s*\(/.test(JSON.stringify(flow.variables ?? {}));
    errorLogCalls.set(task, calls);
  }
  return calls;
}

/** callsErrorLogs by task object (a flow's tasks, with its defaults applied, are reused while the flow is). */
const errorLogCalls = new WeakMap<Task, boolean>();

/** The execution's ERROR lines for `errorLogs()` (Kestra's LogEntry fields), at most LOGS_MAX_LINES of them. */
export async function readErrorLogs(stores: Stores, exec: Execution, limits: Pick<Limits, 'logsMaxLines'>): Promise<Record<string, unknown>[]> {
  await stores.logs.flush();
  const lines = await stores.logs.forExecution(exec.id, { minLevel: 'ERROR', limit: limits.logsMaxLines });
  return lines.filter((l) => l.namespace === exec.namespace && l.flowId === exec.flowId).map(logRow);
}

/** What buildRunContext is given. */
export interface RunContextInput {
  flow: Flow; exec: Execution; run: TaskRun; task: Task; attempt: number; stores: Stores; renderer: SecretRenderer;
  workRoot: string; signal: AbortSignal;
  /** The execution's ERROR lines read for `errorLogs()` (callsErrorLogs), when the task calls it. */
  errorLogs?: Record<string, unknown>[];
  /** Namespaces this execution may reach beyond its own (ALLOWED_NAMESPACES); default none. */
  grants?: NamespaceGrants;
  /** The safety limits (NAMESPACE_FILES_MAX_COUNT...); default: from the environment. */
  limits?: Limits;
}

/** Values a task declares sensitive, and secrets it reads: masked in everything its execution writes. */
class ExecutionSecrets implements SecretSink {
  constructor(private readonly stores: Stores, private readonly executionId: string) {}
  add(value: string): void { this.stores.secrets?.remember(this.executionId, [value]); }
}

/**
 * The embedded RunContext. A class whose methods and views live on its prototype: an attempt of a pure task (Return,
 * Log...) runs inline thousands of times a second, and builds this one object (plus its variables) instead of a
 * closure per method. The views (storage, KV, logger, the renderer) are made on first use: most attempts never touch
 * them. It is also the renderer's RenderViews: `kv()` and `read()` in its templates reach what its views reach.
 */
class EmbeddedRunContext implements RunContext, RenderViews {
  readonly flow: Flow;
  readonly execution: Execution;
  readonly taskRun: TaskRun;
  readonly task: Task;
  readonly attempt: number;
  readonly variables: Record<string, unknown>;
  readonly storagePrefix: string;
  readonly signal: AbortSignal;
  readonly secrets: SecretSink;
  readonly processes?: ProcessTracking;
  private readonly dir: string;
  private dirCreated = false;
  private storageView: InternalStorage | undefined;
  private kvView: KVStore | undefined;
  private loggerView: TaskLogger | undefined;
  private rendering: Renderer | undefined;

  constructor(private readonly a: RunContextInput) {
    const { flow, exec, run, task, stores } = a;
    this.flow = flow;
    this.execution = exec;
    this.taskRun = run;
    this.task = task;
    this.attempt = a.attempt;
    this.signal = a.signal;
    this.secrets = new ExecutionSecrets(stores, exec.id);
    this.variables = buildVariables(flow, exec, run, task, { open: stores.secrets?.openInput });
    this.dir = workingDirOf(flow, exec, run, a.attempt, a.workRoot);
    this.variables.workingDir = this.dir;
    this.storagePrefix = taskRunStoragePath(exec, run.taskId, run.id);
    if (stores.processes) this.processes = { registry: stores.processes, owner: { executionId: exec.id, taskRunId: run.id, attempt: a.attempt } };
  }

  render(template: string, extra?: Record<string, unknown>): string { return this.renderer().render(template, this.vars(extra)); }
  renderValue<T = unknown>(value: T, extra?: Record<string, unknown>): T { return this.renderer().renderValue(value, this.vars(extra)) as T; }
  renderTyped(value: unknown, extra?: Record<string, unknown>): unknown { return this.renderer().renderTyped(value, this.vars(extra)); }

  get logger(): TaskLogger {
    return (this.loggerView ??= makeLogger(this.a.stores, this.execution, this.taskRun, this.attempt, (this.task.logLevel as LogLevel | undefined) ?? 'TRACE'));
  }

  // The task's views: files and KV entries its execution may reach (operator/tenancy), KV values it sets masked with
  // its execution's secrets too (operator/secrets); never the whole store.
  get storage(): InternalStorage {
    return (this.storageView ??= scopedStorage(this.a.stores.storage, fileCallerOf(this.execution, this.flow), this.a.grants ?? NO_GRANTS));
  }

  get kv(): KVStore {
    return (this.kvView ??= scopedKv(executionKV(this.a.stores, this.execution.id), this.execution.namespace, this.a.grants ?? NO_GRANTS));
  }

  get namespaceFiles(): NamespaceFilesView {
    return scopedNamespaceFiles(this.a.stores.storage, this.execution.namespace, this.a.grants ?? NO_GRANTS, this.a.limits);
  }

  get logs(): ExecutionLogReader { return scopedLogs(this.a.stores.logs, this.execution.namespace, this.a.grants ?? NO_GRANTS); }

  get executions(): ExecutionReader { return scopedExecutions(this.a.stores.executions, this.execution.namespace, this.a.grants ?? NO_GRANTS); }

  get workingDir(): string {
    if (!this.dirCreated) { mkdirSync(this.dir, { recursive: true }); this.dirCreated = true; }
    return this.dir;
  }

  /** `errorLogs()` of its templates: the lines read before the attempt (RenderViews). */
  errorLogs(): unknown[] {
    if (!this.a.errorLogs) throw new ExpressionError('errorLogs(): the error logs were not read for this task; call errorLogs() in its own properties');
    return structuredClone(this.a.errorLogs);
  }

  private vars(extra: Record<string, unknown> | undefined): Record<string, unknown> {
    return extra ? { ...this.variables, ...extra } : this.variables;
  }

  private renderer(): Renderer {
    return (this.rendering ??= this.a.renderer.forSecrets(this.secrets, this));
  }
}

export function buildRunContext(a: RunContextInput): RunContext {
  return new EmbeddedRunContext(a);
}
