// The OwnerReferencesPermissionEnforcement admission plugin of the test server, through client-node: setting an
// ownerReference needs delete on the object, blockOwnerDeletion needs update on the owner's <resource>/finalizers
// (403 Forbidden with the real messages); unchanged references need nothing; off unless asked for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Job, type V1OwnerReference } from '@kubernetes/client-node';
import { startKubeTestServer, type AuthzAttributes, type KubeTestServer } from './index.js';
import { widgetCrd } from './fixtures.js';

const G = 'test.flowpilot.io';
const NS = 'adm';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** What each user may do (verb resource[/subresource]); admin may do anything. */
const GRANTS: Record<string, string[]> = {
  maker: ['create jobs', 'get jobs', 'patch jobs', 'delete jobs'],
  nodelete: ['create jobs', 'get jobs', 'patch jobs'],
  finalizer: ['create jobs', 'get jobs', 'patch jobs', 'delete jobs', 'update widgets/finalizers'],
};
const asked: AuthzAttributes[] = [];
let srv: KubeTestServer;
let plain: KubeTestServer;
let owner: { apiVersion: string; kind: string; metadata: { name: string; uid: string } };

function authorize(a: AuthzAttributes): boolean {
  asked.push(a);
  if (a.user === 'admin') return true;
  return (GRANTS[a.user] ?? []).includes(`${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''}`);
}

const tokens = Object.fromEntries(['admin', ...Object.keys(GRANTS)].map((u) => [`${u}-token`, { username: u }]));
const batchAs = (s: KubeTestServer, user: string) => s.kubeConfig(`${user}-token`).makeApiClient(BatchV1Api);
const ref = (extra: Partial<V1OwnerReference> = {}): V1OwnerReference => ({ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, ...extra });
const job = (name: string, refs: V1OwnerReference[] = []): V1Job => ({
  metadata: name.endsWith('-') ? { generateName: name, ownerReferences: refs } : { name, ownerReferences: refs },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] } } },
});
/** The refusal's Status (code, reason, message), or 'created' / 'updated'. */
const outcome = (p: Promise<unknown>, ok: string): Promise<unknown> => p.then(() => ok, (e) => {
  if (typeof e?.code !== 'number') throw e;
  const s = JSON.parse(e.body);
  return { code: s.code, reason: s.reason, message: s.message };
});

beforeAll(async () => {
  const opts = { crds: [widgetCrd()], tokens, authorize, authorizeRequests: true };
  srv = await startKubeTestServer({ ...opts, ownerReferencesPermissionEnforcement: true });
  plain = await startKubeTestServer(opts);
  for (const s of [plain, srv]) { // `owner` ends as srv's (the one whose Jobs must not be collected)
    owner = await s.kubeConfig('admin-token').makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: G, version: 'v1', namespace: NS, plural: 'widgets', body: { apiVersion: `${G}/v1`, kind: 'Widget', metadata: { name: 'owner' }, spec: { size: 1 } },
    }) as typeof owner;
  }
});
afterAll(async () => { await srv.close(); await plain.close(); });

describe('OwnerReferencesPermissionEnforcement', () => {
  it('is off unless asked for (upstream default)', async () => {
    expect(await outcome(batchAs(plain, 'nodelete').createNamespacedJob({ namespace: NS, body: job('off', [ref({ blockOwnerDeletion: true })]) }), 'created')).toBe('created');
  });

  it('blockOwnerDeletion needs update on the owner\'s <resource>/finalizers', async () => {
    asked.length = 0;
    expect(await outcome(batchAs(srv, 'maker').createNamespacedJob({ namespace: NS, body: job('blocking', [ref({ blockOwnerDeletion: true })]) }), 'created')).toEqual({
      code: 403, reason: 'Forbidden',
      message: 'jobs.batch "blocking" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>',
    });
    expect(asked).toContainEqual(expect.objectContaining({ user: 'maker', verb: 'delete', group: 'batch', resource: 'jobs', name: 'blocking', namespace: NS }));
    expect(asked).toContainEqual(expect.objectContaining({ user: 'maker', verb: 'update', group: G, version: 'v1', resource: 'widgets', subresource: 'finalizers', name: 'owner', namespace: NS }));
    expect(await outcome(batchAs(srv, 'finalizer').createNamespacedJob({ namespace: NS, body: job('blocking', [ref({ blockOwnerDeletion: true })]) }), 'created')).toBe('created');
  });

  it('any ownerReference needs delete on the object itself; without blockOwnerDeletion nothing more', async () => {
    expect(await outcome(batchAs(srv, 'nodelete').createNamespacedJob({ namespace: NS, body: job('nodel', [ref()]) }), 'created')).toEqual({
      code: 403, reason: 'Forbidden', message: 'jobs.batch "nodel" is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>',
    });
    expect(await outcome(batchAs(srv, 'nodelete').createNamespacedJob({ namespace: NS, body: job('norefs') }), 'created')).toBe('created');
    expect(await outcome(batchAs(srv, 'maker').createNamespacedJob({ namespace: NS, body: job('nonblocking', [ref({ blockOwnerDeletion: false })]) }), 'created')).toBe('created');
    // generateName: the name is not known at admission, nor in the message (as in the real server).
    expect(await outcome(batchAs(srv, 'nodelete').createNamespacedJob({ namespace: NS, body: job('gen-', [ref()]) }), 'created')).toMatchObject({
      code: 403, message: 'jobs.batch is forbidden: cannot set an ownerRef on a resource you can\'t delete: , <nil>',
    });
  });

  it('updates: unchanged references need nothing, turning blockOwnerDeletion on needs the finalizers grant', async () => {
    await batchAs(srv, 'finalizer').createNamespacedJob({ namespace: NS, body: job('upd', [ref({ blockOwnerDeletion: false })]) });
    const label = { metadata: { labels: { touched: 'yes' } } };
    expect(await outcome(batchAs(srv, 'nodelete').patchNamespacedJob({ namespace: NS, name: 'upd', body: label }, merge), 'updated')).toBe('updated');
    const block = { metadata: { ownerReferences: [ref({ blockOwnerDeletion: true })] } };
    expect(await outcome(batchAs(srv, 'maker').patchNamespacedJob({ namespace: NS, name: 'upd', body: block }, merge), 'updated')).toMatchObject({
      code: 403, message: expect.stringContaining('jobs.batch "upd" is forbidden: cannot set blockOwnerDeletion'),
    });
    expect(await outcome(batchAs(srv, 'finalizer').patchNamespacedJob({ namespace: NS, name: 'upd', body: block }, merge), 'updated')).toBe('updated');
    // Already blocking: a further change of the references needs delete on the Job only.
    const renamed = { metadata: { ownerReferences: [ref({ blockOwnerDeletion: true, controller: false })] } };
    expect(await outcome(batchAs(srv, 'maker').patchNamespacedJob({ namespace: NS, name: 'upd', body: renamed }, merge), 'updated')).toBe('updated');
  });

  it('an owner kind the server does not serve is refused with the RESTMapping message', async () => {
    const bad = ref({ apiVersion: `${G}/v1`, kind: 'Gadget', blockOwnerDeletion: true });
    expect(await outcome(batchAs(srv, 'finalizer').createNamespacedJob({ namespace: NS, body: job('unmapped', [bad]) }), 'created')).toMatchObject({
      code: 403,
      message: `jobs.batch "unmapped" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${G}/v1 Kind Gadget: , no matches for kind "Gadget" in version "${G}/v1"`,
    });
  });
});
