// Static checks of the Helm chart (no helm binary needed): its plain YAML parses, templates only read values that
// values.yaml defines and only include defined helpers, blocks are balanced, and RBAC stays least-privilege on
// resources that exist (the Roles as `helm template` renders them when there is a Helm, see test/kube/chart-rbac.ts).
// test/chart-render.test.ts renders the chart with the real Helm of the devDependency and checks the manifests.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KINDS } from '../operator/kube/names.js';
import { chartRoles, chartRolesSource, type Rule } from './kube/chart-rbac.js';

const ROOT = new URL('..', import.meta.url).pathname;
const CHART = join(ROOT, 'charts/flowpilot');
const read = (p: string): string => readFileSync(p, 'utf8');
const templates = readdirSync(join(CHART, 'templates')).map((f) => [f, read(join(CHART, 'templates', f))] as const);
const values = parse(read(join(CHART, 'values.yaml'))) as Record<string, unknown>;

const CRD_RESOURCES = Object.values(KINDS).map((k) => k.plural);
const WITH_STATUS = ['flows', 'executions', 'inferencejobs'];
const BUILTIN: Record<string, string[]> = {
  '': ['pods', 'pods/log', 'secrets', 'events', 'configmaps', 'services', 'serviceaccounts'],
  batch: ['jobs'],
  'coordination.k8s.io': ['leases'],
  'authentication.k8s.io': ['tokenreviews'],
  'authorization.k8s.io': ['subjectaccessreviews'],
  'flowpilot.io': [...CRD_RESOURCES, ...WITH_STATUS.map((r) => `${r}/status`), 'executions/finalizers', 'inferencejobs/finalizers'],
};
const VERBS = new Set(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']);

function hasPath(obj: unknown, path: string[]): boolean {
  let cur = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || !(p in (cur as object))) return false;
    cur = (cur as Record<string, unknown>)[p];
  }
  return true;
}

