// Validation of custom resources against the generated CRD schemas without an API server (examples, tests): the
// structural openAPIV3Schema turned into a JSON Schema for ajv. Unknown fields are errors where Kubernetes would
// prune them (objects with properties and no x-kubernetes-preserve-unknown-fields), so typos show up.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { buildCrds, type Schema } from './crds.js';

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

/** JSON Schema (draft 7, for ajv) equivalent of one structural schema node. */
export function structuralToJsonSchema(node: Schema): Schema {
  if (node['x-kubernetes-int-or-string'] === true) return { anyOf: [{ type: 'integer' }, { type: 'string' }] };
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith('x-kubernetes-') || k === 'description') continue;
    if (k === 'properties') {
      out.properties = Object.fromEntries(Object.entries(v as Record<string, Schema>).map(([p, s]) => [p, structuralToJsonSchema(s)]));
    } else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object')) {
      out[k] = structuralToJsonSchema(v as Schema);
    } else out[k] = v;
  }
  if (node.properties && node[PRESERVE] !== true) out.additionalProperties = false;
  return out;
}

export interface CrdValidator { kind: string; validate: (obj: unknown) => string[] }

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

/** One validator per kind: errors (`/spec/x: message`) for a whole object (apiVersion, kind, metadata, spec, status). */
export function crdValidators(): Record<string, CrdValidator> {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const out: Record<string, CrdValidator> = {};
  for (const crd of buildCrds()) {
    const spec = crd.spec as { names: { kind: string }; versions: Array<{ schema: { openAPIV3Schema: Schema } }> };
    const fn: ValidateFunction = ajv.compile(structuralToJsonSchema(spec.versions[0]!.schema.openAPIV3Schema));
    out[spec.names.kind] = {
      kind: spec.names.kind,
      validate: (obj) => (fn(obj) ? [] : (fn.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ''}`)),
    };
  }
  return out;
}
