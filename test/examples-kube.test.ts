// The Kubernetes example manifests (examples/kubernetes/) are valid: each matches its generated CRD schema, each Flow
// spec passes the engine's flow validation, and the Execution and KVPair examples fit the flows and names they use.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { crdValidators } from '../operator/kube/crd-validate.js';
import { API_VERSION, kvName } from '../operator/kube/names.js';
import { parseFlow, resolveInputs, validateFlow } from '../operator/model/index.js';
import type { Flow } from '../operator/core/types.js';

const ROOT = new URL('..', import.meta.url).pathname;
const DIR = join(ROOT, 'examples/kubernetes');

interface Manifest { apiVersion: string; kind: string; metadata: { name?: string; generateName?: string }; spec: Record<string, unknown> }

const manifests: Array<[string, Manifest]> = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).flatMap((f) =>
  parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d, i) => [`${f}#${i}`, d.toJS() as Manifest] as [string, Manifest]));
const validators = crdValidators();
const flows = manifests.filter(([, m]) => m.kind === 'Flow').map(([, m]) => validateFlow(m.spec));
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('examples/kubernetes', () => {
  it('has flows (hello world, DAG, Docker runner, schedule), an Execution and a KVPair', () => {
    const kinds = manifests.map(([, m]) => m.kind);
    expect(kinds.filter((k) => k === 'Flow').length).toBeGreaterThanOrEqual(4);
    expect(kinds).toEqual(expect.arrayContaining(['Execution', 'KVPair']));
    const types = JSON.stringify(flows);
    for (const t of ['core.flow.DAG', 'scripts.runner.docker.Docker', 'core.trigger.Schedule']) expect(types).toContain(t);
  });

  it.each(manifests)('%s matches its CRD schema', (_file, m) => {
    expect(m.apiVersion).toBe(API_VERSION);
    expect(validators[m.kind], m.kind).toBeDefined();
    expect(validators[m.kind]!.validate(m)).toEqual([]);
    const name = m.metadata.name ?? m.metadata.generateName?.replace(/-$/, '');
    expect(name).toMatch(DNS_SUBDOMAIN);
  });

  it.each(manifests.filter(([, m]) => m.kind === 'Flow'))('%s spec is a valid flow (engine validation, also as YAML text)', (_file, m) => {
    const flow = validateFlow(m.spec);
    expect(flow.tasks.length).toBeGreaterThan(0);
    expect(parseFlow(stringify(m.spec)).id).toBe(m.spec.id);
    expect(m.metadata.name).toBe(m.spec.id); // by convention in the examples
  });

  it('the Execution starts an example flow with inputs that flow accepts', () => {
    for (const [, m] of manifests.filter(([, x]) => x.kind === 'Execution')) {
      const flow = flows.find((f: Flow) => f.id === m.spec.flowId && f.namespace === m.spec.namespace);
      expect(flow, `${m.spec.namespace}.${m.spec.flowId}`).toBeDefined();
      expect(resolveInputs(flow!.inputs, m.spec.inputs as Record<string, unknown>)).toMatchObject(m.spec.inputs as object);
    }
  });

  it('the KVPair uses the object name the API and KV tasks use for its namespace and key', () => {
    for (const [, m] of manifests.filter(([, x]) => x.kind === 'KVPair')) {
      expect(m.metadata.name).toBe(kvName(m.spec.namespace as string, m.spec.key as string));
    }
  });

  it('schema validation catches mistakes (unknown field, bad enum, bad flow namespace)', () => {
    const flow = manifests.find(([, m]) => m.kind === 'Flow')![1];
    expect(validators.Flow!.validate({ ...flow, spec: { ...flow.spec, namespace: 'Company Team' } }).join()).toContain('/spec/namespace');
    const kv = manifests.find(([, m]) => m.kind === 'KVPair')![1];
    expect(validators.KVPair!.validate({ ...kv, spec: { ...kv.spec, type: 'TEXT' } }).join()).toContain('/spec/type');
    expect(validators.KVPair!.validate({ ...kv, spec: { ...kv.spec, ttl: 'PT1H' } }).join()).toContain('ttl');
    const ex = manifests.find(([, m]) => m.kind === 'Execution')![1];
    expect(validators.Execution!.validate({ ...ex, spec: { ...ex.spec, commands: [{ seq: 1, type: 'pause' }] } }).join()).toContain('/spec/commands/0/type');
    expect(validators.Execution!.validate({ ...ex, status: { state: 'DONE' } }).join()).toContain('/status/state');
  });
});