describe('Helm chart charts/flowpilot', () => {
  it('plain YAML files of the chart and crds/ parse', () => {
    const chart = parse(read(join(CHART, 'Chart.yaml'))) as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'flowpilot' });
    for (const dir of [join(CHART, 'crds'), join(ROOT, 'crds')]) {
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
      expect(files).toHaveLength(CRD_RESOURCES.length);
      for (const f of files) expect((parse(read(join(dir, f))) as { kind: string }).kind).toBe('CustomResourceDefinition');
    }
  });

  it.each(templates)('%s reads only values defined in values.yaml', (_file, text) => {
    const refs = [...text.matchAll(/(?:\$|\.ctx)?\.Values\.([A-Za-z0-9_.]+)/g)].map((m) => m[1]!.replace(/\.$/, ''));
    for (const ref of refs) expect(hasPath(values, ref.split('.')), `.Values.${ref}`).toBe(true);
  });

  it.each(templates)('%s has balanced blocks and includes only defined helpers', (_file, text) => {
    const code = text.replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '');
    const actions = [...code.matchAll(/\{\{-?\s*([a-z]+)\b/g)].map((m) => m[1]);
    const opens = actions.filter((a) => ['if', 'range', 'with', 'define'].includes(a!)).length;
    expect(actions.filter((a) => a === 'end').length).toBe(opens);
    const defined = new Set([...read(join(CHART, 'templates/_helpers.tpl')).matchAll(/define "([^"]+)"/g)].map((m) => m[1]));
    for (const m of code.matchAll(/include "([^"]+)"/g)) expect(defined.has(m[1]), m[1]).toBe(true);
  });

  it(`RBAC rules name existing resources and valid verbs (Roles from ${chartRolesSource()})`, () => {
    const rules = Object.values(chartRoles()).flat();
    expect(rules.length).toBeGreaterThan(5);
    for (const r of rules) {
      for (const g of r.apiGroups) for (const res of r.resources) expect(BUILTIN[g], `${g}/${res}`).toContain(res);
      for (const v of r.verbs) expect(VERBS.has(v), v).toBe(true);
    }
  });

  it(`RBAC is least-privilege: API writes no execution status and reads no secrets, task Pods only read and write KV (Roles from ${chartRolesSource()})`, () => {
    const roles = chartRoles();
    expect(Object.keys(roles).sort()).toEqual(['api', 'auth', 'inference-runner', 'operator', 'operator-lease', 'task']);
    const grants = (rules: Rule[]) => rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))));
    const role = (suffix: string) => roles[suffix]!;
    const api = grants(role('api'));
    // Core grants: creating the Secret that holds an inference submission's token (never reading secrets) and the
    // ConfigMaps of trigger done-once marks. The only status it writes is a Flow's (its revision, when saved).
    const allowed = new Set(['/secrets:create', '/configmaps:get', '/configmaps:create', 'flowpilot.io/flows/status:get', 'flowpilot.io/flows/status:update', 'flowpilot.io/flows/status:patch']);
    expect(api.filter((g) => !allowed.has(g)).filter((g) => g.includes('/status') || g.includes('secrets') || g.startsWith('/'))).toEqual([]);
    expect(api).toContain('flowpilot.io/executions:create');
    // The inference runner reads its job and patches its report ConfigMap; it writes no InferenceJob status (the operator folds the report in).
    expect(grants(role('inference-runner')).sort()).toEqual(['/configmaps:patch', 'flowpilot.io/inferencejobs:get']);
    expect(grants(role('task')).sort()).toEqual([
      'flowpilot.io/executions:get', 'flowpilot.io/flowrevisions:get', 'flowpilot.io/kvpairs:create',
      'flowpilot.io/kvpairs:delete', 'flowpilot.io/kvpairs:get', 'flowpilot.io/kvpairs:list', 'flowpilot.io/kvpairs:update',
      'flowpilot.io/kvpairs:watch',
    ]);
    const op = grants(role('operator'));
    for (const g of ['flowpilot.io/executions/status:patch', 'batch/jobs:create', '/pods/log:get', '/secrets:watch', '/events:create']) expect(op).toContain(g);
    // Secrets: read (flow secrets), patch and delete (adopting inference token Secrets); never create or update.
    expect(op.some((g) => g.startsWith('/secrets:') && !/:(get|list|watch|patch|delete)$/.test(g))).toBe(false);
    // list: partition and member Leases (one request a round); delete: member Leases of replicas gone for an hour.
    expect(grants(role('operator-lease')).sort()).toEqual(['create', 'delete', 'get', 'list', 'update'].map((v) => `coordination.k8s.io/leases:${v}`));
    expect(grants(role('auth')).sort()).toEqual(['authentication.k8s.io/tokenreviews:create', 'authorization.k8s.io/subjectaccessreviews:create']);
  });

  it('pods run as non-root with no capabilities and the RuntimeDefault seccomp profile', () => {
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: 'RuntimeDefault' } });
    expect(values.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    for (const f of ['operator-deployment.yaml', 'api-deployment.yaml']) {
      const text = templates.find(([n]) => n === f)![1];
      expect(text).toContain('toYaml .Values.securityContext');
      expect(text).toContain('mountPath: /tmp'); // writable /tmp for tsx's cache under a read-only root
      expect(text).toMatch(/path: \/healthz/);
    }
    expect(templates.find(([n]) => n === 'configmap.yaml')![1]).toContain('FLOWPILOT_MODE: cluster');
  });

  it('every setting of the ConfigMap and the Pods is documented in docs/kubernetes.md', () => {
    const docs = read(join(ROOT, 'docs/kubernetes.md'));
    const names = templates.flatMap(([, text]) => [
      ...[...text.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!),
      ...[...text.matchAll(/- name: ([A-Z][A-Z0-9_]+)$/gm)].map((m) => m[1]!),
    ]);
    expect(names).toEqual(expect.arrayContaining(['FLOWPILOT_MODE', 'WATCH_NAMESPACE', 'LEADER_ELECTION_LEASE_NAME', 'LOG_STORE_URL']));
    for (const n of names) expect(docs, n).toContain(`\`${n}\``);
  });
});
