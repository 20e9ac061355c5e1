// Functions callable from templates (`now()`, `render()`, `secret()`, `kv()`, `currentEachOutput()`...)
// and Pebble tests (`is empty`, `is even`...). Services come from the caller's RenderServices.
import { randomInt, randomUUID } from 'node:crypto';
import YAML from 'yaml';
import { parseJsonSafe } from '../core/keyed.js';
import { arg, int, requireString, str } from './args.js';
import { nowIso } from './dates.js';
import { ExpressionError } from './errors.js';
import { fileTarget, flowNamespace } from './functions-files.js';
import type { CallContext, FunctionImpl, Kwargs, TestImpl } from './evaluate.js';
import { UNDEF, isEmpty, isPlainObject, makeMap, memberLookup, stringify, toNumber } from './values.js';
import { withinBudget } from './watchdog.js';

const MAX_RENDER_PASSES = 10;
/** YAML texts longer than this are parsed under the render's watchdog (the parser is pure JS: ~1 ms per 10 kB). */
const YAML_DIRECT_CHARS = 64 * 1024;

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return parseJsonSafe(value);
  } catch (error) {
    // V8 quotes the start of the text (`"s3cr3t-val"... is not valid JSON`): a prefix of a secret no masker can find.
    throw new ExpressionError(`json: invalid JSON (${(error as Error).message.replace(/, (?:\.\.\.)?"[^]*"(?:\.\.\.)? is not valid JSON$/, '')})`);
  }
}

/** Converts what YAML tags may produce (Map, Set, Date, bytes) into plain template data. */
function toData(value: unknown): unknown {
  if (Array.isArray(value) || value instanceof Set) return [...value].map(toData);
  if (value instanceof Map) return makeMap([...value].map(([k, v]) => [stringify(k), toData(v)]));
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (isPlainObject(value)) return makeMap(Object.entries(value).map(([k, v]) => [k, toData(v)]));
  return value;
}

function parseYaml(value: unknown, ctx: CallContext): unknown {
  if (typeof value !== 'string') return value;
  const parse = (): unknown => {
    try {
      return YAML.parse(value);
    } catch (error) {
      throw new ExpressionError(`yaml: invalid YAML (${(error as Error).message})`);
    }
  };
  return toData(value.length > YAML_DIRECT_CHARS ? withinBudget(ctx.budget, parse, 'took too long parsing YAML') : parse());
}

function render(args: unknown[], kwargs: Kwargs, ctx: CallContext, recursiveDefault: boolean): unknown {
  const template = arg(args, kwargs, 0, 'expression');
  if (typeof template !== 'string') return template ?? null;
  const recursive = arg(args, kwargs, 1, 'recursive') ?? recursiveDefault;
  let current = ctx.render(template);
  for (let pass = 1; recursive === true && pass < MAX_RENDER_PASSES; pass++) {
    const next = ctx.render(current);
    if (next === current) return current;
    current = next;
  }
  return current;
}

function secret(args: unknown[], kwargs: Kwargs, ctx: CallContext): string {
  const name = requireString(arg(args, kwargs, 0, 'key'), 'secret');
  if (!ctx.services.secret) throw new ExpressionError('secret() is not available here');
  const value = ctx.services.secret(name);
  if (value === undefined) throw new ExpressionError(`Secret \`${name}\` not found`);
  ctx.services.onSecret?.(value);
  return value;
}

/**
 * Kestra's `env(name, default)`: the `envs` variable's entry `name` (only what FLOW_ENV_VARS_PREFIX exposes; see
 * operator/secrets/exposed-env.ts), else `default` (null) when it is missing or empty.
 */
function env(args: unknown[], kwargs: Kwargs, ctx: CallContext): unknown {
  const name = requireString(arg(args, kwargs, 0, 'name'), 'env');
  const fallback = arg(args, kwargs, 1, 'default') ?? null;
  const envs = ctx.vars.envs;
  if (!envs || typeof envs !== 'object' || !Object.hasOwn(envs, name)) return fallback;
  const value = (envs as Record<string, unknown>)[name];
  return value === undefined || value === null || value === '' ? fallback : value;
}

function kv(args: unknown[], kwargs: Kwargs, ctx: CallContext): unknown {
  const key = requireString(arg(args, kwargs, 0, 'key'), 'kv');
  const namespace = arg(args, kwargs, 1, 'namespace') ?? flowNamespace(ctx);
  const errorOnMissing = arg(args, kwargs, 2, 'errorOnMissing') ?? true;
  if (!ctx.services.kv) throw new ExpressionError('kv() is not available here');
  if (typeof namespace !== 'string') throw new ExpressionError(`kv: no namespace for key \`${key}\``);
  const hit = ctx.services.kv(namespace, key);
  if (hit.found) return hit.value ?? null;
  if (errorOnMissing === false) return null;
  throw new ExpressionError(`KV key \`${key}\` not found in namespace \`${namespace}\``);
}

