// Test helper: a real RunContext for plugin tests (temporary working dir, the real embedded SQLite KV store and
// local internal storage), with a log recorder and an AbortController standing for kill/timeout.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Execution, Flow, LogLevel, Task, TaskRun } from '../core/types.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import type { RunContext, TaskLogger } from './types.js';

export interface RecordedLog { level: LogLevel; message: string }

export interface TestContext {
  ctx: RunContext;
  logs: RecordedLog[];
  controller: AbortController;
  stores: EmbeddedStores;
  dir: string;
  /** Messages logged at a level. */
  messages(level?: LogLevel): string[];
  cleanup(): Promise<void>;
}

export interface TestContextOptions {
  task: Task;
  namespace?: string;
  flowId?: string;
  variables?: Record<string, unknown>;
  secrets?: string[];
}

const ABSENT = Symbol('absent');

function lookup(vars: Record<string, unknown>, path: string): unknown {
  let cur: unknown = vars;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !(part in cur)) return ABSENT;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function resolvePath(vars: Record<string, unknown>, path: string): unknown {
  const v = lookup(vars, path.trim());
  if (v === ABSENT) throw new Error(`Unable to render: '${path.trim()}' is not defined`);
  return v;
}

const EXPR = /\{\{\s*([\w.]+)\s*\}\}/g;
const SINGLE = /^\{\{\s*([\w.]+)\s*\}\}$/;

/** A deliberately tiny stand-in for the expression renderer: `{{ a.b.c }}` paths only (test double). */
export function createPathRendererForTests(base: Record<string, unknown>) {
  const render = (template: string, extra?: Record<string, unknown>): string => {
    const vars = { ...base, ...extra };
    return template.replace(EXPR, (_m, path: string) => {
      const v = resolvePath(vars, path);
      return typeof v === 'string' ? v : JSON.stringify(v);
    });
  };
  const renderValue = <T>(value: T, extra?: Record<string, unknown>): T => {
    if (typeof value === 'string') return render(value, extra) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => renderValue(v, extra)) as T;
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderValue(v, extra)])) as T;
    }
    return value;
  };
  const renderTyped = (value: unknown, extra?: Record<string, unknown>): unknown => {
    if (typeof value === 'string') {
      const m = SINGLE.exec(value.trim());
      if (m) return resolvePath({ ...base, ...extra }, m[1]!);
    }
    return renderValue(value, extra);
  };
  return { render, renderValue, renderTyped };
}

function recorder(logs: RecordedLog[]): TaskLogger {
  const log = (level: LogLevel, message: string): void => void logs.push({ level, message });
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
  const stores = openEmbeddedStores(join(dir, 'data'));
  const namespace = opts.namespace ?? 'company.team';
  const { flow, execution, taskRun } = sampleRecords(namespace, opts.flowId ?? 'flow1', opts.task);
  const variables: Record<string, unknown> = {
    flow: { id: flow.id, namespace }, execution: { id: execution.id }, task: { id: opts.task.id },
    taskrun: { id: taskRun.id }, outputs: {}, inputs: {}, vars: {}, ...opts.variables,
  };
  const renderer = createPathRendererForTests(variables);
  const logs: RecordedLog[] = [];
  const controller = new AbortController();
  const ctx: RunContext = {
    flow, execution, taskRun, task: opts.task, attempt: 1, variables,
    render: renderer.render, renderValue: renderer.renderValue, renderTyped: renderer.renderTyped,
    logger: recorder(logs), storage: stores.storage, kv: stores.kv,
    storagePrefix: `${namespace.replace(/\./g, '/')}/${flow.id}/executions/${execution.id}/tasks/${opts.task.id}/${taskRun.id}`,
    workingDir, signal: controller.signal, secrets: new Set(opts.secrets ?? []),
  };
  return {
    ctx, logs, controller, stores, dir,
    messages: (level) => logs.filter((l) => level === undefined || l.level === level).map((l) => l.message),
    cleanup: async () => {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
