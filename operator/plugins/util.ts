// Small helpers shared by the runnable plugins: property reads of the properties a plugin renders itself (the scripts'
// ones, rendered with the script's variables), ISO durations, FAILED results, and a context with another task.
import { dict, parseJsonSafe } from '../core/keyed.js';
import { parseDuration } from '../model/duration.js';
import { PLUGIN_PREFIX as PREFIX } from './define.js';
import type { Task } from '../core/types.js';
import type { RunContext, TaskResult } from './types.js';

export const TYPE_PREFIX = PREFIX;

export function failed(error: string, outputs?: Record<string, unknown>): TaskResult {
  return outputs ? { state: 'FAILED', error, outputs } : { state: 'FAILED', error };
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Renders a string property (undefined stays undefined; non-strings are stringified first). */
export function renderString(ctx: RunContext, value: unknown, extra?: Record<string, unknown>): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return ctx.render(value, extra);
  if (typeof value === 'object') return JSON.stringify(ctx.renderValue(value, extra));
  return String(value);
}

export function requireString(ctx: RunContext, name: string, extra?: Record<string, unknown>): string {
  const v = renderString(ctx, ctx.task[name], extra);
  if (v === undefined || v === '') throw new Error(`Missing required property '${name}' on task '${ctx.task.id}'`);
  return v;
}

/** Renders a boolean property that may be a native boolean or an expression ("{{ inputs.flag }}"). */
export function renderBool(ctx: RunContext, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  const v = ctx.renderTyped(value);
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (s === 'true') return true;
  if (s === 'false') return false;
  throw new Error(`Invalid boolean value '${String(v)}'`);
}

/** Renders a map of strings (header, env): keys and values rendered, values stringified; prototype-free. */
export function renderStringMap(ctx: RunContext, value: unknown, extra?: Record<string, unknown>): Record<string, string> {
  if (value === undefined || value === null) return {};
  let rendered = typeof value === 'string' ? ctx.renderTyped(value, extra) : ctx.renderValue(value, extra);
  if (typeof rendered === 'string') rendered = parseJsonMap(rendered);
  if (!isRecord(rendered)) throw new Error('Expected a map');
  const out = dict<string>();
  for (const [k, v] of Object.entries(rendered)) {
    if (v === undefined || v === null) continue;
    out[ctx.render(k, extra)] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

function parseJsonMap(text: string): unknown {
  try {
    return parseJsonSafe(text);
  } catch {
    throw new Error(`Expected a map, got '${text}'`);
  }
}

/** Renders a list property that may be a native list, a single string, or an expression yielding a list. */
export function renderStringList(ctx: RunContext, value: unknown, extra?: Record<string, unknown>): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map((v) => renderString(ctx, v, extra) ?? '');
  const v = ctx.renderTyped(value, extra);
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  if (typeof v === 'string') {
    const t = v.trim();
    if (t.startsWith('[')) {
      try {
        const parsed: unknown = parseJsonSafe(t);
        if (Array.isArray(parsed)) return parsed.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
      } catch { /* a plain string starting with '[' */ }
    }
    return [v];
  }
  return [String(v)];
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** ISO 8601 duration (PT5S, P1D) → milliseconds; also accepts a plain number of milliseconds. */
export function durationMs(value: string | number): number {
  if (typeof value === 'number') return value;
  // The flow validator's parser, so a rendered duration follows the same rules as a literal one.
  try { return parseDuration(value.trim()); } catch { throw new Error(`Invalid ISO 8601 duration '${value}'`); }
}

/** The Kestra log levels accepted in task properties and script log lines. */
export function toLogLevel(value: unknown): 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' {
  const s = String(value ?? 'INFO').toUpperCase();
  if (s === 'WARNING') return 'WARN';
  if (s === 'TRACE' || s === 'DEBUG' || s === 'INFO' || s === 'WARN' || s === 'ERROR') return s;
  throw new Error(`Invalid log level '${String(value)}'`);
}

/** The same context with another task definition (methods bound to the original, whatever its class). */
export function withTask(ctx: RunContext, task: Task): RunContext {
  return {
    flow: ctx.flow,
    execution: ctx.execution,
    taskRun: ctx.taskRun,
    task,
    attempt: ctx.attempt,
    render: (template, extra) => ctx.render(template, extra),
    renderValue: (value, extra) => ctx.renderValue(value, extra),
    renderTyped: (value, extra) => ctx.renderTyped(value, extra),
    variables: ctx.variables,
    logger: ctx.logger,
    storage: ctx.storage,
    kv: ctx.kv,
    namespaceFiles: ctx.namespaceFiles,
    logs: ctx.logs,
    executions: ctx.executions,
    storagePrefix: ctx.storagePrefix,
    get workingDir() { return ctx.workingDir; },
    signal: ctx.signal,
    secrets: ctx.secrets,
  };
}
