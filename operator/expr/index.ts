// Public entry of the expression engine: a sandboxed, Pebble-compatible (Kestra) template renderer.
// Pure: secrets, KV and file reads come in as synchronous callbacks (RenderServices).
import { ExpressionError, excerpt } from './errors.js';
import { Evaluator, type CallContext, type FilterImpl, type FunctionImpl, type Registry, type TestImpl } from './evaluate.js';
import { DATA_FILTERS } from './filters-data.js';
import { TEXT_FILTERS } from './filters-text.js';
import { FUNCTIONS, TESTS } from './functions.js';
import { initJq } from './jq.js';
import { hasTemplate, parseTemplate } from './parse.js';
import type { RenderServices, Renderer } from './types.js';
import { isPlainObject } from './values.js';

export { ExpressionError } from './errors.js';
export type { RenderServices, Renderer } from './types.js';
/** True when a string holds `{{`, `{%` or a `{# #}` comment, i.e. needs rendering. */
export { hasTemplate } from './parse.js';

const MAX_DEPTH = 10;

function toMap<T>(record: Record<string, T>): Map<string, T> {
  return new Map(Object.entries(record));
}

const REGISTRY: Registry = {
  functions: toMap<FunctionImpl>(FUNCTIONS),
  filters: toMap<FilterImpl>({ ...TEXT_FILTERS, ...DATA_FILTERS }),
  tests: toMap<TestImpl>(TESTS),
};

/** One-time async initialisation (loads jq's WebAssembly). Rendering works without it (JS jq fallback). */
export async function initExpressions(): Promise<void> {
  await initJq();
}

function maybeJson(value: string): unknown {
  const trimmed = value.trim();
  const looksJson = (trimmed.startsWith('[') && trimmed.endsWith(']')) || (trimmed.startsWith('{') && trimmed.endsWith('}'));
  if (!looksJson) return value;
  try {
    return JSON.parse(trimmed);
  } catch {
    return value;
  }
}

function wrapError(error: unknown, template: string): ExpressionError {
  const short = excerpt(template);
  if (error instanceof ExpressionError) {
    return error.message.includes(short) ? error : new ExpressionError(`${error.message} in \`${short}\``);
  }
  const message = error instanceof RangeError ? 'expression too deeply nested' : (error as Error)?.message ?? String(error);
  return new ExpressionError(`Error rendering \`${short}\`: ${message}`);
}

export function createRenderer(services: RenderServices = {}): Renderer {
  function evaluator(template: string, vars: Record<string, unknown>, depth: number): Evaluator {
    if (depth > MAX_DEPTH) throw new ExpressionError('render(): maximum nesting depth exceeded');
    const ctx: CallContext = {
      vars,
      services,
      render: (inner) => renderAt(inner, vars, depth + 1),
      lookup: (name) => ev.lookupName(name),
    };
    const ev = new Evaluator(REGISTRY, template, vars, ctx);
    return ev;
  }

  function renderAt(template: string, vars: Record<string, unknown>, depth: number): string {
    if (!hasTemplate(template)) return template;
    try {
      return evaluator(template, vars, depth).renderRoot(parseTemplate(template).root);
    } catch (error) {
      throw wrapError(error, template);
    }
  }

  function renderTyped(value: unknown, vars: Record<string, unknown>): unknown {
    if (typeof value !== 'string') return renderValue(value, vars);
    if (!hasTemplate(value)) return maybeJson(value);
    let result: unknown;
    try {
      const parsed = parseTemplate(value);
      const ev = evaluator(value, vars, 0);
      result = parsed.single ? ev.eval(parsed.single) : ev.renderRoot(parsed.root);
    } catch (error) {
      throw wrapError(error, value);
    }
    if (result instanceof Date) return result.toISOString();
    return typeof result === 'string' ? maybeJson(result) : result ?? null;
  }

  function renderValue<T>(value: T, vars: Record<string, unknown>): T {
    if (typeof value === 'string') return renderAt(value, vars, 0) as T;
    if (Array.isArray(value)) return value.map((item) => renderValue(item, vars)) as T;
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[renderAt(key, vars, 0)] = renderValue(item, vars);
      return out as T;
    }
    return value;
  }

  return { render: (template, vars) => renderAt(template, vars, 0), renderTyped, renderValue };
}
