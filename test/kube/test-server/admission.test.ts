// Validating admission webhooks on the test server, called over real HTTP like the kube-apiserver does: the Flow
// webhook of api/admission.ts refuses an invalid Flow on create and update, and the client gets the Status a 1.24
// server answers (its message prefixed `admission webhook "<name>" denied the request: `, code and reason kept, never
// 422 Invalid, which kubectl would rewrite as `The flows "x" is invalid`); nothing is stored.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmissionApp } from '../../../api/admission.js';
import { startKubeTestServer, type KubeTestServer } from './index.js';

const WEBHOOK = 'flows.validation.flowpilot.io';
const flows = { group: 'flowpilot.io', version: 'v1', namespace: 'default', plural: 'flows' };
const flow = (name: string, tasks: unknown[]) => ({
  apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name }, spec: { id: name, namespace: 'company.team', tasks },
});
const LOG = { id: 'a', type: 'ai.service.plugin.core.log.Log', message: 'hi' };

let srv: KubeTestServer | undefined;
let hook: Server | undefined;
afterEach(async () => {
  await srv?.close();
  await new Promise<void>((r) => { if (hook) hook.close(() => r()); else r(); });
  srv = undefined;
  hook = undefined;
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  hook = createServer(handler);
  await new Promise<void>((r) => hook!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(hook.address() as AddressInfo).port}/admission/flows`;
}

const failure = async (p: Promise<unknown>): Promise<{ code: number; body: any }> => {
  try { await p; } catch (err) {
    const e = err as { code: number; body: unknown };
    return { code: e.code, body: typeof e.body === 'string' ? JSON.parse(e.body) : e.body };
  }
  throw new Error('the request succeeded');
};

describe('validating admission webhooks', () => {
  it('denies an invalid Flow on create and update with the webhook\'s own message, as a 1.24 server answers it', async () => {
    const url = await serve(createAdmissionApp().callback());
    srv = await startKubeTestServer({ validatingWebhooks: [{ name: WEBHOOK, group: 'flowpilot.io', resources: ['flows', 'flowrevisions'], url }] });
    const co = srv.kubeConfig().makeApiClient(CustomObjectsApi);
    const denied = await failure(co.createNamespacedCustomObject({ ...flows, body: flow('hello', [{ id: 'a', type: 'nope.Nope' }]) }));
    expect(denied.code).toBe(400);
    expect(denied.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 400, reason: 'BadRequest' });
    expect(denied.body.message).toMatch(/^admission webhook "flows\.validation\.flowpilot\.io" denied the request: Flow company\.team\/hello is invalid: spec\.tasks\[0\]\.type: Unknown task type `nope\.Nope`/);
    expect(denied.body.details.causes).toContainEqual(expect.objectContaining({ field: 'spec.tasks[0].type' }));
    expect(((await co.listNamespacedCustomObject(flows)) as { items: unknown[] }).items).toEqual([]);

    const created: any = await co.createNamespacedCustomObject({ ...flows, body: flow('hello', [LOG]) });
    const update = { ...flow('hello', [{ id: 'a', type: 'nope.Nope' }]), metadata: created.metadata };
    const refused = await failure(co.replaceNamespacedCustomObject({ ...flows, name: 'hello', body: update }));
    expect(refused.code).toBe(400);
    expect(refused.body.message).toContain('denied the request: Flow company.team/hello is invalid: spec.tasks[0].type');
    expect(((await co.getNamespacedCustomObject({ ...flows, name: 'hello' })) as any).spec.tasks).toEqual([LOG]);
  });

  it('shapes a denial like ToStatusErr: code at least 400, "without explanation" when the webhook gives none; a failing webhook is a 500', async () => {
    let answer: unknown = { response: { uid: 'x', allowed: false, status: { code: 200 } } };
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        if (answer === 'broken') { res.writeHead(503).end(); return; }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    srv = await startKubeTestServer({ validatingWebhooks: [{ name: 'any.example.com', group: 'flowpilot.io', resources: ['flows'], url }] });
    const co = srv.kubeConfig().makeApiClient(CustomObjectsApi);
    const bare = await failure(co.createNamespacedCustomObject({ ...flows, body: flow('a', [LOG]) }));
    expect(bare.code).toBe(400);
    expect(bare.body.message).toBe('admission webhook "any.example.com" denied the request without explanation');
    answer = { response: { uid: 'x', allowed: false, status: { code: 403, reason: 'Forbidden', message: 'not on Fridays' } } };
    const forbidden = await failure(co.createNamespacedCustomObject({ ...flows, body: flow('b', [LOG]) }));
    expect(forbidden).toMatchObject({ code: 403, body: { reason: 'Forbidden', message: 'admission webhook "any.example.com" denied the request: not on Fridays' } });
    answer = 'broken';
    const broken = await failure(co.createNamespacedCustomObject({ ...flows, body: flow('c', [LOG]) }));
    expect(broken.code).toBe(500);
    expect(broken.body.message).toMatch(/failed calling webhook "any\.example\.com"/);
    answer = { response: { uid: 'x', allowed: true } };
    await co.createNamespacedCustomObject({ ...flows, body: flow('d', [LOG]) });
  });
});
