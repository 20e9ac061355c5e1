// Completions for the flow editor from the flow JSON schema the engine validates with (GET /plugins/schemas/flow):
// property names of the mapping being typed (a task's per its `type`), enum values (task and trigger `type`s, log
// levels...) and booleans for a value. Pure: schema walking over a YamlContext (yaml-context.ts), no editor.
// Relative imports name the .js file: the root tsconfig compiles this module too, through the editor's tests.
import type { JsonSchema } from '../../api.js';
import { ITEM, type YamlContext } from './yaml-context.js';

export interface SchemaCompletion {
  label: string;
  /** Text inserted (a key gets `: ` after it). */
  apply: string;
  kind: 'property' | 'value';
  detail?: string;
  info?: string;
  /** A property the schema requires: listed first. */
  required?: boolean;
}

const MAX_REF_HOPS = 32;

/** Follows `$ref`s (`#/definitions/x`) within `root`. */
export function deref(root: JsonSchema, schema: JsonSchema | undefined): JsonSchema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < MAX_REF_HOPS; i++) {
    const m = /^#\/definitions\/(.+)$/.exec(s.$ref);
    s = m ? root.definitions?.[decodeURIComponent(m[1]!)] : undefined;
  }
  return s;
}

/** The values a `type` property may take in an `if` (enum or const), for the discriminated branches. */
function ifTypes(cond: JsonSchema | undefined): unknown[] {
  const t = cond?.properties?.type;
  if (!t) return [];
  return t.enum ?? (t.const !== undefined ? [t.const] : []);
}

/**
 * The properties of an object schema: its own, then those of each `allOf` branch whose `if` matches the mapping's
 * `type` (or of every branch when the type is not known, first one winning).
 */
export function objectProperties(root: JsonSchema, schema: JsonSchema | undefined, siblings: Record<string, string> = {}): { properties: Record<string, JsonSchema>; required: Set<string> } {
  const s = deref(root, schema);
  const properties: Record<string, JsonSchema> = { ...(s?.properties ?? {}) };
  const required = new Set(s?.required ?? []);
  const type = siblings.type;
  for (const branch of s?.allOf ?? []) {
    const types = ifTypes(branch.if);
    const matches = type !== undefined && type !== '' ? types.includes(type) : false;
    if (!matches && (type !== undefined && type !== '')) continue;
    const then = deref(root, branch.then);
    for (const [k, v] of Object.entries(then?.properties ?? {})) {
      if (matches || !(k in properties)) properties[k] = v;
    }
    if (matches) for (const r of then?.required ?? []) required.add(r);
  }
  return { properties, required };
}

/**
 * The schema of what sits at `path` below the flow's root schema (`[]` steps into a list's items). The `type` of the
 * mappings on the way is not known here, so a key is looked up in every branch of a discriminated object.
 */
export function schemaAtPath(root: JsonSchema, path: string[]): JsonSchema | undefined {
  let s = deref(root, root);
  for (const seg of path) {
    if (!s) return undefined;
    s = deref(root, seg === ITEM ? s.items : objectProperties(root, s).properties[seg]);
  }
  return s;
}

const typeText = (s: JsonSchema | undefined): string | undefined =>
  s ? (Array.isArray(s.type) ? s.type.join(' | ') : s.type ?? (s.enum ? 'enum' : s.$ref ? 'object' : undefined)) : undefined;

function propertyCompletions(root: JsonSchema, schema: JsonSchema | undefined, siblings: Record<string, string>): SchemaCompletion[] {
  const { properties, required } = objectProperties(root, schema, siblings);
  return Object.entries(properties)
    .filter(([k]) => !(k in siblings))
    .map(([k, v]) => {
      const d = deref(root, v);
      return {
        label: k, apply: `${k}: `, kind: 'property' as const, detail: typeText(d), info: d?.description ?? v.description,
        required: required.has(k),
      };
    })
    .sort((a, b) => Number(!!b.required) - Number(!!a.required) || a.label.localeCompare(b.label));
}

function valueCompletions(root: JsonSchema, owner: JsonSchema | undefined, value: JsonSchema | undefined, key: string | undefined): SchemaCompletion[] {
  const s = deref(root, value);
  const values: unknown[] = [...(s?.enum ?? [])];
  if (values.length === 0 && key === 'type') {
    // A type without an enum (triggers: a pattern) still lists the types its branches know.
    for (const branch of deref(root, owner)?.allOf ?? []) values.push(...ifTypes(branch.if));
  }
  const types = Array.isArray(s?.type) ? s!.type : s?.type ? [s.type] : [];
  if (types.includes('boolean')) values.push(true, false);
  return [...new Set(values.map(String))].map((v) => ({ label: v, apply: v, kind: 'value' as const, detail: key }));
}

/** What may be typed at `ctx` according to the flow schema `root`. */
export function schemaCompletions(root: JsonSchema, ctx: YamlContext): SchemaCompletion[] {
  const holder = schemaAtPath(root, ctx.path);
  if (ctx.kind === 'value') {
    const { properties } = objectProperties(root, holder, ctx.siblings);
    return valueCompletions(root, holder, ctx.key === undefined ? undefined : properties[ctx.key], ctx.key);
  }
  if (ctx.kind === 'item') {
    const item = deref(root, holder);
    const isObject = item?.properties || item?.allOf || item?.type === 'object';
    return isObject ? propertyCompletions(root, item, ctx.siblings) : valueCompletions(root, undefined, item, undefined);
  }
  return propertyCompletions(root, holder, ctx.siblings);
}
