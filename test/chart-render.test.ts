// The Helm chart rendered by a real Helm 3 (scripts/helm.ts: the devDependency's binary): `helm lint --strict` and
// `helm template` with the default values and the value combinations that change the output; the manifests parse, name
// only objects that exist (ServiceAccounts, Roles, ConfigMap, Secrets, Service ports), carry the settings
// docs/kubernetes.md lists, never a literal credential, and the CRDs are the generated ones.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findHelm, helmRun, helmTemplate } from '../scripts/helm.js';
import { buildCrds } from '../operator/kube/crds.js';
import { CHART, chartRoles, chartRolesRendered, chartRolesWithoutHelm } from './kube/chart-rbac.js';

const helm = findHelm();
// The devDependency's Helm is a linux x86_64 binary: there it must be found (npm ci installs it), never skipped quietly.
const HELM_EXPECTED = process.platform === 'linux' && process.arch === 'x64';

// Rendered manifests are read field by field.
type Obj = Record<string, any>;
interface EnvVar { name: string; value?: string; valueFrom?: Obj }

const NS = 'flow';
const FULL = 'rel-flowpilot'; // release rel, chart flowpilot

/** `helm template rel charts/flowpilot -n flow` with values: every document, each one parsed without error. */
function render(values: Obj = {}, includeCrds = false): Obj[] {
  const docs = parseAllDocuments(helmTemplate(CHART, { release: 'rel', namespace: NS, values, includeCrds }));
  for (const d of docs) expect(d.errors.map((e) => e.message)).toEqual([]);
  return docs.map((d) => d.toJS() as Obj | null).filter((o): o is Obj => o !== null);
}

const all = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);
const one = (objs: Obj[], kind: string, name: string, ns?: string): Obj => {
  const found = objs.filter((o) => o.kind === kind && o.metadata.name === name && (ns === undefined || (o.metadata.namespace ?? NS) === ns));
  expect(found.map((o) => `${o.kind} ${o.metadata.namespace ?? NS}/${o.metadata.name}`), `${kind} ${name}`).toHaveLength(1);
  return found[0]!;
};
const nsOf = (o: Obj): string => o.metadata.namespace ?? NS;
const container = (objs: Obj[], component: 'operator' | 'api'): Obj => one(objs, 'Deployment', `${FULL}-${component}`).spec.template.spec.containers[0];
const envOf = (objs: Obj[], component: 'operator' | 'api'): EnvVar[] => container(objs, component).env ?? [];
const env = (objs: Obj[], component: 'operator' | 'api', name: string): EnvVar | undefined => envOf(objs, component).find((e) => e.name === name);
const config = (objs: Obj[]): Record<string, string> => one(objs, 'ConfigMap', `${FULL}-config`).data;
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

// Kubernetes 1.24+ API versions of every kind the chart may render (a new kind must be added here, deliberately).
const API_VERSIONS: Record<string, string> = {
  Deployment: 'apps/v1', Service: 'v1', ConfigMap: 'v1', Secret: 'v1', ServiceAccount: 'v1',
  Role: 'rbac.authorization.k8s.io/v1', RoleBinding: 'rbac.authorization.k8s.io/v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1', ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  ValidatingWebhookConfiguration: 'admissionregistration.k8s.io/v1', ServiceMonitor: 'monitoring.coreos.com/v1',
  CustomResourceDefinition: 'apiextensions.k8s.io/v1',
};
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'CustomResourceDefinition']);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
// Variables that hold a credential: only ever a secretKeyRef, never a value in a Deployment or the ConfigMap.
const CREDENTIAL = /(^|_)(KEY|SECRET|SECRET_ACCESS_KEY|ACCESS_KEY_ID|TOKEN|TOKENS|PASSWORD|CREDENTIALS?)$|^LOG_STORE_URL$|^DATABASE_URL$/;

