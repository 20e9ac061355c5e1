// Kubernetes Secrets as the source of secret(): informer caches against the Kubernetes API test server, then the
// embedded controller running a flow that logs a secret (masked as ******) and seeing a changed Secret's new value.
import { CoreV1Api, type V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startController } from '../controller/index.js';
import { initExpressions } from '../expr/index.js';
import { call, createFlow, jsonInit, startTestApi, type TestApi } from '../../test/api/helpers.js';
import { type KubeTestServer, startKubeTestServer } from '../../test/kube/test-server/index.js';
import { SecretLayer } from '../secrets/layer.js';
import { type KubeSecretSource, startKubeSecrets } from './secrets.js';

const NS = 'flowpilot-system';
let kube: KubeTestServer;
let core: CoreV1Api;
const sources: KubeSecretSource[] = [];

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const secret = (name: string, data: Record<string, string>, labels?: Record<string, string>): V1Secret =>
  ({ metadata: { name, namespace: NS, ...(labels ? { labels } : {}) }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });

async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function source(opts: { secretName?: string | null; labelled?: boolean } = {}): Promise<KubeSecretSource> {
  const s = await startKubeSecrets({ kc: kube.kubeConfig(), namespace: NS, onError: () => {}, ...opts });
  sources.push(s);
  return s;
}

beforeAll(async () => {
  kube = await startKubeTestServer({ tokens: { 'operator-token': { username: 'system:serviceaccount:flowpilot-system:operator' } }, namespaces: ['default', NS] });
  core = kube.kubeConfig().makeApiClient(CoreV1Api);
});
afterAll(async () => {
  for (const s of sources) await s.stop();
  await kube?.close();
});

describe('startKubeSecrets', () => {
  it('reads the named Secret and labelled Secrets, the named one winning, and follows changes', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('flowpilot-secrets', { API_KEY: 'from-named', ONLY_NAMED: 'n' }) });
    await core.createNamespacedSecret({ namespace: NS, body: secret('team-a', { API_KEY: 'from-label', TEAM_A: 'ä ✓ multi\nline' }, { 'flowpilot.io/secret': 'true' }) });
    await core.createNamespacedSecret({ namespace: NS, body: secret('unrelated', { OTHER: 'no' }) });
    const s = await source();
    expect(s.lookup('API_KEY')).toBe('from-named');
    expect(s.lookup('TEAM_A')).toBe('ä ✓ multi\nline');
    expect(s.lookup('OTHER')).toBeUndefined();
    expect(s.names()).toEqual(['API_KEY', 'ONLY_NAMED', 'TEAM_A']);
    expect(s.values().sort()).toEqual(['from-named', 'n', 'ä ✓ multi\nline']);

    await core.deleteNamespacedSecret({ name: 'flowpilot-secrets', namespace: NS });
    await until(() => s.lookup('API_KEY'), (v) => v === 'from-label', 'the labelled value after the named Secret is deleted');
    expect(s.lookup('ONLY_NAMED')).toBeUndefined();

    const unrelated = await core.readNamespacedSecret({ name: 'unrelated', namespace: NS });
    unrelated.metadata!.labels = { 'flowpilot.io/secret': 'true' };
    await core.replaceNamespacedSecret({ name: 'unrelated', namespace: NS, body: unrelated });
    await until(() => s.lookup('OTHER'), (v) => v === 'no', 'a Secret that gains the label');
    for (const name of ['team-a', 'unrelated']) await core.deleteNamespacedSecret({ name, namespace: NS });
    await until(() => s.names(), (n) => n.length === 0, 'every secret gone');
  });

  it('can be limited to one Secret of another name', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('custom', { X: 'custom-x' }) });
    await core.createNamespacedSecret({ namespace: NS, body: secret('labelled-b', { Y: 'y' }, { 'flowpilot.io/secret': 'true' }) });
    const s = await source({ secretName: 'custom', labelled: false });
    expect([s.lookup('X'), s.lookup('Y')]).toEqual(['custom-x', undefined]);
    const labelOnly = await source({ secretName: null });
    expect([labelOnly.lookup('X'), labelOnly.lookup('Y')]).toEqual([undefined, 'y']);
    for (const name of ['custom', 'labelled-b']) await core.deleteNamespacedSecret({ name, namespace: NS });
  });
});

