// CRD schema handling of the test server: loading CRD YAML files, the structural-schema check, validation errors
// naming the field (422 Invalid with causes), pruning of unknown fields, defaults, formats, int-or-string, nullable.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { compileCrd, startKubeTestServer, type KubeTestServer } from './index.js';
import { gadgetCrd, widgetCrd } from './fixtures.js';

const G = 'test.flowpilot.io';
let srv: KubeTestServer;
let co: CustomObjectsApi;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kube-crds-'));
  writeFileSync(join(dir, 'widgets.yaml'), stringify(widgetCrd()));
  writeFileSync(join(dir, 'more.yaml'), `${stringify(gadgetCrd())}---\n# not a CRD\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n`);
  writeFileSync(join(dir, 'README.md'), 'ignored');
  srv = await startKubeTestServer({ crdDir: dir });
  co = srv.kubeConfig().makeApiClient(CustomObjectsApi);
});
afterAll(async () => { await srv.close(); rmSync(dir, { recursive: true, force: true }); });

const create = (spec: unknown, name = 'v') => co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name }, spec } });
async function rejection(spec: unknown): Promise<{ code: number; body: any }> {
  try { await create(spec, `bad-${Math.random().toString(36).slice(2, 8)}`); } catch (e: any) { return { code: e.code, body: typeof e.body === 'string' ? JSON.parse(e.body) : e.body }; }
  throw new Error('expected a rejection');
}

describe('schema validation', () => {
  it('loads CRDs from the directory (several documents per file)', async () => {
    const doc: any = await (await fetch(`${srv.url}/apis/${G}/v1`)).json();
    expect(doc.resources.map((r: any) => r.name).sort()).toEqual(['gadgets', 'widgets', 'widgets/status']);
  });

  it('rejects with 422 Invalid and causes naming the field', async () => {
    const r = await rejection({ size: 1, tasks: [{ id: 'ok' }, { type: 'x' }, { id: 'Bad Id' }] });
    expect(r.code).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const fields = r.body.details.causes.map((c: any) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['spec.tasks[1].id', 'spec.tasks[2].id']));
    expect(r.body.details.causes.find((c: any) => c.field === 'spec.tasks[1].id').message).toBe('Required value');
    expect(r.body.message).toMatch(/^Widget\.test\.flowpilot\.io "bad-\w+" is invalid: \[spec\.tasks\[1\]\.id: Required value/);
  });

  it('reports types, enums, bounds and missing required fields', async () => {
    const r = await rejection({ size: 'big', color: 'green' });
    const byField = Object.fromEntries(r.body.details.causes.map((c: any) => [c.field, c.message]));
    expect(byField['spec.size']).toMatch(/must be of type integer/);
    expect(byField['spec.color']).toMatch(/Unsupported value: "green": supported values: "red", "blue"/);
    expect((await rejection({ size: -1 })).body.details.causes[0].field).toBe('spec.size');
    expect((await rejection({})).body.details.causes[0]).toMatchObject({ field: 'spec.size', message: 'Required value' });
    expect((await rejection({ size: 1, when: 'yesterday' })).body.details.causes[0].field).toBe('spec.when');
    expect((await rejection({ size: 1, port: true })).body.details.causes[0].field).toBe('spec.port');
  });

  it('accepts formats, int-or-string, nullable, preserve-unknown-fields and additionalProperties', async () => {
    const ok: any = await create({ size: 2, port: 'http', note: null, when: '2026-01-01T00:00:00Z', timeout: '1h30m', inputs: { any: { deep: [1] } }, labels: { a: 'b' } }, 'good');
    expect(ok.spec).toMatchObject({ port: 'http', note: null, timeout: '1h30m', inputs: { any: { deep: [1] } }, labels: { a: 'b' }, color: 'red' });
    await create({ size: 2, port: 8080 }, 'good2');
  });

  it('prunes unknown fields where the schema does not preserve them', async () => {
    const w: any = await create({ size: 1, extra: 'dropped', tasks: [{ id: 'a', junk: 1 }], inputs: { kept: true } }, 'pruned');
    expect(w.spec.extra).toBeUndefined();
    expect(w.spec.tasks).toEqual([{ id: 'a' }]);
    expect(w.spec.inputs).toEqual({ kept: true });
    const top: any = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'top' }, spec: { size: 1 }, unknownTop: 1 } });
    expect(top.unknownTop).toBeUndefined();
  });

  it('refuses duplicates in set and map lists', async () => {
    const r = await rejection({ size: 1, tags: ['a', 'b', 'a'] });
    expect(r.body.details.causes[0]).toMatchObject({ reason: 'FieldValueDuplicate', field: 'spec.tags[2]' });
    const w: any = await create({ size: 1 }, 'conds');
    const bad = await co.replaceNamespacedCustomObjectStatus({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'conds', body: { ...w, status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Ready', status: 'False' }] } } }).catch((e) => e);
    expect(bad.code).toBe(422);
    expect(JSON.parse(bad.body).details.causes[0].field).toBe('status.conditions[1]');
  });

  it('fieldValidation: Strict refuses unknown fields, the default warns about pruned ones', async () => {
    const strict = await co.createNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', fieldValidation: 'Strict', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'strict' }, spec: { size: 1, bogus: 1 } } }).catch((e) => e);
    expect(strict.code).toBe(400);
    expect(JSON.parse(strict.body).message).toBe('strict decoding error: unknown field "spec.bogus"');
    const res = await fetch(`${srv.url}/apis/${G}/v1/namespaces/default/widgets`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'warned' }, spec: { size: 1, bogus: 1, tasks: [{ id: 'a', x: 1 }] } }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.bogus\\"", 299 - "unknown field \\"spec.tasks[0].x\\""');
  });

  it('validates updates too', async () => {
    const w: any = await create({ size: 1 }, 'upd');
    const r = await co.replaceNamespacedCustomObject({ group: G, version: 'v1', namespace: 'default', plural: 'widgets', name: 'upd', body: { ...w, spec: { size: 'x' } } }).catch((e) => e);
    expect(r.code).toBe(422);
  });
});

