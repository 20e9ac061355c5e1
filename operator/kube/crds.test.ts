// Tests of the generated CRDs: committed files equal the generator's output, schemas follow the apiextensions.k8s.io/v1
// structural rules (no CEL, nothing Kubernetes 1.24 rejects), every field is described, printer columns point at fields.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildCrds, renderCrdFiles, type Schema } from './crds.js';
import { GROUP, KINDS } from './names.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const crds = buildCrds();

/** Every schema node with its path; `field` is true for nodes that are a named property. */
function* nodes(schema: Schema, path = '', field = false): Generator<{ path: string; node: Schema; field: boolean }> {
  yield { path, node: schema, field };
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) yield* nodes(v, `${path}.${k}`, true);
  if (schema.items) yield* nodes(schema.items as Schema, `${path}[]`);
  if (typeof schema.additionalProperties === 'object') yield* nodes(schema.additionalProperties as Schema, `${path}{}`);
}

const rootOf = (crd: Schema): Schema => {
  const v = (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: Schema } }> }).versions[0];
  return v.schema.openAPIV3Schema;
};
const nameOf = (crd: Schema): string => (crd.metadata as { name: string }).name;

/** Keywords an apiextensions.k8s.io/v1 schema node may carry (no $ref, no CEL x-kubernetes-validations, no uniqueItems). */
const ALLOWED = new Set([
  'type', 'format', 'description', 'title', 'enum', 'pattern', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties', 'required',
  'properties', 'items', 'additionalProperties', 'nullable', 'default', 'example',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
]);
const FORMATS = new Set(['date-time', 'date', 'uri', 'email', 'uuid', 'int32', 'int64', 'byte', 'double', 'float', 'password', 'hostname']);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

