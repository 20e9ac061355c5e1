// Public entry of the expression engine: a sandboxed, Pebble-compatible (Kestra) template renderer.
// Pure: secrets, KV and file reads come in as synchronous callbacks (RenderServices); each top-level call runs under
// one budget of time and size (EXPRESSION_TIMEOUT_MS, EXPRESSION_MAX_BYTES) shared by nested render() and jq.
import { Settings } from 'luxon';
import { dict, parseJsonSafe } from '../core/keyed.js';
import { LimitError } from '../core/limits.js';
import { Budget, DEFAULT_RENDER_LIMITS, type RenderLimits } from './budget.js';
import { ExpressionError, excerpt } from './errors.js';
import { Evaluator, type CallContext } from './evaluate.js';
import { initJq } from './jq.js';
import { hasTemplate, parseTemplate } from './parse.js';
import { REGISTRY } from './registry.js';
import type { RenderServices, Renderer } from './types.js';
import { isPlainObject } from './values.js';

export { ExpressionError } from './errors.js';
export type { RenderLimits } from './budget.js';
export type { RenderServices, Renderer } from './types.js';
/** True when a string holds `{{`, `{%` or a `{# #}` comment, i.e. needs rendering. */
export { hasTemplate } from './parse.js';
export { checkTemplate } from './check.js';
export { compileRegex, fullMatch, regexIssue, regexTest, RE2_SYNTAX } from './regex.js';

const MAX_DEPTH = 10;

/** One-time async initialisation: loads jq's WebAssembly. Until it resolves, `jq()` fails with a clear error. */
export async function initExpressions(): Promise<void> {
  await initJq();
}

function maybeJson(value: string): unknown {
  const trimmed = value.trim();
  const looksJson = (trimmed.startsWith('[') && trimmed.endsWith(']')) || (trimmed.startsWith('{') && trimmed.endsWith('}'));
  if (!looksJson) return value;
  try {
    return parseJsonSafe(trimmed);
  } catch {
    return value;
  }
}

function wrapError(error: unknown, template: string, budget: Budget): Error {
  if (error instanceof LimitError) return error;
  const short = excerpt(template);
  if (error instanceof ExpressionError) {
    return error.message.includes(short) ? error : new ExpressionError(`${error.message} in \`${short}\``);
  }
  if (error instanceof RangeError && /Invalid (string|array|typed array) length/.test(error.message)) {
    return budget.tooBig('built a value larger than the host allows');
  }
  const message = error instanceof RangeError ? 'expression too deeply nested' : (error as Error)?.message ?? String(error);
  return new ExpressionError(`Error rendering \`${short}\`: ${message}`);
}

/** `limits` defaults to DEFAULT_LIMITS (expressionTimeoutMs, expressionMaxBytes of core/limits.ts). */
export function createRenderer(services: RenderServices = {}, limits: Partial<RenderLimits> = {}): Renderer {
  const budgetLimits: RenderLimits = { ...DEFAULT_RENDER_LIMITS, ...limits };
  const injectedNow = services.now;
  const nowMillis = injectedNow ? () => injectedNow().getTime() : undefined;
  /** The budget of the top-level call in progress; calls made while it runs (render(), a service) share it. */
  let active: Budget | null = null;
  let luxonNow = Settings.now;

  /** Starts a top-level call: a new budget, and luxon's "now" (dates parsed without a day) is the injected clock. */
  function enter(): Budget {
    active = new Budget(budgetLimits);
    if (nowMillis) {
      luxonNow = Settings.now;
      Settings.now = nowMillis;
    }
    return active;
  }

  function leave(): void {
    active = null;
    if (nowMillis) Settings.now = luxonNow;
  }

  function evaluator(template: string, vars: Record<string, unknown>, depth: number, budget: Budget): Evaluator {
    if (depth > MAX_DEPTH) throw new ExpressionError('render(): maximum nesting depth exceeded');
    const ctx: CallContext = {
      vars,
      services,
      budget,
      render: (inner) => renderAt(inner, vars, depth + 1, budget),
      lookup: (name) => ev.lookupName(name),
    };
    const ev = new Evaluator(REGISTRY, template, vars, ctx);
    return ev;
  }

  function renderAt(template: string, vars: Record<string, unknown>, depth: number, budget: Budget): string {
    if (!hasTemplate(template)) return template;
    const outer = budget.template;
    budget.template = template;
    try {
      return evaluator(template, vars, depth, budget).renderRoot(parseTemplate(template).root);
    } catch (error) {
      throw wrapError(error, template, budget);
    } finally {
      budget.template = outer;
    }
  }

  function renderTypedIn(value: unknown, vars: Record<string, unknown>, budget: Budget): unknown {
    if (typeof value !== 'string') return renderValueIn(value, vars, budget);
    if (!hasTemplate(value)) return maybeJson(value);
    let result: unknown;
    budget.template = value;
    try {
      const parsed = parseTemplate(value);
      const ev = evaluator(value, vars, 0, budget);
      result = parsed.single ? ev.eval(parsed.single) : ev.renderRoot(parsed.root);
    } catch (error) {
      throw wrapError(error, value, budget);
    }
    if (result instanceof Date) return result.toISOString();
    return typeof result === 'string' ? maybeJson(result) : result ?? null;
  }

  function renderValueIn<T>(value: T, vars: Record<string, unknown>, budget: Budget): T {
    budget.step();
    if (typeof value === 'string') return renderAt(value, vars, 0, budget) as T;
    if (Array.isArray(value)) return value.map((item) => renderValueIn(item, vars, budget)) as T;
    if (isPlainObject(value)) {
      const out = dict();
      for (const [key, item] of Object.entries(value)) out[renderAt(key, vars, 0, budget)] = renderValueIn(item, vars, budget);
      return out as T;
    }
    return value;
  }

  // Each entry point shares the budget of a call in progress, else starts its own (written out: no closure per call).
  return {
    render(template, vars) {
      if (active) return renderAt(template, vars, 0, active);
      if (!hasTemplate(template)) return template;
      try {
        return renderAt(template, vars, 0, enter());
      } finally {
        leave();
      }
    },
    renderTyped(value, vars) {
      if (active) return renderTypedIn(value, vars, active);
      try {
        return renderTypedIn(value, vars, enter());
      } finally {
        leave();
      }
    },
    renderValue(value, vars) {
      if (active) return renderValueIn(value, vars, active);
      try {
        return renderValueIn(value, vars, enter());
      } finally {
        leave();
      }
    },
  };
}
