// Flow admission webhook over real HTTPS (a self-signed certificate made with the openssl CLI, trusted by the client
// as the API server trusts the chart's caBundle): valid Flows pass, invalid ones are denied naming each field with
// the engine's own messages, deletes and other kinds pass, malformed reviews get 400. Plain HTTP when openssl is absent.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlowValidationError, formatIssue, validateFlow } from '../operator/model/index.js';
import { ADMISSION_PATH, createAdmissionApp, type AdmissionReviewResponse } from './admission.js';
import { startAdmissionServer, type AdmissionServer } from './admission-server.js';

let openssl: string | undefined;
try { openssl = execFileSync('sh', ['-c', 'command -v openssl'], { encoding: 'utf8' }).trim() || undefined; } catch { openssl = undefined; }

const owners = new Map<string, string>([['company.team\u0000taken', 'first-owner']]);
const opts = { ownerOf: (ns: string, id: string) => owners.get(`${ns}\u0000${id}`) };

/** A self-signed certificate for localhost/127.0.0.1 written as tls.crt and tls.key in `into`; returns the certificate. */
function makeCert(into: string): Buffer {
  execFileSync(openssl!, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', join(into, 'tls.key'), '-out', join(into, 'tls.crt')], { stdio: 'ignore' });
  return readFileSync(join(into, 'tls.crt'));
}

let dir: string;
let server: AdmissionServer;
let ca: Buffer | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'admission-'));
  if (openssl) {
    ca = makeCert(dir);
    const env = { ADMISSION_TLS_CERT_FILE: join(dir, 'tls.crt'), ADMISSION_TLS_KEY_FILE: join(dir, 'tls.key'), ADMISSION_PORT: '0' };
    server = (await startAdmissionServer(env, opts, '127.0.0.1'))!;
  } else {
    const http = createAdmissionApp(opts).listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    server = { port: (http.address() as AddressInfo).port, close: () => new Promise((r) => { http.close(() => r()); }) };
  }
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function post(body: string, path = ADMISSION_PATH): Promise<{ status: number; json: any }> {
  const send = ca ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send({
      host: '127.0.0.1', port: server.port, path, method: 'POST', servername: 'localhost', ...(ca ? { ca } : {}),
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const log = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'ai.service.plugin.core.log.Log', message: 'hi', ...extra });
const flow = (spec: Record<string, unknown>, name = 'hello') => ({
  apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name, namespace: 'flowpilot' },
  spec: { id: 'hello', namespace: 'company.team', tasks: [log('a')], ...spec },
});
const FLOW_KIND = { kind: { group: 'flowpilot.io', version: 'v1', kind: 'Flow' }, resource: { group: 'flowpilot.io', version: 'v1', resource: 'flows' } };

async function review(request: Record<string, unknown>): Promise<AdmissionReviewResponse['response']> {
  const uid = `uid-${Math.random().toString(36).slice(2)}`;
  const { status, json } = await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid, ...FLOW_KIND, ...request } }));
  expect(status).toBe(200);
  expect(json).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid } });
  return json.response;
}
const create = (object: unknown) => review({ operation: 'CREATE', name: (object as { metadata: { name: string } }).metadata.name, object });