/** Checks that hold for every rendering: well-formed objects, and every reference names an object that exists. */
function checkManifests(objs: Obj[], values: Obj): void {
  const seen = new Set<string>();
  for (const o of objs) {
    expect(o.apiVersion, `${o.kind} ${o.metadata?.name}`).toBe(API_VERSIONS[o.kind]);
    expect(o.metadata?.name, o.kind).toMatch(DNS_SUBDOMAIN);
    if (CLUSTER_SCOPED.has(o.kind)) expect(o.metadata.namespace, o.metadata.name).toBeUndefined();
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) expect(String(v), `${o.metadata.name} label ${k}`).toMatch(LABEL_VALUE);
    const key = `${o.kind} ${CLUSTER_SCOPED.has(o.kind) ? '' : nsOf(o)}/${o.metadata.name}`;
    expect(seen.has(key), key).toBe(false);
    seen.add(key);
  }
  const secrets = new Set(all(objs, 'Secret').map((s) => `${nsOf(s)}/${s.metadata.name}`));
  const named = new Set([values.storage?.s3?.credentialsSecret?.name, values.logStore?.postgres?.urlSecret?.name,
    values.inference?.accessTokensSecret?.name, values.encryption?.secretName,
    ...[...(values.operator?.extraEnv ?? []), ...(values.api?.extraEnv ?? [])].map((e: EnvVar) => e.valueFrom?.secretKeyRef?.name)].filter(Boolean));
  const secretExists = (ns: string, name: string): boolean => secrets.has(`${ns}/${name}`) || named.has(name);
  const deployments = all(objs, 'Deployment');
  expect(deployments.map((d) => d.metadata.name).sort()).toEqual([`${FULL}-api`, `${FULL}-operator`]);
  for (const d of deployments) {
    const pod = d.spec.template;
    expect(selects(d.spec.selector.matchLabels, pod.metadata.labels), d.metadata.name).toBe(true);
    if (values.serviceAccount?.create !== false) one(objs, 'ServiceAccount', pod.spec.serviceAccountName, nsOf(d));
    expect(pod.spec.securityContext, d.metadata.name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const c = pod.spec.containers[0];
    expect(c.securityContext, d.metadata.name).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.volumeMounts, d.metadata.name).toContainEqual({ name: 'tmp', mountPath: '/tmp' }); // writable /tmp, read-only root
    for (const from of c.envFrom ?? []) one(objs, 'ConfigMap', from.configMapRef.name, nsOf(d));
    const ports = new Set((c.ports ?? []).map((p: Obj) => p.name));
    for (const probe of [c.livenessProbe, c.readinessProbe]) expect(ports.has(probe.httpGet.port), `${d.metadata.name} probe`).toBe(true);
    const mounts = new Set((c.volumeMounts ?? []).map((m: Obj) => m.name));
    for (const v of pod.spec.volumes ?? []) {
      expect(mounts.has(v.name), `${d.metadata.name} volume ${v.name} mounted`).toBe(true);
      if (v.secret) expect(secretExists(nsOf(d), v.secret.secretName), `${d.metadata.name} volume ${v.secret.secretName}`).toBe(true);
    }
    for (const e of (c.env ?? []) as EnvVar[]) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) expect(secretExists(nsOf(d), ref.name), `${d.metadata.name} ${e.name} from Secret ${ref.name}`).toBe(true);
      if (CREDENTIAL.test(e.name)) expect(ref, `${d.metadata.name} ${e.name} is a secretKeyRef, not a literal`).toBeDefined();
    }
  }
  for (const key of Object.keys(config(objs))) expect(CREDENTIAL.test(key), `ConfigMap key ${key}`).toBe(false);
  for (const s of all(objs, 'Service')) {
    const target = deployments.filter((d) => nsOf(d) === nsOf(s) && selects(s.spec.selector, d.spec.template.metadata.labels));
    expect(target, `Service ${s.metadata.name} selects one Deployment`).toHaveLength(1);
    const ports = target[0]!.spec.template.spec.containers[0].ports.map((p: Obj) => p.name);
    for (const p of s.spec.ports) expect(ports, `Service ${s.metadata.name} port ${p.name}`).toContain(p.targetPort);
  }
  for (const b of all(objs, 'RoleBinding')) {
    one(objs, 'Role', b.roleRef.name, nsOf(b));
    for (const s of b.subjects) if (values.serviceAccount?.create !== false) one(objs, 'ServiceAccount', s.name, s.namespace);
  }
  for (const b of all(objs, 'ClusterRoleBinding')) {
    one(objs, 'ClusterRole', b.roleRef.name);
    for (const s of b.subjects) if (values.serviceAccount?.create !== false) one(objs, 'ServiceAccount', s.name, s.namespace);
  }
  for (const w of all(objs, 'ValidatingWebhookConfiguration').flatMap((c) => c.webhooks)) {
    const svc = one(objs, 'Service', w.clientConfig.service.name, w.clientConfig.service.namespace);
    expect(svc.spec.ports.map((p: Obj) => p.port)).toContain(w.clientConfig.service.port);
    expect(Buffer.from(w.clientConfig.caBundle, 'base64').toString()).toContain('-----BEGIN CERTIFICATE-----');
  }
  for (const m of all(objs, 'ServiceMonitor')) {
    const svcs = all(objs, 'Service').filter((s) => selects(m.spec.selector.matchLabels, s.metadata.labels));
    expect(svcs.map((s) => s.metadata.name), `ServiceMonitor ${m.metadata.name}`).toHaveLength(1);
    for (const ep of m.spec.endpoints) expect(svcs[0]!.spec.ports.map((p: Obj) => p.name)).toContain(ep.port);
  }
  // What the chart generates (the encryption key, the webhook's private key) appears in its Secret and nowhere else.
  const outside = JSON.stringify(objs.filter((o) => o.kind !== 'Secret'));
  for (const s of all(objs, 'Secret')) {
    for (const [k, v] of Object.entries(s.data ?? {})) {
      if (k.endsWith('.crt')) continue; // certificates are public (the CA is the webhook's caBundle)
      expect(outside.includes(v as string), `${s.metadata.name} ${k} appears outside its Secret`).toBe(false);
      expect(outside.includes(Buffer.from(v as string, 'base64').toString()), `${s.metadata.name} ${k} (decoded) appears outside its Secret`).toBe(false);
    }
  }
}