describe('structural schema check', () => {
  const withSpec = (spec: unknown) => {
    const crd: any = widgetCrd();
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec;
    return crd;
  };
  it('names the CRD and the path of a node without a type', () => {
    expect(() => compileCrd(withSpec({ type: 'object', properties: { a: { description: 'no type' } } })))
      .toThrow(/CRD widgets\.test\.flowpilot\.io: spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[a\]: type: Required value/);
  });
  it('refuses properties together with additionalProperties, arrays without items, and $ref', () => {
    expect(() => compileCrd(withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }))).toThrow(/properties\[spec\]: additionalProperties: Forbidden/);
    expect(() => compileCrd(withSpec({ type: 'object', properties: { l: { type: 'array' } } }))).toThrow(/properties\[l\]: items: Required value/);
    expect(() => compileCrd(withSpec({ type: 'object', properties: { r: { $ref: '#/x', type: 'object' } } }))).toThrow(/\$ref: Forbidden/);
  });
  it('accepts untyped nodes only with preserve-unknown-fields or int-or-string', () => {
    expect(() => compileCrd(withSpec({ type: 'object', properties: { a: { 'x-kubernetes-preserve-unknown-fields': true }, b: { 'x-kubernetes-int-or-string': true } } }))).not.toThrow();
  });
  it('checks list-type map keys', () => {
    const noKeys = withSpec({ type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { k: { type: 'string' } } } } } });
    expect(() => compileCrd(noKeys)).toThrow(/properties\[l\]: x-kubernetes-list-map-keys: Required value/);
    const optionalKey = withSpec({ type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: { type: 'object', properties: { k: { type: 'string' } } } } } });
    expect(() => compileCrd(optionalKey)).toThrow(/items\.properties\[k\]: Required value: this property is in x-kubernetes-list-map-keys/);
  });

  it('checks names and storage versions', () => {
    const crd: any = widgetCrd();
    crd.metadata.name = 'wrong.name';
    expect(() => compileCrd(crd)).toThrow(/CRD wrong\.name: metadata\.name/);
    const two: any = widgetCrd();
    two.spec.versions.push({ ...two.spec.versions[0], name: 'v2' });
    expect(() => compileCrd(two)).toThrow(/exactly one version must be storage/);
  });
});
