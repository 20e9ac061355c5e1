// Builds the RunContext a runnable plugin receives in embedded mode: rendering with the task run's variables (SECRET
// inputs opened through the stores' secret layer), a logger writing to the log store (masked there), storage, KV, a
// working directory and an abort signal.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildVariables } from '../core/context.js';
import type { Execution, Flow, LogLevel, Task, TaskRun } from '../core/types.js';
import { LogLevels } from '../core/types.js';
import type { RunContext, SecretSink, TaskLogger } from '../plugins/types.js';
import { executionKV } from '../secrets/masked-stores.js';
import type { Stores } from '../store/types.js';
import type { SecretRenderer } from './secrets.js';
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

/** A task's logger: lines go to the log store, whose secret layer masks them. */
export function makeLogger(stores: Stores, exec: Execution, run: TaskRun, attempt: number, minLevel: LogLevel): TaskLogger {
  const log = (level: LogLevel, message: string) => {
    if (rank(level) < rank(minLevel)) return;
    stores.logs.append([{
      executionId: exec.id, namespace: exec.namespace, flowId: exec.flowId, taskId: run.taskId, taskRunId: run.id,
      attemptNumber: attempt, level, timestamp: new Date().toISOString(), message: String(message),
    }]);
  };
  return {
    log, trace: (m) => log('TRACE', m), debug: (m) => log('DEBUG', m), info: (m) => log('INFO', m),
    warn: (m) => log('WARN', m), error: (m) => log('ERROR', m),
  };
}

/**
 * Where a task attempt works: the nearest WorkingDirectory ancestor's directory (shared with its children, seeded by
 * runAttempt before the child runs: working-directory.ts), else a directory of its own. `create` makes it on first
 * use only: most tasks never touch disk.
 */
function workingDirFor(flow: Flow, exec: Execution, run: TaskRun, attempt: number, workRoot: string): { path: string; create(): void } {
  const shared = sharedWorkingDirOf(flow, exec, run, workRoot);
  const dir = shared ? shared.dir : join(workRoot, exec.id, `${run.id}-${attempt}`);
  return { path: dir, create: () => { mkdirSync(dir, { recursive: true }); } };
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

export function buildRunContext(a: {
  flow: Flow; exec: Execution; run: TaskRun; task: Task; attempt: number; stores: Stores; renderer: SecretRenderer;
  workRoot: string; signal: AbortSignal;
  /** The execution's ERROR lines read for `errorLogs()` (callsErrorLogs), when the task calls it. */
  errorLogs?: Record<string, unknown>[];
  /** Namespaces this execution may reach beyond its own (ALLOWED_NAMESPACES); default none. */
  grants?: NamespaceGrants;
  /** The safety limits (NAMESPACE_FILES_MAX_COUNT...); default: from the environment. */
  limits?: Limits;
}): RunContext {
  const { flow, exec, run, task, attempt, stores, renderer } = a;
  // Values a task declares sensitive, and secrets it reads, are masked in everything this execution writes.
  const secrets: SecretSink = { add: (value) => { stores.secrets?.remember(exec.id, [value]); } };
  const base = buildVariables(flow, exec, run, task, { open: stores.secrets?.openInput });
  const vars = (extra?: Record<string, unknown>) => (extra ? { ...base, ...extra } : base);
  // The task's views: files and KV entries its execution may reach (operator/tenancy), KV values it sets masked with
  // its execution's secrets too (operator/secrets); never the whole store. Its templates' kv() and read() use them too.
  // Built on first use: most attempts (Return, Log...) never touch them.
  const storage = lazy(() => scopedStorage(stores.storage, fileCallerOf(exec, flow), a.grants ?? NO_GRANTS));
  const kv = lazy(() => scopedKv(executionKV(stores, exec.id), exec.namespace, a.grants ?? NO_GRANTS));
  const errorLogs = (): unknown[] => {
    if (!a.errorLogs) throw new ExpressionError('errorLogs(): the error logs were not read for this task; call errorLogs() in its own properties');
    return structuredClone(a.errorLogs);
  };
  const r = renderer.forSecrets(secrets, { get kv() { return kv(); }, get storage() { return storage(); }, errorLogs });
  const wd = workingDirFor(flow, exec, run, attempt, a.workRoot);
  base.workingDir = wd.path;
  let created = false;
  return {
    flow, execution: exec, taskRun: run, task, attempt,
    render: (t, extra) => r.render(t, vars(extra)),
    renderValue: (v, extra) => r.renderValue(v, vars(extra)),
    renderTyped: (v, extra) => r.renderTyped(v, vars(extra)),
    variables: base,
    logger: makeLogger(stores, exec, run, attempt, (task.logLevel as LogLevel | undefined) ?? 'TRACE'),
    get storage() { return storage(); },
    get kv() { return kv(); },
    get namespaceFiles() { return scopedNamespaceFiles(stores.storage, exec.namespace, a.grants ?? NO_GRANTS, a.limits); },
    get logs() { return scopedLogs(stores.logs, exec.namespace, a.grants ?? NO_GRANTS); },
    get executions() { return scopedExecutions(stores.executions, exec.namespace, a.grants ?? NO_GRANTS); },
    storagePrefix: taskRunStoragePath(exec, run.taskId, run.id),
    get workingDir() {
      if (!created) { wd.create(); created = true; }
      return wd.path;
    },
    signal: a.signal,
    secrets,
    ...(stores.processes ? { processes: { registry: stores.processes, owner: { executionId: exec.id, taskRunId: run.id, attempt } } } : {}),
  };
}
