// The flow JSON Schema turned into a Kubernetes structural openAPIV3Schema (for the Flow CRD's spec):
// $refs inlined, per-type dispatch (if/then) dropped in favour of x-kubernetes-preserve-unknown-fields on tasks,
// triggers and conditions, union types made int-or-string or opaque. Full validation stays with validateFlow.
import type { Schema } from './schema-common.js';
import { flowJsonSchema } from './schema-flow.js';
import { crdRequiredOf } from './schema-roles.js';
import { PREFIX } from './task-types.js';

type Defs = Record<string, Schema>;

const PRESERVE = { 'x-kubernetes-preserve-unknown-fields': true } as const;
/** Keywords a structural schema may keep as they are. */
const KEPT = ['description', 'enum', 'pattern', 'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'required'];
/** Formats Kubernetes knows; ours (iso-duration, template) are dropped. */
const K8S_FORMATS = new Set(['date-time', 'date', 'uri', 'email', 'uuid', 'int32', 'int64', 'byte']);

function deref(schema: Schema, defs: Defs): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return deref(defs[ref.replace('#/definitions/', '')] ?? {}, defs);
}

function unionType(types: string[], schema: Schema): Schema {
  const set = new Set(types);
  if (set.size === 2 && set.has('string') && set.has('integer')) {
    return { 'x-kubernetes-int-or-string': true, ...(schema.description ? { description: schema.description } : {}) };
  }
  return { ...PRESERVE };
}

/** Does the object's shape depend on its `type` (an `if … then <more than required>` dispatch)? */
function isDispatched(s: Schema): boolean {
  return Array.isArray(s.allOf) && s.allOf.some((a) => {
    const then = (a as Schema).then as Schema | undefined;
    return then !== undefined && Object.keys(then).some((k) => k !== 'required');
  });
}

/** Plugin type names are normalized by the operator, so the CRD must accept Kestra aliases too. */
function isPluginTypeCheck(s: Schema): boolean {
  const values = Array.isArray(s.enum) ? s.enum : [];
  return values.some((v) => typeof v === 'string' && v.startsWith(PREFIX))
    || (typeof s.pattern === 'string' && s.pattern.startsWith('^ai\\.service'));
}

function convertObject(s: Schema, defs: Defs, out: Schema): Schema {
  if (isDispatched(s)) return { ...out, ...PRESERVE };
  const props = s.properties as Defs | undefined;
  if (props) out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toStructural(v, defs)]));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    if (!props) out.additionalProperties = toStructural(s.additionalProperties as Schema, defs);
  }
  // Objects whose real shape depends on their `type` field, or free-form maps, keep unknown fields.
  if ((!props && !out.additionalProperties) || (props && s.additionalProperties === undefined)) {
    Object.assign(out, PRESERVE);
  }
  return out;
}

/** Structural openAPIV3 version of one JSON Schema node. */
export function toStructural(schema: Schema, defs: Defs = {}): Schema {
  const s = deref(schema, defs);
  if (Array.isArray(s.type)) return unionType(s.type as string[], s);
  if (s.type === undefined) return { ...PRESERVE };
  const out: Schema = { type: s.type };
  const pluginType = isPluginTypeCheck(s);
  for (const k of KEPT) if (s[k] !== undefined && !(pluginType && (k === 'enum' || k === 'pattern'))) out[k] = s[k];
  const required = crdRequiredOf(s);
  if (required) out.required = required;
  if (typeof s.format === 'string' && K8S_FORMATS.has(s.format)) out.format = s.format;
  if (s.type === 'array') out.items = s.items ? toStructural(s.items as Schema, defs) : { ...PRESERVE };
  if (s.type === 'object') return convertObject(s, defs, out);
  return out;
}

/** openAPIV3Schema of a Flow CR's `spec` (the flow document itself). */
export function flowCrdSchema(): Schema {
  const schema = flowJsonSchema();
  return toStructural(schema, schema.definitions as Defs);
}