const CREDENTIALS = {
  storage: { s3: { endpoint: 'http://minio.minio:9000', credentialsSecret: { name: 's3-creds' } } },
  logStore: { postgres: { urlSecret: { name: 'pg-url' } } },
  inference: { accessTokensSecret: { name: 'api-tokens' }, config: '{"models":[]}' },
  encryption: { secretName: 'enc-key', key: 'k' },
  secrets: { secretName: 'flow-secrets' },
};
const ALLOWED = { 'company.shared': ['company.*'], 'team.a': ['team.b'] };
/** Credentials given inline in values, and inference credentials from a Secret through operator.extraEnv. */
const INLINE = {
  watchNamespace: 'jobs',
  storage: { s3: { accessKeyId: 'AKIA-inline-id', secretAccessKey: 'inl1ne-s3cr3t' } },
  logStore: { postgres: { url: 'postgres://flow:pa55w0rd-inline@db:5432/flow' } },
  operator: { extraEnv: [{ name: 'S3_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 'inference-s3', key: 'secret' } } }, { name: 'INFERENCE_THREADS', value: '2' }] },
};
const CASES: Array<[string, Obj]> = [
  ['default values', {}],
  ['credentials and external PostgreSQL URL from Secrets', CREDENTIALS],
  ['another watchNamespace', { watchNamespace: 'jobs' }],
  ['inline credentials and extraEnv from a Secret', INLINE],
  ['replicas and lease name', { operator: { replicas: 3, leaderElection: { leaseName: 'my-lease' } }, api: { replicas: 1 } }],
  ['allowedNamespaces and settings', { allowedNamespaces: ALLOWED, settings: { EXPRESSION_TIMEOUT_MS: 2000, MAX_SUBFLOW_DEPTH: '5' } }],
  ['ServiceMonitors', { metrics: { serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prom' } } } }],
  ['webhook, RBAC, ServiceAccounts and pod annotations off', { admissionWebhook: { enabled: false }, rbac: { create: false }, serviceAccount: { create: false }, metrics: { podAnnotations: false } }],
  ['everything set', { ...CREDENTIALS, watchNamespace: 'jobs', allowedNamespaces: ALLOWED, settings: { MAX_SUBFLOW_DEPTH: '5' }, imagePullSecrets: [{ name: 'pull' }], metrics: { serviceMonitor: { enabled: true } } }],
];

describe('Helm available for the chart tests', () => {
  it.runIf(HELM_EXPECTED || helm.path)(`a Helm 3 binary is found (${helm.path ? `${helm.version} from ${helm.source}` : helm.reason})`, () => {
    expect(helm.reason).toBeUndefined();
    expect(helm.version).toMatch(/^v3\./);
    expect(helmRun(['version', '--template', '{{.Version}}'])).toBe(helm.version);
  });
});

describe.skipIf(!helm.path)(`Helm chart rendered by helm template${helm.path ? '' : ` (skipped: no Helm 3 binary: ${helm.reason})`}`, () => {
  it.each(CASES)('helm lint --strict passes and the manifests are consistent: %s', (_name, values) => {
    expect(helmRun(['lint', '--strict', CHART, '--namespace', NS, '-f', '-'], JSON.stringify(values))).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    checkManifests(render(values), values);
  });

  it('default values: operator, API, RBAC, ServiceAccounts, the webhook and a chart-made encryption key', () => {
    const objs = render();
    const kinds = objs.map((o) => o.kind);
    for (const k of ['Deployment', 'Service', 'ConfigMap', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'Secret']) expect(kinds).toContain(k);
    expect(kinds).not.toContain('ServiceMonitor');
    expect(kinds).not.toContain('CustomResourceDefinition'); // crds/ only with --include-crds (helm install puts them first)
    const cm = config(objs);
    expect(cm).toMatchObject({ FLOWPILOT_MODE: 'cluster', WATCH_NAMESPACE: NS, LEADER_ELECTION_ENABLED: 'true', LEADER_ELECTION_LEASE_NAME: `${FULL}-operator`, RUNNER_SERVICE_ACCOUNT: `${FULL}-task` });
    expect(cm.ALLOWED_NAMESPACES).toBeUndefined();
    expect(JSON.parse(cm.RUNNER_ENV_FROM_SECRETS!)).toEqual({ ENCRYPTION_KEY: { name: `${FULL}-encryption-key`, key: 'key' } });
    const key = one(objs, 'Secret', `${FULL}-encryption-key`, NS);
    expect(key.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    const value = Buffer.from(key.data.key, 'base64').toString(); // ENCRYPTION_KEY: the base64 of 32 random bytes
    expect(Buffer.from(value, 'base64').toString('base64')).toBe(value);
    expect(Buffer.from(value, 'base64')).toHaveLength(32);
    for (const c of ['operator', 'api'] as const) {
      expect(env(objs, c, 'ENCRYPTION_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: `${FULL}-encryption-key`, key: 'key' } });
      expect(env(objs, c, 'LOG_STORE_URL')).toBeUndefined();
      expect(one(objs, 'Deployment', `${FULL}-${c}`).spec.replicas).toBe(2);
    }
    expect(one(objs, 'Deployment', `${FULL}-operator`).spec.template.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' });
    expect(env(objs, 'api', 'ADMISSION_PORT')?.value).toBe('8443');
    expect(all(objs, 'ClusterRole').map((r) => r.metadata.name)).toEqual([`${FULL}-${NS}-auth`]);
  });

  it('credentials and the PostgreSQL URL come from the named Secrets, by reference only', () => {
    const objs = render(CREDENTIALS);
    for (const c of ['operator', 'api'] as const) {
      expect(env(objs, c, 'STORAGE_S3_ACCESS_KEY_ID')?.valueFrom).toEqual({ secretKeyRef: { name: 's3-creds', key: 'AWS_ACCESS_KEY_ID' } });
      expect(env(objs, c, 'STORAGE_S3_SECRET_ACCESS_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 's3-creds', key: 'AWS_SECRET_ACCESS_KEY' } });
      expect(env(objs, c, 'LOG_STORE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'pg-url', key: 'url' } });
      expect(env(objs, c, 'ENCRYPTION_KEY')?.valueFrom).toEqual({ secretKeyRef: { name: 'enc-key', key: 'k' } });
    }
    expect(all(objs, 'Secret').map((s) => s.metadata.name)).toEqual([`${FULL}-admission-tls`]); // no chart-made key
    const cm = config(objs);
    expect(JSON.parse(cm.RUNNER_ENV_FROM_SECRETS!)).toEqual({
      ENCRYPTION_KEY: { name: 'enc-key', key: 'k' },
      STORAGE_S3_ACCESS_KEY_ID: { name: 's3-creds', key: 'AWS_ACCESS_KEY_ID' },
      STORAGE_S3_SECRET_ACCESS_KEY: { name: 's3-creds', key: 'AWS_SECRET_ACCESS_KEY' },
      LOG_STORE_URL: { name: 'pg-url', key: 'url' },
    });
    expect(cm).toMatchObject({ SECRETS_SECRET_NAME: 'flow-secrets', INFERENCE_CONFIG: '{"models":[]}', STORAGE_S3_ENDPOINT: 'http://minio.minio:9000' });
    const api = container(objs, 'api');
    const mount = api.volumeMounts.find((m: Obj) => m.name === 'access-tokens');
    expect(env(objs, 'api', 'ACCESS_TOKENS_FILE')?.value).toBe(`${mount.mountPath}/tokens`);
    expect(one(objs, 'Deployment', `${FULL}-api`).spec.template.spec.volumes.find((v: Obj) => v.name === 'access-tokens').secret.secretName).toBe('api-tokens');
    expect(env(objs, 'operator', 'ACCESS_TOKENS_FILE')).toBeUndefined();
  });

  it('inline credentials go into the chart\'s Secret (both namespaces) and are read by reference; extraEnv Secret refs reach RUNNER_ENV_FROM_SECRETS', () => {
    const objs = render(INLINE);
    const made = all(objs, 'Secret').filter((x) => x.metadata.name === `${FULL}-credentials`);
    expect(made.map(nsOf).sort()).toEqual(['flow', 'jobs']);
    const decoded = Object.fromEntries(Object.entries(made[0]!.data).map(([k, v]) => [k, Buffer.from(v as string, 'base64').toString()]));
    expect(decoded).toEqual({ STORAGE_S3_ACCESS_KEY_ID: 'AKIA-inline-id', STORAGE_S3_SECRET_ACCESS_KEY: 'inl1ne-s3cr3t', LOG_STORE_URL: 'postgres://flow:pa55w0rd-inline@db:5432/flow' });
    expect(made[1]!.data).toEqual(made[0]!.data);
    for (const c of ['operator', 'api'] as const) {
      for (const k of ['STORAGE_S3_ACCESS_KEY_ID', 'STORAGE_S3_SECRET_ACCESS_KEY', 'LOG_STORE_URL']) {
        expect(env(objs, c, k)?.valueFrom, `${c} ${k}`).toEqual({ secretKeyRef: { name: `${FULL}-credentials`, key: k } });
      }
    }
    const outside = JSON.stringify(objs.filter((o) => o.kind !== 'Secret'));
    for (const v of ['AKIA-inline-id', 'inl1ne-s3cr3t', 'pa55w0rd-inline']) expect(outside, v).not.toContain(v);
    expect(JSON.parse(config(objs).RUNNER_ENV_FROM_SECRETS!)).toEqual({
      ENCRYPTION_KEY: { name: `${FULL}-encryption-key`, key: 'key' },
      STORAGE_S3_ACCESS_KEY_ID: { name: `${FULL}-credentials`, key: 'STORAGE_S3_ACCESS_KEY_ID' },
      STORAGE_S3_SECRET_ACCESS_KEY: { name: `${FULL}-credentials`, key: 'STORAGE_S3_SECRET_ACCESS_KEY' },
      LOG_STORE_URL: { name: `${FULL}-credentials`, key: 'LOG_STORE_URL' },
      S3_SECRET_ACCESS_KEY: { name: 'inference-s3', key: 'secret' },
    });
    // A Secret of the user's own wins over inline values (which then go nowhere).
    const own = render({ ...INLINE, storage: { s3: { ...INLINE.storage.s3, credentialsSecret: { name: 's3-creds' } } }, logStore: { postgres: { ...INLINE.logStore.postgres, urlSecret: { name: 'pg-url' } } } });
    expect(all(own, 'Secret').map((x) => x.metadata.name)).not.toContain(`${FULL}-credentials`);
    expect(JSON.stringify(own)).not.toContain(Buffer.from('inl1ne-s3cr3t').toString('base64'));
  });

  it('refuses credentials in inference.config (a ConfigMap value)', () => {
    expect(() => render({ inference: { config: '{"storage":{"secretAccessKey":"x"}}' } })).toThrow(/inference\.config holds a credential/);
  });

  it('watchNamespace: Roles, task ServiceAccounts and the encryption key in the watched namespace; lease and Pods in the release namespace', () => {
    const objs = render({ watchNamespace: 'jobs' });
    expect(config(objs).WATCH_NAMESPACE).toBe('jobs');
    for (const r of ['operator', 'api', 'task', 'inference-runner']) expect(nsOf(one(objs, 'Role', `${FULL}-${r}`))).toBe('jobs');
    one(objs, 'Role', `${FULL}-operator-lease`, NS);
    expect(one(objs, 'RoleBinding', `${FULL}-operator`, 'jobs').subjects).toEqual([{ kind: 'ServiceAccount', name: `${FULL}-operator`, namespace: NS }]);
    expect(one(objs, 'RoleBinding', `${FULL}-task`, 'jobs').subjects).toEqual([{ kind: 'ServiceAccount', name: `${FULL}-task`, namespace: 'jobs' }]);
    for (const sa of ['task', 'inference-runner']) one(objs, 'ServiceAccount', `${FULL}-${sa}`, 'jobs');
    for (const sa of ['operator', 'api']) one(objs, 'ServiceAccount', `${FULL}-${sa}`, NS);
    for (const d of all(objs, 'Deployment')) expect(nsOf(d)).toBe(NS);
    const keys = all(objs, 'Secret').filter((s) => s.metadata.name === `${FULL}-encryption-key`);
    expect(keys.map(nsOf).sort()).toEqual(['flow', 'jobs']);
    expect(keys[0]!.data.key).toBe(keys[1]!.data.key); // one key: task Pods decrypt what the API encrypted
    expect(all(objs, 'ValidatingWebhookConfiguration')[0]!.webhooks[0].namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': 'jobs' });
  });

  it('replicas, lease name, allowedNamespaces and settings reach the Deployments and the ConfigMap', () => {
    const objs = render({ operator: { replicas: 3, leaderElection: { leaseName: 'my-lease' } }, api: { replicas: 1 }, allowedNamespaces: ALLOWED, settings: { EXPRESSION_TIMEOUT_MS: 2000, MAX_SUBFLOW_DEPTH: '5' } });
    expect(one(objs, 'Deployment', `${FULL}-operator`).spec.replicas).toBe(3);
    expect(one(objs, 'Deployment', `${FULL}-api`).spec.replicas).toBe(1);
    const cm = config(objs);
    expect(cm.LEADER_ELECTION_LEASE_NAME).toBe('my-lease');
    expect(JSON.parse(cm.ALLOWED_NAMESPACES!)).toEqual(ALLOWED);
    expect(cm).toMatchObject({ EXPRESSION_TIMEOUT_MS: '2000', MAX_SUBFLOW_DEPTH: '5' });
  });

  it('ServiceMonitors (when enabled) scrape the named metrics ports of the API and operator Services', () => {
    const objs = render({ metrics: { serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prom' } } } });
    const monitors = all(objs, 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([`${FULL}-api`, `${FULL}-operator`]);
    for (const m of monitors) {
      expect(m.metadata.labels.release).toBe('prom');
      expect(m.spec.endpoints).toEqual([expect.objectContaining({ path: '/metrics', interval: '15s' })]);
      expect(m.spec.namespaceSelector).toEqual({ matchNames: [NS] });
    }
  });

  it('webhook, RBAC, ServiceAccounts and pod annotations can be turned off', () => {
    const objs = render({ admissionWebhook: { enabled: false }, rbac: { create: false }, serviceAccount: { create: false }, metrics: { podAnnotations: false } });
    const kinds = new Set(objs.map((o) => o.kind));
    for (const k of ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ServiceAccount', 'ValidatingWebhookConfiguration']) expect(kinds.has(k), k).toBe(false);
    expect(all(objs, 'Secret').map((s) => s.metadata.name)).toEqual([`${FULL}-encryption-key`]);
    expect(envOf(objs, 'api').filter((e) => e.name.startsWith('ADMISSION_'))).toEqual([]);
    expect(one(objs, 'Service', `${FULL}-api`).spec.ports.map((p: Obj) => p.name)).toEqual(['http']);
    for (const d of all(objs, 'Deployment')) expect(Object.keys(d.spec.template.metadata.annotations)).toEqual(['checksum/config']);
  });

  it('the CRDs of crds/ (helm --include-crds) are the generated ones (operator/kube/crds.ts)', () => {
    const crds = all(render({}, true), 'CustomResourceDefinition');
    const byName = (a: Obj, b: Obj) => String(a.metadata.name).localeCompare(b.metadata.name);
    expect(crds.sort(byName)).toEqual(JSON.parse(JSON.stringify(buildCrds())).sort(byName));
  });

  it('the ConfigMap and the Deployments carry every setting docs/kubernetes.md lists, from where it says, and no other', () => {
    const docs = readFileSync(join(CHART, '../../docs/kubernetes.md'), 'utf8');
    const table = docs.split('### Settings the chart passes to the operator and the API')[1]!.split('\n## ')[0]!;
    const rows = [...table.matchAll(/^\| (.+?) \| (.+?) \| .+ \|$/gm)].filter((m) => !/^(Variable|-+)$/.test(m[1]!))
      .map((m) => ({ names: [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((n) => n[1]!), from: m[2]! }));
    expect(rows.length).toBeGreaterThan(15);
    const settings = Object.fromEntries(rows.filter((r) => r.from.includes('`settings`')).flatMap((r) => r.names).map((n) => [n, '1']));
    expect(Object.keys(settings).length).toBeGreaterThan(2);
    const objs = render({ ...CREDENTIALS, allowedNamespaces: ALLOWED, settings });
    const cm = config(objs);
    const documented = new Set<string>();
    for (const { names, from } of rows) {
      for (const n of names) {
        documented.add(n);
        if (from.startsWith('ConfigMap')) expect(cm[n], `${n} in the ConfigMap`).toBeDefined();
        else if (from.startsWith('API Pod')) expect(env(objs, 'api', n), `${n} in the API Pod`).toBeDefined();
        else if (from.startsWith('Secret')) for (const c of ['operator', 'api'] as const) expect(env(objs, c, n)?.valueFrom?.secretKeyRef, `${n} of ${c} from a Secret`).toBeDefined();
        else if (from.startsWith('Downward API')) for (const c of ['operator', 'api'] as const) expect(env(objs, c, n)?.valueFrom?.fieldRef, `${n} of ${c} from the Downward API`).toBeDefined();
        else throw new Error(`docs/kubernetes.md: unknown source "${from}" of ${n}`);
      }
    }
    const rendered = [...Object.keys(cm), ...envOf(objs, 'operator').map((e) => e.name), ...envOf(objs, 'api').map((e) => e.name)];
    expect(rendered.filter((n) => !documented.has(n))).toEqual([]);
  });

  it('the Roles chart-rbac.ts reads without Helm (template directives dropped) are the rendered ones', () => {
    expect(chartRolesWithoutHelm()).toEqual(chartRolesRendered());
    expect(chartRoles()).toEqual(chartRolesRendered()); // with Helm, the tests' authorizer uses the rendered Roles
  });
});