/** `read('kestra:///...')` reads an internal-storage file; `read('a/b.txt'[, namespace])` a namespace file (Kestra). */
function read(args: unknown[], kwargs: Kwargs, ctx: CallContext): string {
  const { path, namespace } = fileTarget('read', args, kwargs, ctx);
  if (!ctx.services.read) throw new ExpressionError('read() is not available here');
  return ctx.services.read(path, namespace);
}

/** The loop values from the outermost parent down to the current task run. */
function loopValues(ctx: CallContext): unknown[] {
  const values: unknown[] = [];
  const valueOf = (holder: unknown): unknown => {
    const taskrun = isPlainObject(holder) ? memberLookup(holder, 'taskrun', 'taskrun') : UNDEF;
    return isPlainObject(taskrun) ? memberLookup(taskrun, 'value', 'taskrun.value') : UNDEF;
  };
  const parents = ctx.lookup('parents');
  if (Array.isArray(parents)) {
    for (const parent of [...parents].reverse()) {
      const value = valueOf(parent);
      if (value !== UNDEF && value !== null) values.push(value);
    }
  }
  const current = ctx.lookup('taskrun');
  const value = isPlainObject(current) ? memberLookup(current, 'value', 'taskrun.value') : UNDEF;
  if (value !== UNDEF && value !== null) values.push(value);
  return values;
}

function currentEachOutput(args: unknown[], _kwargs: Kwargs, ctx: CallContext): unknown {
  let current = args[0];
  for (const value of loopValues(ctx)) {
    const key = stringify(value);
    if (!isPlainObject(current) || !Object.prototype.hasOwnProperty.call(current, key)) {
      throw new ExpressionError(`currentEachOutput: no output for loop value \`${key}\``);
    }
    current = memberLookup(current, key, key);
  }
  return current;
}

/** Bytes one number of a list counts in the rendering's size budget (its 8 bytes and a separator). */
const RANGE_ITEM_BYTES = 9;

function range(args: unknown[], kwargs: Kwargs, ctx: CallContext): number[] {
  const start = int(arg(args, kwargs, 0, 'start'), 'range');
  const end = int(arg(args, kwargs, 1, 'end'), 'range');
  const step = int(arg(args, kwargs, 2, 'increment'), 'range', 1);
  if (step === 0) throw new ExpressionError('range: increment must not be 0');
  // Refused before it is built: a range is bounded by the size budget of the rendering (EXPRESSION_MAX_BYTES).
  const count = Math.floor(Math.abs((end - start) / step)) + 1;
  if (count * RANGE_ITEM_BYTES > ctx.budget.maxBytes) throw ctx.budget.tooBig(`would build range(${start}, ${end}) of ${count} items`);
  const out: number[] = [];
  for (let i = start; step > 0 ? i <= end : i >= end; i += step) out.push(i);
  return out;
}

function extreme(pick: 'max' | 'min'): FunctionImpl {
  return (args) => {
    const list = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
    if (list.length === 0) return null;
    const nums = list.map((x) => toNumber(x, pick));
    return pick === 'max' ? Math.max(...nums) : Math.min(...nums);
  };
}

export const FUNCTIONS: Record<string, FunctionImpl> = {
  now: (args, kwargs, ctx) => nowIso(ctx.services.now?.() ?? new Date(), arg(args, kwargs, 0, 'timeZone')),
  json: (args) => parseJson(args[0]),
  fromJson: (args) => parseJson(args[0]),
  toJson: (args) => JSON.stringify(args[0] ?? null),
  yaml: (args, _kwargs, ctx) => parseYaml(args[0], ctx),
  fromYaml: (args, _kwargs, ctx) => parseYaml(args[0], ctx),
  render: (args, kwargs, ctx) => render(args, kwargs, ctx, true),
  renderOnce: (args, kwargs, ctx) => render(args, kwargs, ctx, false),
  secret,
  env,
  kv,
  read,
  currentEachOutput,
  range,
  max: extreme('max'),
  min: extreme('min'),
  uuid: () => randomUUID(),
  randomInt: (args, kwargs) => randomInt(int(arg(args, kwargs, 0, 'lower'), 'randomInt'), int(arg(args, kwargs, 1, 'upper'), 'randomInt')),
  printContext: (_args, _kwargs, ctx) => JSON.stringify(ctx.vars),
  length: (args) => (typeof args[0] === 'string' || Array.isArray(args[0]) ? args[0].length : null),
  string: (args) => str(args[0], 'string'),
};

function isJson(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    JSON.parse(value);
    return true;
  } catch {
    return false;
  }
}

export const TESTS: Record<string, TestImpl> = {
  empty: (value) => isEmpty(value),
  even: (value) => toNumber(value, 'even') % 2 === 0,
  odd: (value) => Math.abs(toNumber(value, 'odd') % 2) === 1,
  iterable: (value) => Array.isArray(value) || isPlainObject(value),
  json: isJson,
  map: (value) => isPlainObject(value),
  list: (value) => Array.isArray(value),
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number',
  boolean: (value) => typeof value === 'boolean',
};
