// CRD handling: load apiextensions.k8s.io/v1 CRDs from YAML, check they are structural, and turn each version's
// openAPIV3Schema into pruning + defaulting + ajv validation that reports causes the way the real server does.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parseAllDocuments } from 'yaml';
import type { StatusCause } from './errors.js';
import { STD_VERBS, type KubeObject, type ResourceType } from './resources.js';

type Schema = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Every CustomResourceDefinition found in the *.yaml / *.yml / *.json files of `dir` (not recursive). */
export function loadCrdFiles(dir: string): Schema[] {
  const out: Schema[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!/\.(ya?ml|json)$/.test(f)) continue;
    const text = readFileSync(join(dir, f), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) throw new Error(`${f}: ${doc.errors[0].message}`);
      const v = doc.toJS();
      if (v && v.kind === 'CustomResourceDefinition') out.push(v);
    }
  }
  return out;
}

/** Load and check every CRD of a directory (what CI does without a real apiserver); throws the first problem found. */
export function checkCrdDir(dir: string): string[] {
  const crds = loadCrdFiles(dir);
  for (const crd of crds) compileCrd(crd);
  return crds.map((c) => String(c.metadata?.name));
}

const FORBIDDEN = ['$ref', 'patternProperties', 'dependencies', 'additionalItems', 'definitions', '$schema', 'id'];

