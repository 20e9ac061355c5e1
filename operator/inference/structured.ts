// Structured output: checks a request's JSON schema and validates every generated answer with ajv (the grammar of
// gbnf.ts enforces what it can during generation; what it relaxes, such as lookaround patterns, is checked here).
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