describe(`POST ${ADMISSION_PATH}${openssl ? ' (https)' : ' (plain http: no openssl)'}`, () => {
  it('allows a valid Flow, without status or warnings', async () => {
    const res = await create(flow({ triggers: [{ id: 'daily', type: 'ai.service.plugin.core.trigger.Schedule', cron: '0 8 * * *', timezone: 'Europe/Paris' }] }));
    expect(res).toEqual({ uid: res.uid, allowed: true });
  });

  it('denies an unknown task type with 400 BadRequest, naming the flow and spec.tasks[0].type', async () => {
    const res = await create(flow({ tasks: [{ id: 'a', type: 'io.kestra.plugin.foo.Bar' }] }));
    expect(res.allowed).toBe(false);
    expect(res.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(res.status!.message).toMatch(/^Flow company\.team\/hello is invalid: spec\.tasks\[0\]\.type: Unknown task type `io\.kestra\.plugin\.foo\.Bar`/);
    expect(res.status!.details!.causes).toContainEqual(expect.objectContaining({ field: 'spec.tasks[0].type' }));
  });

  it('reads well in kubectl (modelled: kube-apiserver 1.24 and current ToStatusErr + kubectl checkErr; no kubectl can run here)', async () => {
    const res = await create(flow({ tasks: [{ id: 'a', type: 'io.kestra.plugin.foo.Bar' }] }));
    const shown = asKubectlPrints(res.status);
    expect(shown).toMatch(/^Error from server \(BadRequest\): error when creating "hello\.yaml": admission webhook "flows\.validation\.flowpilot\.io" denied the request: Flow company\.team\/hello is invalid: spec\.tasks\[0\]\.type: Unknown task type/);
    expect(asKubectlPrints(res.status, 'current')).toMatch(/^Error from server \(BadRequest\): error when creating "hello\.yaml": flows\.flowpilot\.io "hello" is forbidden: admission webhook "flows\.validation\.flowpilot\.io" denied the request: Flow company\.team\/hello is invalid: /);
    // What the former 422 Invalid denial printed: kubectl rebuilt it from details, dropping the webhook's message.
    const former = { ...res.status!, code: 422, reason: 'Invalid' };
    expect(asKubectlPrints(former)).toMatch(/^The flows "hello" is invalid: spec\.tasks\[0\]\.type: /);
    expect(asKubectlPrints({ ...former, reason: '' })).toMatch(/^The flows "hello" is invalid/); // 422 alone is Invalid to kubectl
  });

  it('denies duplicate task ids and lists every problem with the engine validator\'s own messages', async () => {
    const spec = { tasks: [log('a'), log('a')], triggers: [{ id: 't', type: 'ai.service.plugin.core.trigger.Schedule', cron: '61 * * *', timezone: 'Mars/Olympus' }] };
    const res = await create(flow(spec));
    expect(res.allowed).toBe(false);
    const message = res.status!.message;
    expect(message).toContain('spec.tasks[1].id: duplicate task id `a` (also used at tasks[0])');
    expect(message).toMatch(/spec\.triggers\[0\]\.cron: `61 \* \* \*` is not a cron expression/);
    expect(message).toContain('spec.triggers[0].timezone: `Mars/Olympus` is not a known time zone');
    // The same issues reconcile would write into Ready=False (validateFlow), each prefixed with spec.
    let issues: { path: string; message: string }[] = [];
    try { validateFlow(structuredClone(flow(spec).spec)); } catch (err) { issues = (err as FlowValidationError).errors; }
    expect(issues.length).toBe(3);
    for (const i of issues) expect(message).toContain(formatIssue({ path: `spec.${i.path}`, message: i.message }));
  });

  it('denies reserved names in ids and keys (`__proto__`, `constructor`, `prototype`), naming each field', async () => {
    const spec = JSON.parse(`{"inputs":[{"id":"a.__proto__.disabled","type":"BOOLEAN","defaults":true}],
      "variables":{"__proto__":{"polluted":true}},"labels":{"constructor":"x"}}`) as Record<string, unknown>;
    const res = await create(flow(spec));
    expect(res.allowed).toBe(false);
    const fields = res.status!.details!.causes.map((c) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['spec.inputs[0].id', 'spec.variables.__proto__', 'spec.labels.constructor']));
    expect(res.status!.message).toContain('spec.inputs[0].id: `a.__proto__.disabled` uses the reserved name `__proto__`');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('denies a bad cron on UPDATE too', async () => {
    const res = await review({ operation: 'UPDATE', name: 'hello', oldObject: flow({}), object: flow({ triggers: [{ id: 't', type: 'ai.service.plugin.core.trigger.Schedule', cron: 'every day' }] }) });
    expect(res.allowed).toBe(false);
    expect(res.status!.message).toContain('spec.triggers[0].cron: `every day` is not a cron expression');
  });

  it('denies a Flow without spec and a flow already defined by another Flow resource, allows its owner', async () => {
    const noSpec = await create({ apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name: 'empty' } });
    expect(noSpec.status!.message).toMatch(/^Flow "empty" is invalid: spec: /); // no flow id: the resource name
    const taken = await create(flow({ id: 'taken' }, 'second'));
    expect(taken.allowed).toBe(false);
    expect(taken.status!.message).toBe("Flow company.team/taken is invalid: spec.id: Flow company.team.taken is already defined by Flow resource 'first-owner'");
    expect((await create(flow({ id: 'taken' }, 'first-owner'))).allowed).toBe(true);
  });

  it('allows DELETE, status updates and other kinds whatever their content', async () => {
    const bad = flow({ tasks: [{ id: 'a', type: 'nope' }] });
    expect((await review({ operation: 'DELETE', name: 'hello', oldObject: bad })).allowed).toBe(true);
    expect((await review({ operation: 'UPDATE', subResource: 'status', object: bad, oldObject: bad })).allowed).toBe(true);
    const execution = { kind: { group: 'flowpilot.io', version: 'v1', kind: 'Execution' }, resource: { group: 'flowpilot.io', version: 'v1', resource: 'executions' } };
    expect((await review({ ...execution, operation: 'CREATE', object: { spec: { inputs: { x: 1 } } } })).allowed).toBe(true);
  });

  it('keeps FlowRevisions immutable: a spec change is denied, a metadata-only update allowed', async () => {
    const kind = { kind: { group: 'flowpilot.io', version: 'v1', kind: 'FlowRevision' }, resource: { group: 'flowpilot.io', version: 'v1', resource: 'flowrevisions' } };
    const rev = (source: string, labels: Record<string, string> = {}) => ({ metadata: { name: 'fl-x-r1', labels }, spec: { namespace: 'company.team', id: 'hello', revision: 1, source } });
    const changed = await review({ ...kind, operation: 'UPDATE', name: 'fl-x-r1', oldObject: rev('a'), object: rev('b') });
    expect(changed.allowed).toBe(false);
    expect(changed.status).toMatchObject({ code: 400, reason: 'BadRequest', message: expect.stringContaining('is immutable') });
    expect((await review({ ...kind, operation: 'UPDATE', name: 'fl-x-r1', oldObject: rev('a'), object: rev('a', { team: 'x' }) })).allowed).toBe(true);
    expect((await review({ ...kind, operation: 'CREATE', name: 'fl-x-r1', object: rev('a') })).allowed).toBe(true);
  });

  it('warns about a changed flow id, still allowing; descriptions are not rendered', async () => {
    const res = await review({
      operation: 'UPDATE', name: 'hello', oldObject: flow({}),
      object: flow({ id: 'renamed', description: 'literal {{ not rendered', tasks: [log('a', { message: 'Hello {{ inputs.name }}' })] }),
    });
    expect(res.allowed).toBe(true);
    expect(res.warnings).toHaveLength(1);
    expect(res.warnings![0]).toMatch(/^spec\.id\/spec\.namespace changed from company\.team\.hello to company\.team\.renamed/);
  });

  it('denies expressions that do not parse or name unknown filters, as the save-time check does', async () => {
    const res = await review({
      operation: 'UPDATE', name: 'hello', oldObject: flow({}),
      object: flow({ tasks: [log('a', { message: 'Hello {{ inputs.name ' }), log('b', { message: '{{ x | nosuchfilter }}' })] }),
    });
    expect(res.allowed).toBe(false);
    expect(res.status!.message).toContain('spec.tasks[0].message: Invalid expression in `Hello {{ inputs.name `');
    expect(res.status!.message).toContain('spec.tasks[1].message: unknown filter `nosuchfilter`');
  });

  it('answers 400 to a malformed AdmissionReview and 404 elsewhere', async () => {
    expect((await post('{not json')).status).toBe(400);
    expect((await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } }))).status).toBe(400);
    const noUid = await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }));
    expect(noUid).toMatchObject({ status: 400, json: { message: 'AdmissionReview request has no uid' } });
    expect((await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }))).status).toBe(400);
    expect((await post('{}', '/api/v1/flows')).status).toBe(404);
  });
});

