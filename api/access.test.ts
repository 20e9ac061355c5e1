// The route → Kubernetes permission table: every route the API registers has a rule, and sample requests map to the
// expected verb and resource (both URL forms, router-like specificity, public webhooks, fail-closed unknown routes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedStores } from '../operator/store/sqlite/index.js';
import { accessFor } from './access.js';
import { createApiRouter } from './app.js';

const dir = mkdtempSync(path.join(tmpdir(), 'access-test-'));
const stores = openEmbeddedStores(dir);
afterAll(async () => { await stores.close(); rmSync(dir, { recursive: true, force: true }); });

const check = (verb: string, resource: string) => ({ kind: 'resource', checks: [{ verb, group: 'flowpilot.io', resource }] });

describe('accessFor', () => {
  it('has a rule for every route the API router registers', () => {
    const router = createApiRouter({ stores });
    const missing: string[] = [];
    for (const layer of router.stack) {
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        const sample = String(layer.path).replace(/:[A-Za-z]+/g, 'x1');
        if (accessFor(method, sample).kind === 'unmapped') missing.push(`${method} ${layer.path}`);
      }
    }
    expect(router.stack.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it.each([
    ['GET', '/api/v1/flows/search', check('list', 'flows')],
    ['GET', '/api/v1/flows/company.team', check('list', 'flows')],
    ['GET', '/api/v1/flows/company.team/hello', check('get', 'flows')],
    ['GET', '/api/v1/main/flows/company.team/hello/', check('get', 'flows')],
    ['HEAD', '/api/v1/flows/company.team/hello', check('get', 'flows')],
    ['POST', '/api/v1/flows', check('create', 'flows')],
    ['DELETE', '/api/v1/flows/company.team/hello', check('delete', 'flows')],
    ['POST', '/api/v1/executions/company.team/hello', check('create', 'executions')],
    ['POST', '/api/v1/executions/e1/restart', check('update', 'executions')],
    ['GET', '/api/v1/executions/search', check('list', 'executions')],
    ['GET', '/api/v1/EXECUTIONS/e1', check('get', 'executions')],
    ['GET', '/api/v1/logs/e1', check('get', 'executions')],
    ['GET', '/api/v1/logs/search', check('list', 'executions')],
    ['GET', '/api/v1/namespaces/company/kv', check('list', 'kvpairs')],
    ['DELETE', '/api/v1/namespaces/company/kv/k', check('delete', 'kvpairs')],
    ['PUT', '/api/v1/triggers/backfill/pause', check('update', 'triggerstates')],
    ['GET', '/api/v1/namespaces/company/files', check('get', 'namespacefiles')],
    ['GET', '/api/v1/main/namespaces/company/files/directory', check('list', 'namespacefiles')],
    ['DELETE', '/api/v1/namespaces/company/files', check('delete', 'namespacefiles')],
    ['POST', '/api/v1/namespaces/company/files/directory', check('create', 'namespacefiles')],
    ['PUT', '/api/v1/namespaces/company/kv/k', {
      kind: 'resource', checks: [{ verb: 'create', group: 'flowpilot.io', resource: 'kvpairs' }, { verb: 'update', group: 'flowpilot.io', resource: 'kvpairs' }],
    }],
    ['POST', '/api/v1/executions/webhook/company/hello/key', { kind: 'public' }],
    ['GET', '/api/v1/main/executions/webhook/company/hello/key', { kind: 'public' }],
    ['POST', '/api/v1/executions/webhook/company//key', { kind: 'unmapped' }],
    ['GET', '/healthz', { kind: 'public' }],
    ['GET', '/', { kind: 'public' }],
    ['GET', '/ui', { kind: 'public' }],
    ['GET', '/ui/flows/edit/company/hello/overview', { kind: 'public' }],
    ['GET', '/ui/assets/index-abc123.js', { kind: 'public' }],
    ['GET', '/v1/models', { kind: 'public' }],
    ['GET', '/metrics', { kind: 'nonResource', verb: 'get', path: '/metrics' }],
    ['GET', '/api/v1/unknown', { kind: 'unmapped' }],
    ['PATCH', '/api/v1/flows/company/hello', { kind: 'unmapped' }],
    ['GET', '/api/v1/%66lows/search', { kind: 'unmapped' }],
    ['GET', '/api', { kind: 'unmapped' }],
  ])('%s %s', (method, p, access) => {
    expect(accessFor(method, p)).toEqual(access);
  });
});
