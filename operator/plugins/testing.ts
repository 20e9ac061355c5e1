// Test helper: a real RunContext for plugin tests (temporary working dir, the real embedded SQLite KV store and
// local internal storage behind the secret layer, the real expression renderer), with a log recorder (lines masked by
// the layer, as the log store masks them) and an AbortController for kill/timeout.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Execution, Flow, LogLevel, Task, TaskRun } from '../core/types.js';
import { createRenderer } from '../expr/index.js';
import { SecretLayer } from '../secrets/layer.js';
import { maskedStores } from '../secrets/masked-stores.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { namespaceFileUri, taskRunStoragePath } from '../storage/paths.js';
import { scopedNamespaceFiles } from '../tenancy/scoped-namespace-files.js';
import { fileCallerOf } from '../tenancy/files.js';
import { NO_GRANTS, type NamespaceGrants } from '../tenancy/namespaces.js';
import { scopedKv } from '../tenancy/scoped-kv.js';
import { scopedLogs } from '../tenancy/scoped-logs.js';
import { scopedExecutions } from '../tenancy/scoped-executions.js';
import { scopedStorage } from '../tenancy/scoped-storage.js';
import type { RunContext, TaskLogger } from './types.js';

export interface RecordedLog { level: LogLevel; message: string }

export interface TestContext {
  ctx: RunContext;
  logs: RecordedLog[];
  controller: AbortController;
  stores: EmbeddedStores;
  dir: string;
  /** Messages logged at a level (default: INFO and above). */
  messages(level?: LogLevel): string[];
  /** Log lines at INFO and above. */
  visibleLogs(): RecordedLog[];
  cleanup(): Promise<void>;
}

export interface TestContextOptions {
  task: Task;
  namespace?: string;
  flowId?: string;
  variables?: Record<string, unknown>;
  /** Secret values known to the secret layer (masked in the recorded logs). */
  secrets?: string[];
  /** Secrets available to `secret('NAME')`. */
  secretValues?: Record<string, string>;
  /** Namespaces the execution may reach beyond its own (as ALLOWED_NAMESPACES); default none. */
  grants?: NamespaceGrants;
}

const HIDDEN: ReadonlySet<LogLevel> = new Set<LogLevel>(['TRACE', 'DEBUG']);

function recorder(logs: RecordedLog[], mask: (text: string) => string): TaskLogger {
  const log = (level: LogLevel, message: string): void => void logs.push({ level, message: mask(message) });
  return {
    trace: (m) => log('TRACE', m), debug: (m) => log('DEBUG', m), info: (m) => log('INFO', m),
    warn: (m) => log('WARN', m), error: (m) => log('ERROR', m), log,
  };
}

function sampleRecords(namespace: string, flowId: string, task: Task): { flow: Flow; execution: Execution; taskRun: TaskRun } {
  const now = new Date().toISOString();
  const flow: Flow = { id: flowId, namespace, revision: 1, tasks: [task] };
  const execution: Execution = {
    id: 'exec1', namespace, flowId, flowRevision: 1, originalId: 'exec1', labels: [], inputs: {}, taskRunList: [],
    state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now },
  };
  const taskRun: TaskRun = {
    id: 'tr1', executionId: 'exec1', namespace, flowId, taskId: task.id, attempts: [],
    state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now },
  };
  return { flow, execution, taskRun };
}

/** Builds a RunContext over real temp dirs and real embedded stores; call cleanup() afterwards. */
export function makeTestContext(opts: TestContextOptions): TestContext {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-test-'));
  const workingDir = join(dir, 'work');
  mkdirSync(workingDir);
  const layer = new SecretLayer({ values: () => [...(opts.secrets ?? []), ...Object.values(opts.secretValues ?? {})] });
  const stores = maskedStores(openEmbeddedStores(join(dir, 'data')), layer);
  const namespace = opts.namespace ?? 'company.team';
  const { flow, execution, taskRun } = sampleRecords(namespace, opts.flowId ?? 'flow1', opts.task);
  const variables: Record<string, unknown> = {
    flow: { id: flow.id, namespace }, execution: { id: execution.id }, task: { id: opts.task.id },
    taskrun: { id: taskRun.id }, outputs: {}, inputs: {}, vars: {}, ...opts.variables,
  };
  const secrets = { add: (value: string) => layer.remember(execution.id, [value]) };
  const storage = scopedStorage(stores.storage, fileCallerOf(execution), opts.grants ?? NO_GRANTS);
  const renderer = createRenderer({
    secret: (name) => opts.secretValues?.[name],
    onSecret: (value) => secrets.add(value),
    kv: (ns, key) => {
      const entry = stores.kv.getSync(ns, key);
      return entry ? { found: true, value: entry.value } : { found: false };
    },
    read: (path, ns) => storage.getSync(ns === undefined ? path : namespaceFileUri(ns, path)).toString('utf8'),
  });
  const withExtra = (extra?: Record<string, unknown>): Record<string, unknown> => (extra ? { ...variables, ...extra } : variables);
  const logs: RecordedLog[] = [];
  const controller = new AbortController();
  const ctx: RunContext = {
    flow, execution, taskRun, task: opts.task, attempt: 1, variables,
    render: (template, extra) => renderer.render(template, withExtra(extra)),
    renderValue: (value, extra) => renderer.renderValue(value, withExtra(extra)),
    renderTyped: (value, extra) => renderer.renderTyped(value, withExtra(extra)),
    // The same scoped views as production run contexts (operator/tenancy).
    logger: recorder(logs, (text) => layer.masker(execution.id).mask(text)),
    storage,
    namespaceFiles: scopedNamespaceFiles(stores.storage, namespace, opts.grants ?? NO_GRANTS),
    kv: scopedKv(stores.kv, namespace, opts.grants ?? NO_GRANTS),
    logs: scopedLogs(stores.logs, namespace, opts.grants ?? NO_GRANTS),
    executions: scopedExecutions(stores.executions, namespace, opts.grants ?? NO_GRANTS),
    storagePrefix: taskRunStoragePath({ namespace, flowId: flow.id, id: execution.id }, opts.task.id, taskRun.id),
    workingDir, signal: controller.signal, secrets,
    processes: { registry: stores.processes, owner: { executionId: execution.id, taskRunId: taskRun.id, attempt: 1 } },
  };
  return {
    ctx, logs, controller, stores, dir,
    messages: (level) => logs.filter((l) => (level === undefined ? !HIDDEN.has(l.level) : l.level === level)).map((l) => l.message),
    visibleLogs: () => logs.filter((l) => !HIDDEN.has(l.level)),
    cleanup: async () => {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