describe('startAdmissionServer', () => {
  it('starts nothing when the TLS files are not configured', async () => {
    expect(await startAdmissionServer({ ADMISSION_PORT: '0' })).toBeUndefined();
    expect(await startAdmissionServer({ ADMISSION_TLS_CERT_FILE: '/nonexistent' })).toBeUndefined();
  });

  it.skipIf(!openssl)('serves TLS only: a client that does not trust the certificate is refused', async () => {
    const err = await new Promise<Error>((resolve) => {
      const req = httpsRequest({ host: '127.0.0.1', port: server.port, path: ADMISSION_PATH, method: 'POST', servername: 'localhost' }, () => resolve(new Error('answered')));
      req.on('error', resolve);
      req.end('{}');
    });
    expect((err as NodeJS.ErrnoException).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/);
  });

  it.skipIf(!openssl)('re-reads renewed certificate files and serves the new one without a restart', async () => {
    const own = mkdtempSync(join(tmpdir(), 'admission-reload-'));
    const first = makeCert(own);
    const env = { ADMISSION_TLS_CERT_FILE: join(own, 'tls.crt'), ADMISSION_TLS_KEY_FILE: join(own, 'tls.key'), ADMISSION_PORT: '0' };
    const s = (await startAdmissionServer(env, { reloadIntervalMs: 50 }, '127.0.0.1'))!;
    const trusts = (trusted: Buffer) => new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: s.port, servername: 'localhost', ca: trusted }, () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    try {
      expect(await trusts(first)).toBe(true);
      const second = makeCert(own);
      let ok = false;
      for (let i = 0; i < 200 && !ok; i++) {
        ok = await trusts(second);
        if (!ok) await new Promise((r) => setTimeout(r, 50));
      }
      expect(ok).toBe(true);
      expect(await trusts(first)).toBe(false);
    } finally {
      await s.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

type Status = { code: number; reason: string; message: string; details?: { name?: string; kind?: string; causes?: { field: string; message: string }[] } };

/**
 * What `kubectl create -f hello.yaml` prints for a webhook denial: the API server's ToStatusErr (1.24: prefix the
 * message, pass code/reason/details through; current: also `<resource> "<name>" is forbidden: ` and reason Forbidden
 * when none) and kubectl's checkErr (an Invalid error, reason Invalid or code 422 with a reason it does not know, is
 * rebuilt from details; others print `Error from server (<reason>): <message>`, with AddSourceToErr's file prefix).
 */
function asKubectlPrints(status: Status | undefined, server: '1.24' | 'current' = '1.24'): string {
  const s = { ...status! };
  s.message = `admission webhook "flows.validation.flowpilot.io" denied the request: ${s.message}`;
  if (server === 'current') {
    s.message = `flows.flowpilot.io "${s.details?.name ?? 'Unknown'}" is forbidden: ${s.message}`;
    if (!s.reason) s.reason = 'Forbidden';
  }
  const known = new Set(['Unauthorized', 'Forbidden', 'NotFound', 'AlreadyExists', 'Conflict', 'Gone', 'Invalid', 'ServerTimeout', 'Timeout', 'TooManyRequests', 'BadRequest', 'MethodNotAllowed', 'NotAcceptable', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'InternalError', 'Expired', 'ServiceUnavailable']);
  const invalid = s.reason === 'Invalid' || (!known.has(s.reason) && s.code === 422);
  if (invalid) {
    const d = s.details;
    if (!d) return 'The request is invalid';
    const head = d.kind || d.name ? `The ${d.kind} "${d.name}" is invalid` : 'The request is invalid';
    const causes = (d.causes ?? []).map((c) => `${c.field}: ${c.message}`);
    return causes.length === 1 ? `${head}: ${causes[0]}` : causes.length ? `${head}: \n${causes.map((c) => `* ${c}`).join('\n')}` : head;
  }
  const message = `error when creating "hello.yaml": ${s.message}`;
  return s.reason ? `Error from server (${s.reason}): ${message}` : `Error from server: ${message}`;
}
