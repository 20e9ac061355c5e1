// Structured output: checks a request's JSON schema, turns it into node-llama-cpp's grammar subset, and
// validates every generated answer with ajv (grammars admit things a schema rejects, such as 1e5 for integers).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
addFormats(ajv);
const cache = new Map<string, ValidateFunction>();

/** Compiles (and caches) a schema; throws an Error whose message says what is wrong with it. */
export function compileSchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('must be a JSON schema object');
  const key = JSON.stringify(schema);
  let v = cache.get(key);
  if (!v) {
    if (!ajv.validateSchema(schema)) throw new Error(ajv.errorsText(ajv.errors));
    v = ajv.compile(schema);
    cache.set(key, v);
  }
  return v;
}

export type Checked = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses a generated answer and validates it against the schema. */
export function checkAnswer(schema: Record<string, unknown>, text: string): Checked {
  let value: unknown;
  try { value = JSON.parse(text); } catch (e) { return { ok: false, error: `not JSON: ${(e as Error).message}` }; }
  const v = compileSchema(schema);
  if (v(value)) return { ok: true, value };
  return { ok: false, error: ajv.errorsText(v.errors) };
}

const IMMUTABLE = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const DEMO_STRING_CAP = 24;
const DEMO_ITEMS_CAP = 3;

type S = Record<string, unknown>;
class Unsupported extends Error {}

/**
 * The node-llama-cpp GBNF subset of `schema`, or undefined when it cannot be expressed (the caller then
 * uses the generic JSON grammar and relies on validation). Constraint keywords the grammar lacks are dropped.
 * `demo` caps string and array lengths: random weights would otherwise rarely close a string.
 */
export function grammarSchemaFor(schema: Record<string, unknown>, demo: boolean): Record<string, unknown> | undefined {
  try { return convert(schema, demo, true); } catch (e) { if (e instanceof Unsupported) return undefined; throw e; }
}

function convert(s: S, demo: boolean, root = false): S {
  if (typeof s !== 'object' || s === null) throw new Unsupported();
  const out: S = {};
  if (root && s.$defs) out.$defs = Object.fromEntries(Object.entries(s.$defs as S).map(([k, v]) => [k, convert(v as S, demo)]));
  if (s.description) out.description = s.description;
  if (s.$ref !== undefined) return { ...out, $ref: s.$ref };
  if (s.const !== undefined) return { ...out, const: s.const };
  if (Array.isArray(s.enum)) return { ...out, enum: s.enum };
  const alts = (s.oneOf ?? s.anyOf) as S[] | undefined;
  if (alts) return { ...out, oneOf: alts.map((a) => convert(a, demo)) };
  if (s.allOf || s.not || s.if) throw new Unsupported();
  const type = s.type ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  if (type === undefined) throw new Unsupported();
  if (Array.isArray(type)) {
    if (!type.every((t) => IMMUTABLE.has(t as string))) throw new Unsupported();
    return { ...out, type };
  }
  if (type === 'object') return { ...out, ...objectSchema(s, demo) };
  if (type === 'array') return { ...out, ...arraySchema(s, demo) };
  if (type === 'string') return { ...out, ...stringSchema(s, demo) };
  if (type === 'integer' || type === 'number') return { ...out, ...boundedSchema(s, type) };
  if (!IMMUTABLE.has(type as string)) throw new Unsupported();
  return { ...out, type };
}

const MAX_ENUM_RANGE = 256;

/**
 * Bounded integers become an enum (grammars cannot bound numbers, enums they can): `minimum`/`maximum`, the exclusive
 * forms and `multipleOf`, when at most 256 values remain. A `number` whose `multipleOf` is an integer holds integers
 * only, so it is treated the same way. Anything wider keeps the plain integer/number grammar (validated afterwards).
 */
function boundedSchema(s: S, type: 'integer' | 'number'): S {
  const step = typeof s.multipleOf === 'number' && Number.isInteger(s.multipleOf) && s.multipleOf > 0 ? s.multipleOf : type === 'integer' ? 1 : undefined;
  if (step === undefined) return { type };
  const lows = [typeof s.minimum === 'number' ? Math.ceil(s.minimum) : undefined,
    typeof s.exclusiveMinimum === 'number' ? Math.floor(s.exclusiveMinimum) + 1 : undefined].filter((v) => v !== undefined) as number[];
  const highs = [typeof s.maximum === 'number' ? Math.floor(s.maximum) : undefined,
    typeof s.exclusiveMaximum === 'number' ? Math.ceil(s.exclusiveMaximum) - 1 : undefined].filter((v) => v !== undefined) as number[];
  if (!lows.length || !highs.length) return { type };
  const first = Math.ceil(Math.max(...lows) / step), last = Math.floor(Math.min(...highs) / step);
  if (last < first || last - first >= MAX_ENUM_RANGE) return { type };
  return { enum: Array.from({ length: last - first + 1 }, (_, i) => (first + i) * step) };
}

function objectSchema(s: S, demo: boolean): S {
  if (!s.properties) throw new Unsupported(); // free-form object: the generic JSON grammar fits better
  const props = Object.fromEntries(Object.entries((s.properties ?? {}) as S).map(([k, v]) => [k, convert(v as S, demo)]));
  const out: S = { type: 'object', properties: props, required: (s.required as string[] | undefined) ?? [] };
  if (s.additionalProperties === true && !demo) out.additionalProperties = true;
  return out;
}

function arraySchema(s: S, demo: boolean): S {
  const out: S = { type: 'array' };
  if (s.items && typeof s.items === 'object') out.items = convert(s.items as S, demo);
  if (Array.isArray(s.prefixItems)) out.prefixItems = (s.prefixItems as S[]).map((p) => convert(p, demo));
  if (typeof s.minItems === 'number') out.minItems = s.minItems;
  const max = typeof s.maxItems === 'number' ? s.maxItems : undefined;
  const cap = demo ? Math.max(DEMO_ITEMS_CAP, (out.minItems as number | undefined) ?? 0) : undefined;
  if (max !== undefined || cap !== undefined) out.maxItems = Math.min(max ?? Infinity, cap ?? Infinity);
  return out;
}

function stringSchema(s: S, demo: boolean): S {
  if (s.format === 'date-time' || s.format === 'date' || s.format === 'time') return { type: 'string', format: s.format };
  const out: S = { type: 'string' };
  if (typeof s.minLength === 'number') out.minLength = s.minLength;
  const max = typeof s.maxLength === 'number' ? s.maxLength : undefined;
  const cap = demo ? Math.max(DEMO_STRING_CAP, (out.minLength as number | undefined) ?? 0) : undefined;
  if (max !== undefined || cap !== undefined) out.maxLength = Math.min(max ?? Infinity, cap ?? Infinity);
  return out;
}