/** Throw an Error naming the CRD and the schema path when a node is not structural (what the real server refuses). */
function checkStructural(node: unknown, path: string, crd: string, root = false): void {
  const fail = (msg: string): never => { throw new Error(`CRD ${crd}: ${path}: ${msg}`); };
  if (!node || typeof node !== 'object' || Array.isArray(node)) fail('schema node must be an object');
  const n = node as Schema;
  const preserve = n['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = n['x-kubernetes-int-or-string'] === true;
  if (typeof n.type !== 'string' && !preserve && !intOrString) fail('type: Required value: must not be empty for specified fields (structural schema)');
  if (n.type !== undefined && !['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(n.type)) fail(`type: Unsupported value: "${n.type}"`);
  if (intOrString && n.type !== undefined) fail('type: must be empty when x-kubernetes-int-or-string is true');
  if (root && n.type !== 'object') fail('type: Invalid value: must be object at the root');
  for (const k of FORBIDDEN) if (n[k] !== undefined) fail(`${k}: Forbidden: ${k} is not supported`);
  if (n.uniqueItems === true) fail('uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic');
  if (n.properties !== undefined && n.additionalProperties !== undefined) {
    fail('additionalProperties: Forbidden: additionalProperties and properties are mutually exclusive');
  }
  if (n.type === 'array' && n.items === undefined) fail('items: Required value: must be specified');
  if (Array.isArray(n.items)) fail('items: Forbidden: items must be a schema object and not an array');
  checkListType(n, fail);
  for (const [k, v] of Object.entries(n.properties ?? {})) checkStructural(v, `${path}.properties[${k}]`, crd);
  if (n.additionalProperties && typeof n.additionalProperties === 'object') checkStructural(n.additionalProperties, `${path}.additionalProperties`, crd);
  if (n.items) checkStructural(n.items, `${path}.items`, crd);
}

const SCALARS = ['string', 'integer', 'number', 'boolean'];

/** x-kubernetes-list-type / list-map-keys rules the real server enforces on CRD schemas. */
function checkListType(n: Schema, fail: (msg: string) => never): void {
  const lt = n['x-kubernetes-list-type'];
  if (lt === undefined) {
    if (n['x-kubernetes-list-map-keys'] !== undefined) fail('x-kubernetes-list-map-keys: Forbidden: must only be used if x-kubernetes-list-type is map');
    return;
  }
  if (n.type !== 'array') fail('x-kubernetes-list-type: Invalid value: must only be used if type is array');
  if (!['atomic', 'set', 'map'].includes(lt)) fail(`x-kubernetes-list-type: Unsupported value: "${lt}": supported values: "atomic", "set", "map"`);
  const items: Schema = n.items ?? {};
  if (lt === 'set' && items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
    fail('items.x-kubernetes-map-type: Invalid value: must be atomic as item of a list with x-kubernetes-list-type=set');
  }
  if (lt !== 'map') return;
  const keys = n['x-kubernetes-list-map-keys'];
  if (!Array.isArray(keys) || keys.length === 0) fail('x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map');
  if (items.type !== 'object') fail('items.type: Invalid value: must be object if parent array\'s x-kubernetes-list-type is map');
  for (const k of keys as string[]) {
    const p: Schema | undefined = items.properties?.[k];
    if (!p) fail(`x-kubernetes-list-map-keys: Invalid value: "${k}": entries must all be names of item properties`);
    if (!SCALARS.includes(p!.type)) fail(`items.properties[${k}].type: Invalid value: must be a scalar type if parent array's x-kubernetes-list-type is map`);
    if (!(items.required ?? []).includes(k) && p!.default === undefined) {
      fail(`items.properties[${k}]: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`);
    }
  }
}

/** Duplicate entries of `set` / `map` lists (ajv cannot see them), as FieldValueDuplicate causes. */
function listDuplicates(value: unknown, n: Schema | undefined, path: string, out: StatusCause[]): void {
  if (!n || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    const lt = n['x-kubernetes-list-type'];
    if (lt === 'set' || lt === 'map') {
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const keyOf = lt === 'map' && isPlain(item) ? Object.fromEntries((n['x-kubernetes-list-map-keys'] as string[]).map((k) => [k, item[k]])) : item;
        const k = JSON.stringify(keyOf);
        if (seen.has(k)) out.push({ reason: 'FieldValueDuplicate', field: `${path}[${i}]`, message: `Duplicate value: ${k}` });
        seen.add(k);
      });
    }
    value.forEach((item, i) => listDuplicates(item, n.items, `${path}[${i}]`, out));
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const child = n.properties?.[k] ?? (isPlain(n.additionalProperties) ? n.additionalProperties : undefined);
    listDuplicates(v, child, path ? `${path}.${k}` : k, out);
  }
}

/** Structural schema → JSON Schema for ajv (defaults are applied by `applyPruneAndDefaults`, not ajv). */
export function toJsonSchema(n: Schema, formats: Set<string>, root = false): Schema {
  const out: Schema = {};
  let types: string[] | undefined = n['x-kubernetes-int-or-string'] ? ['integer', 'string'] : typeof n.type === 'string' ? [n.type] : undefined;
  if (types && n.nullable) types = [...types, 'null'];
  if (types) out.type = types.length === 1 ? types[0] : types;
  for (const k of ['pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'multipleOf', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'required']) {
    if (n[k] !== undefined) out[k] = n[k];
  }
  if (n.enum !== undefined) out.enum = n.nullable ? [...n.enum, null] : n.enum;
  if (n.exclusiveMinimum === true && n.minimum !== undefined) { out.exclusiveMinimum = n.minimum; delete out.minimum; }
  if (n.exclusiveMaximum === true && n.maximum !== undefined) { out.exclusiveMaximum = n.maximum; delete out.maximum; }
  if (typeof n.format === 'string' && !(n['x-kubernetes-int-or-string'])) { out.format = n.format; formats.add(n.format); }
  if (n.properties) {
    out.properties = {};
    for (const [k, v] of Object.entries(n.properties as Record<string, Schema>)) {
      if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      out.properties[k] = toJsonSchema(v, formats);
    }
  }
  if (n.additionalProperties && typeof n.additionalProperties === 'object') out.additionalProperties = toJsonSchema(n.additionalProperties, formats);
  if (n.items && typeof n.items === 'object') out.items = toJsonSchema(n.items, formats);
  for (const k of ['anyOf', 'allOf', 'oneOf']) if (Array.isArray(n[k])) out[k] = n[k].map((b: Schema) => toJsonSchema(b, formats));
  if (n.not) out.not = toJsonSchema(n.not, formats);
  return out;
}

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Remove fields the schema does not know (unless preserve-unknown-fields) and fill `default`s, in place; the paths of
 *  removed fields are appended to `pruned` (`.spec.foo`, `.spec.tasks[0].bar`, as the real server's warnings say). */
export function applyPruneAndDefaults(value: unknown, n: Schema | undefined, root = false, pruned: string[] = [], path = ''): string[] {
  if (!n) return pruned;
  if (Array.isArray(value)) {
    if (n.items) value.forEach((item, i) => applyPruneAndDefaults(item, n.items, false, pruned, `${path}[${i}]`));
    return pruned;
  }
  if (!isPlain(value)) return pruned;
  if (n['x-kubernetes-embedded-resource'] && !n.properties) return pruned;
  const props: Record<string, Schema> | undefined = n.properties;
  const preserve = n['x-kubernetes-preserve-unknown-fields'] === true;
  for (const key of Object.keys(value)) {
    if (root && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    if (n['x-kubernetes-embedded-resource'] && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
    const sub = `${path}.${key}`;
    if (props && props[key]) applyPruneAndDefaults(value[key], props[key], false, pruned, sub);
    else if (isPlain(n.additionalProperties)) applyPruneAndDefaults(value[key], n.additionalProperties, false, pruned, sub);
    else if (!preserve && n.additionalProperties !== true) { delete value[key]; pruned.push(sub); }
  }
  for (const [key, p] of Object.entries(props ?? {})) {
    if (value[key] === undefined && p.default !== undefined) {
      value[key] = structuredClone(p.default);
      applyPruneAndDefaults(value[key], p, false, pruned, `${path}.${key}`);
    }
  }
  return pruned;
}

/** `/spec/tasks/0/id` → `spec.tasks[0].id` */
export function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

const show = (v: unknown): string => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));
const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

function causeOf(e: ErrorObject): StatusCause {
  if (e.keyword === 'required') return { reason: 'FieldValueRequired', message: 'Required value', field: fieldPath(e.instancePath, String(e.params.missingProperty)) };
  const field = fieldPath(e.instancePath);
  if (e.keyword === 'type') {
    return { reason: 'FieldValueTypeInvalid', field, message: `Invalid value: "${typeName(e.data)}": ${field} in body must be of type ${[e.params.type].flat().join(',')}: ${show(e.data)}` };
  }
  if (e.keyword === 'enum') {
    return { reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${show(e.data)}: supported values: ${(e.params.allowedValues as unknown[]).map(show).join(', ')}` };
  }
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${show(e.data)}: ${field} in body ${e.message ?? 'is invalid'}` };
}

/** Go-style durations (`1h30m`, `500ms`), as Kubernetes' `duration` format accepts; ISO 8601 too. */
const GO_DURATION = /^-?((\d+(\.\d+)?)(ns|us|µs|ms|s|m|h))+$|^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

function makeAjv(formats: Set<string>): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true, verbose: true });
  addFormats(ajv);
  ajv.addFormat('duration', GO_DURATION);
  ajv.addFormat('int32', { type: 'number', validate: (x: number) => Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (x: number) => Number.isInteger(x) });
  ajv.addFormat('byte', /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  // Kubernetes ignores formats it does not know; so does this server.
  for (const f of formats) if (!ajv.formats[f]) ajv.addFormat(f, true);
  return ajv;
}

export interface CompiledVersion { schema: Schema; validate: ValidateFunction; status: boolean; }

/** Check and compile a CRD into a ResourceType; throws an Error naming the CRD and path when it is not acceptable. */
export function compileCrd(crd: Schema): ResourceType {
  const name = crd?.metadata?.name ?? '<unnamed>';
  const fail = (msg: string): never => { throw new Error(`CRD ${name}: ${msg}`); };
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1') fail(`apiVersion must be apiextensions.k8s.io/v1, got ${crd.apiVersion}`);
  const spec = crd.spec ?? fail('spec: Required value');
  const names = spec.names ?? fail('spec.names: Required value');
  if (!spec.group) fail('spec.group: Required value');
  if (!names.plural || !names.kind) fail('spec.names.plural and spec.names.kind are required');
  if (name !== `${names.plural}.${spec.group}`) fail(`metadata.name: must be spec.names.plural+"."+spec.group ("${names.plural}.${spec.group}")`);
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') fail('spec.scope: must be Namespaced or Cluster');
  const versions: Schema[] = spec.versions ?? [];
  if (versions.length === 0) fail('spec.versions: Required value');
  if (versions.filter((v) => v.storage).length !== 1) fail('spec.versions: exactly one version must be storage');
  const compiled = new Map<string, CompiledVersion>();
  versions.forEach((v, i) => {
    const s = v.schema?.openAPIV3Schema ?? fail(`spec.versions[${i}].schema.openAPIV3Schema: Required value`);
    checkStructural(s, `spec.versions[${i}].schema.openAPIV3Schema`, name, true);
    const formats = new Set<string>();
    const js = toJsonSchema(s, formats, true);
    compiled.set(v.name, { schema: s, validate: makeAjv(formats).compile(js), status: Boolean(v.subresources?.status) });
  });
  const served = versions.filter((v) => v.served !== false);
  const storage = versions.find((v) => v.storage)!;
  const ordered = [storage, ...served.filter((v) => v !== storage)].map((v) => v.name as string);
  const selectable: string[] = (storage.selectableFields ?? []).map((f: { jsonPath: string }) => f.jsonPath.replace(/^\./, ''));
  return {
    group: spec.group, versions: ordered, plural: names.plural, singular: names.singular ?? names.kind.toLowerCase(), kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`, namespaced: spec.scope === 'Namespaced', shortNames: names.shortNames ?? [],
    categories: names.categories, status: Boolean(storage.subresources?.status), verbs: STD_VERBS, fieldSelectors: selectable,
    customResource: true,
    defaults: (obj: KubeObject) => {
      const v = compiled.get(String(obj.apiVersion ?? '').split('/')[1] ?? '') ?? compiled.get(storage.name)!;
      return applyPruneAndDefaults(obj, v.schema, true);
    },
    validate: (obj: KubeObject, _old, version: string) => {
      const v = compiled.get(version) ?? compiled.get(storage.name)!;
      const dups: StatusCause[] = [];
      listDuplicates(obj, v.schema, '', dups);
      if (v.validate(obj)) return dups;
      const seen = new Set<string>();
      return [...(v.validate.errors ?? []).map(causeOf), ...dups].filter((c) => {
        const k = `${c.field}|${c.message}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    },
  };
}