describe('the secret layer fed by the Secrets', () => {
  it('masks every value of the Secrets in what is written, read by a flow or not, and follows a rotation', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('layered', { TOKEN: 'first-t0ken' }, { 'flowpilot.io/secret': 'true' }) });
    const s = await source({ secretName: null });
    const layer = new SecretLayer({ values: () => s.values() });
    const off = s.onChange(() => layer.refresh());
    expect(layer.masker().mask('t=first-t0ken')).toBe('t=******');
    const current = await core.readNamespacedSecret({ name: 'layered', namespace: NS });
    await core.replaceNamespacedSecret({ name: 'layered', namespace: NS, body: { ...current, data: { TOKEN: b64('second-t0ken') } } });
    await until(() => layer.masker().mask('t=second-t0ken'), (v) => v === 't=******', 'the rotated value masked');
    off();
    await core.deleteNamespacedSecret({ name: 'layered', namespace: NS });
  });
});

describe('startKubeSecrets without access', () => {
  it('fails to start when the Secrets cannot be listed', async () => {
    await expect(startKubeSecrets({ kc: kube.kubeConfig('no-such-token'), namespace: NS, onError: () => {} })).rejects.toThrow(/401/);
  });
});

describe('startKubeSecrets after its watches end', () => {
  it('watches again and still sees changes', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('rewatch', { R: 'one' }, { 'flowpilot.io/secret': 'true' }) });
    const s = await source({ secretName: null });
    expect(s.lookup('R')).toBe('one');
    kube.closeWatches();
    const current = await core.readNamespacedSecret({ name: 'rewatch', namespace: NS });
    await core.replaceNamespacedSecret({ name: 'rewatch', namespace: NS, body: { ...current, data: { R: b64('two') } } });
    await until(() => s.lookup('R'), (v) => v === 'two', 'the change after the watch was closed');
    await core.deleteNamespacedSecret({ name: 'rewatch', namespace: NS });
    await until(() => s.lookup('R'), (v) => v === undefined, 'the deletion');
  });
});

describe('secret() in flows from Kubernetes Secrets (embedded controller)', () => {
  let api: TestApi;
  let stopController: () => Promise<void>;
  beforeAll(async () => {
    await initExpressions();
    await core.createNamespacedSecret({ namespace: NS, body: secret('flowpilot-secrets', { DB_PASSWORD: 'hunter2-first' }) });
    const s = await source();
    api = await startTestApi();
    const controller = await startController(api.stores, { dataDir: api.dataDir, secrets: (name) => s.lookup(name) });
    stopController = () => controller.stop();
  });
  afterAll(async () => { await stopController?.(); await api?.close(); });

  async function runAndReadLogs(): Promise<string[]> {
    const created = await call(`${api.url}/api/v1/executions/company.team/uses-secret`, jsonInit('POST', {}));
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const done = await until(async () => (await call(`${api.url}/api/v1/executions/${id}`)).body, (e) => ['SUCCESS', 'FAILED'].includes(e?.state?.current), 'the execution');
    expect(done.state.current).toBe('SUCCESS');
    return (await api.stores.logs.forExecution(id)).map((l) => l.message);
  }

  it('renders the value, masks it in logs, and picks up a changed Secret', async () => {
    await createFlow(api, `id: uses-secret
namespace: company.team
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "password={{ secret('DB_PASSWORD') }} upper={{ secret('DB_PASSWORD') | upper }}"
`);
    const first = await runAndReadLogs();
    expect(first).toContain('password=****** upper=HUNTER2-FIRST');
    expect(first.join('\n')).not.toContain('hunter2-first');

    const current = await core.readNamespacedSecret({ name: 'flowpilot-secrets', namespace: NS });
    await core.replaceNamespacedSecret({ name: 'flowpilot-secrets', namespace: NS, body: { ...current, data: { DB_PASSWORD: b64('rotated-second') } } });
    await until(() => sources[sources.length - 1]!.lookup('DB_PASSWORD'), (v) => v === 'rotated-second', 'the rotated value in the cache');
    const second = await runAndReadLogs();
    expect(second).toContain('password=****** upper=ROTATED-SECOND');
    expect(second.join('\n')).not.toContain('rotated-second');
  });
});
