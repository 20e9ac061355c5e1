// API tests of namespaces as things: create / update / delete, a namespace that only exists through flows, search with
// parents of flow namespaces, inherited variables and plugin defaults, bad input naming the field, NAMESPACE_MAX_BYTES,
// and the namespace lists of flows and executions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ limits: { ...(await import('../../operator/core/limits.js')).DEFAULT_LIMITS, namespaceMaxBytes: 2048 } });
  await createFlow(api, simpleFlow('company.team.etl', 'load'));
  await createFlow(api, simpleFlow('company.team.etl', 'clean'));
  await createFlow(api, simpleFlow('company.ops', 'backup', 'disabled: true'));
  await createFlow(api, simpleFlow('other', 'gone'));
  expect((await call(`${api.url}/api/v1/flows/other/gone`, { method: 'DELETE' })).status).toBe(204);
});
afterAll(async () => { await api.close(); });

const ns = (path = ''): string => `${api.url}/api/v1/namespaces${path}`;
const LOG = 'io.kestra.plugin.core.log.Log';

describe('namespace objects', () => {
  it('answers a namespace that only exists through flows as Kestra does: its id, nothing stored', async () => {
    const res = await call(ns('/company.team'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'company.team', deleted: false, description: null, variables: {}, pluginDefaults: [], allowedNamespaces: [] });
  });

  it('creates, reads, updates and deletes a namespace', async () => {
    const body = { id: 'company.team', description: 'The team', variables: { region: 'eu', db: { host: 'h' } }, pluginDefaults: [{ type: LOG, values: { level: 'WARN' }, forced: true }] };
    const created = await call(ns(), jsonInit('POST', body));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject(body);
    expect((await call(ns(), jsonInit('POST', body))).status).toBe(409);
    expect((await call(ns('/company.team'))).body).toMatchObject(body);
    const updated = await call(ns('/company.team'), jsonInit('PUT', { ...body, variables: { region: 'us' } }));
    expect(updated.status).toBe(200);
    expect((await call(ns('/company.team'))).body.variables).toEqual({ region: 'us' });
    expect((await call(ns('/company.team'), { method: 'DELETE' })).status).toBe(204);
    expect((await call(ns('/company.team'), { method: 'DELETE' })).status).toBe(404);
    expect((await call(ns('/company.team'))).body.variables).toEqual({});
  });

  it('PUT creates a namespace that only existed through flows; the id comes from the path', async () => {
    const res = await call(ns('/company.ops'), jsonInit('PUT', { variables: { a: 1 } }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'company.ops', variables: { a: 1 } });
  });

  it.each([
    [{ id: 'Bad Id' }, 'id'],
    [{ id: 'x', variables: [1] }, 'variables'],
    [{ id: 'x', pluginDefaults: [{ type: LOG }] }, 'pluginDefaults[0].values'],
    [{ id: 'x', pluginDefaults: [{ type: LOG, values: {}, forced: 'yes' }] }, 'pluginDefaults[0].forced'],
    [{ id: 'x', pluginDefaults: [{ type: LOG, values: {}, extra: 1 }] }, 'pluginDefaults[0].extra'],
    [{ id: 'x', allowedNamespaces: [{ namespace: 'y' }] }, 'allowedNamespaces'],
    [{ id: 'x', workerGroup: { key: 'gpu' } }, 'workerGroup'],
    [{ id: 'x', colour: 'blue' }, 'colour'],
    [{ id: 'x', variables: JSON.parse('{"__proto__": {"polluted": 1}}') }, 'variables.__proto__'],
  ])('refuses %j with 422 naming %s', async (body, path) => {
    const res = await call(ns(), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('refuses a path id that differs from the body id', async () => {
    const res = await call(ns('/company.a'), jsonInit('PUT', { id: 'company.b' }));
    expect(res.status).toBe(422);
    expect(res.body.errors[0].path).toBe('id');
  });

  it('accepts the unset Enterprise fields a Kestra client sends back', async () => {
    const res = await call(ns('/echo'), jsonInit('PUT', { id: 'echo', deleted: false, allowedNamespaces: [], workerGroup: null, variables: {}, pluginDefaults: [] }));
    expect(res.status).toBe(200);
  });

  it('refuses a namespace over NAMESPACE_MAX_BYTES with 413 naming the setting', async () => {
    const res = await call(ns('/big'), jsonInit('PUT', { variables: { blob: 'x'.repeat(4096) } }));
    expect(res.status).toBe(413);
    expect(res.body.message).toContain('NAMESPACE_MAX_BYTES');
    expect((await call(ns('/big'))).body.variables).toEqual({});
  });

  it('lists what a namespace inherits from its parents (the nearest wins)', async () => {
    await call(ns('/inh'), jsonInit('PUT', { variables: { a: 'root', m: { x: 1, y: 1 } }, pluginDefaults: [{ type: LOG, values: { level: 'DEBUG' } }] }));
    await call(ns('/inh.mid'), jsonInit('PUT', { variables: { a: 'mid', m: { y: 2 } }, pluginDefaults: [{ type: LOG, values: { level: 'INFO' } }] }));
    await call(ns('/inh.mid.leaf'), jsonInit('PUT', { variables: { a: 'leaf' } }));
    expect((await call(ns('/inh.mid.leaf/inherited-variables'))).body).toEqual({ a: 'mid', m: { x: 1, y: 2 } });
    expect((await call(ns('/inh.mid.leaf/inherited-plugindefaults'))).body.map((d: any) => d.values.level)).toEqual(['INFO', 'DEBUG']);
    expect((await call(ns('/inh/inherited-variables'))).body).toEqual({});
  });
});

describe('namespace search', () => {
  it('includes the parents of flow namespaces, stored ones, and filters with q', async () => {
    const all = (await call(ns('/search?size=100'))).body;
    const ids = all.results.map((n: { id: string }) => n.id);
    expect(ids).toEqual(expect.arrayContaining(['company', 'company.team', 'company.team.etl', 'company.ops', 'echo', 'inh.mid.leaf']));
    expect(ids).not.toContain('other'); // only a deleted flow was there
    expect(ids).toEqual([...ids].sort());
    expect(all.total).toBe(ids.length);
    const q = (await call(ns('/search?q=TEAM&size=100'))).body;
    expect(q.results.map((n: { id: string }) => n.id)).toEqual(['company.team', 'company.team.etl']);
  });

  it('pages, sorts descending, and keeps only stored namespaces with existing=true', async () => {
    const page = (await call(ns('/search?size=2&page=2&sort=id:desc'))).body;
    const all = (await call(ns('/search?size=100&sort=id:desc'))).body;
    expect(page.results.map((n: any) => n.id)).toEqual(all.results.slice(2, 4).map((n: any) => n.id));
    const existing = (await call(ns('/search?existing=true&size=100'))).body.results.map((n: any) => n.id);
    expect(existing).toContain('company.ops');
    expect(existing).not.toContain('company.team.etl');
  });
});

describe('namespace lists of other resources', () => {
  it('GET /flows/distinct-namespaces answers the namespaces of live flows', async () => {
    const res = await call(`${api.url}/api/v1/flows/distinct-namespaces`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['company.ops', 'company.team.etl']);
    expect((await call(`${api.url}/api/v1/flows/distinct-namespaces?q=ops`)).body).toEqual(['company.ops']);
  });

  it('GET /executions/namespaces answers the namespaces of executable (live, enabled) flows, and their flows', async () => {
    expect((await call(`${api.url}/api/v1/executions/namespaces`)).body).toEqual(['company.team.etl']);
    const flows = (await call(`${api.url}/api/v1/executions/namespaces/company.team.etl/flows`)).body;
    expect(flows.map((f: { id: string }) => f.id)).toEqual(['clean', 'load']);
    expect(flows[0]).toMatchObject({ namespace: 'company.team.etl', revision: 1, tasks: [{ id: 'hello' }], disabled: false });
    expect(flows[0].source).toBeUndefined();
    expect((await call(`${api.url}/api/v1/executions/namespaces/company.ops/flows`)).body).toEqual([]);
  });
});

describe('namespace ids and autocomplete (Kestra OSS routes)', () => {
  it('GET /namespaces/ids lists every known namespace with the parents', async () => {
    const ids = (await call(ns('/ids'))).body;
    expect(ids).toEqual(expect.arrayContaining(['company', 'company.team', 'company.team.etl', 'echo']));
    expect(ids).toEqual([...ids].sort());
  });

  it('POST /namespaces/autocomplete matches q, always includes the ids asked for that exist, refuses bad fields', async () => {
    expect((await call(ns('/autocomplete'), jsonInit('POST', { q: 'etl' }))).body).toEqual(['company.team.etl']);
    expect((await call(ns('/autocomplete'), jsonInit('POST', { q: 'etl', ids: ['echo', 'absent'] }))).body).toEqual(['company.team.etl', 'echo']);
    expect((await call(ns('/autocomplete'), jsonInit('POST', { q: 'company', existingOnly: true }))).body).toEqual(['company.ops']);
    const bad = await call(ns('/autocomplete'), jsonInit('POST', { ids: 'echo' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('ids');
  });
});