describe('generated CRDs', () => {
  it('define every kind of names.ts in group flowpilot.io, v1, namespaced', () => {
    expect(crds.map((c) => nameOf(c)).sort()).toEqual(Object.values(KINDS).map((k) => `${k.plural}.${GROUP}`).sort());
    for (const crd of crds) {
      const spec = crd.spec as { group: string; scope: string; names: { kind: string; shortNames: string[] }; versions: Array<Record<string, unknown>> };
      const info = Object.values(KINDS).find((k) => k.kind === spec.names.kind)!;
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(spec.group).toBe(GROUP);
      expect(spec.scope).toBe('Namespaced');
      expect(spec.names.shortNames).toEqual(info.shortNames);
      expect(spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1', true, true]]);
    }
  });

  it('committed files in crds/ and charts/flowpilot/crds/ equal the generator output (run npm run gen:crds)', () => {
    const files = renderCrdFiles();
    expect(Object.keys(files).sort()).toEqual(Object.values(KINDS).map((k) => `${k.plural}.${GROUP}.yaml`).sort());
    for (const dir of ['crds', 'charts/flowpilot/crds']) {
      for (const [name, text] of Object.entries(files)) {
        expect(readFileSync(join(ROOT, dir, name), 'utf8'), `${dir}/${name}`).toBe(text);
        expect(parse(text)).toEqual(crds.find((c) => `${nameOf(c)}.yaml` === name));
      }
    }
  });

  it.each(crds.map((c) => [nameOf(c), c] as const))('%s has a structural v1 schema', (_name, crd) => {
    const root = rootOf(crd);
    expect(root.type).toBe('object');
    expect(root.properties).toHaveProperty('spec');
    expect((root.properties as Record<string, Schema>).metadata).toEqual({ type: 'object' });
    for (const { path, node } of nodes(root)) {
      const preserve = node['x-kubernetes-preserve-unknown-fields'];
      const intOrString = node['x-kubernetes-int-or-string'] === true;
      for (const k of Object.keys(node)) expect(ALLOWED.has(k), `${path}: keyword ${k}`).toBe(true);
      if (preserve !== undefined) expect(preserve, `${path}: preserve-unknown-fields must be true`).toBe(true);
      if (intOrString) expect(node.type, `${path}: int-or-string has no type`).toBeUndefined();
      else if (preserve !== true) expect(TYPES.has(node.type as string), `${path}: type`).toBe(true);
      if (node.type !== undefined) expect(TYPES.has(node.type as string), `${path}: type`).toBe(true);
      expect(node.additionalProperties === false, `${path}: additionalProperties false`).toBe(false);
      if (node.properties) {
        expect(node.additionalProperties, `${path}: properties and additionalProperties`).toBeUndefined();
        expect(node.type, `${path}: properties need type object`).toBe('object');
      }
      if (node.items) expect(Array.isArray(node.items), `${path}: items must be one schema`).toBe(false);
      if (node.type === 'array') expect(node.items, `${path}: arrays need items`).toBeDefined();
      if (node.format !== undefined) expect(FORMATS.has(node.format as string), `${path}: format ${node.format}`).toBe(true);
      if (Array.isArray(node.enum) && node.type === 'string') {
        for (const v of node.enum) expect(typeof v, `${path}: enum value`).toBe('string');
      }
      if (typeof node.pattern === 'string') {
        // Kubernetes compiles patterns with Go's RE2: no lookaround, no backreferences.
        expect(/\(\?[=!<]|\\[1-9]/.test(node.pattern), `${path}: RE2 pattern`).toBe(false);
        expect(() => new RegExp(node.pattern as string, 'u')).not.toThrow();
      }
      if (Array.isArray(node.required) && node.properties) {
        for (const r of node.required) expect(Object.keys(node.properties as object), `${path}: required ${r}`).toContain(r);
      }
      if (node['x-kubernetes-list-type'] === 'map') {
        const items = node.items as Schema;
        for (const key of node['x-kubernetes-list-map-keys'] as string[]) expect(items.required, `${path}: map key ${key}`).toContain(key);
      }
    }
  });

  it.each(crds.map((c) => [nameOf(c), c] as const))('%s describes every field (kubectl explain)', (_name, crd) => {
    const props = rootOf(crd).properties as Record<string, Schema>;
    for (const top of ['spec', 'status']) {
      if (!props[top]) continue;
      for (const { path, node, field } of nodes(props[top], top)) {
        if (field || path === top) expect(typeof node.description === 'string' && node.description.length > 3, path).toBe(true);
      }
    }
  });

  it.each(crds.map((c) => [nameOf(c), c] as const))('%s printer columns point at schema fields', (_name, crd) => {
    const version = (crd.spec as { versions: Array<{ additionalPrinterColumns: Array<{ name: string; jsonPath: string }> }> }).versions[0];
    const names = version.additionalPrinterColumns.map((c) => c.name);
    expect(names).not.toContain('NAMESPACE'); // kubectl prints its own NAMESPACE column with -A
    expect(new Set(names).size).toBe(names.length);
    for (const c of version.additionalPrinterColumns) {
      if (c.jsonPath === '.metadata.creationTimestamp') continue;
      const parts = c.jsonPath.replace(/\[\?.*\]/, '').split('.').filter(Boolean);
      let node: Schema | undefined = rootOf(crd);
      for (const p of parts) node = ((node?.properties ?? {}) as Record<string, Schema>)[p] ?? (node?.items as Schema | undefined)?.properties?.[p as never];
      expect(node, `${c.name} ${c.jsonPath}`).toBeDefined();
    }
  });

  it('Flow spec accepts a flow and rejects a bad flow namespace; Execution status enumerates the 13 states', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const flow = crds.find((c) => nameOf(c) === `flows.${GROUP}`)!;
    const validate = ajv.compile((rootOf(flow).properties as Record<string, Schema>).spec);
    const spec = { id: 'hello', namespace: 'company.team', tasks: [{ id: 'a', type: 'io.kestra.plugin.core.log.Log', message: 'hi' }] };
    expect(validate(spec), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...spec, namespace: 'Company Team' })).toBe(false);
    const ex = crds.find((c) => nameOf(c) === `executions.${GROUP}`)!;
    const status = (rootOf(ex).properties as Record<string, Schema>).status as { properties: { state: { enum: string[] } } };
    expect(status.properties.state.enum).toHaveLength(13);
  });
});
