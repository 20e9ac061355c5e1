// API tests of /api/v1/flows against the real app and embedded stores: revisions, validation, search, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createFlow, LOG_TYPE, simpleFlow, startTestApi, yamlInit, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => { api = await startTestApi(); });
afterAll(async () => { await api.close(); });

const flows = (): string => `${api.url}/api/v1/flows`;

describe('flow creation and revisions', () => {
  it('creates a flow at revision 1 with its source', async () => {
    const yaml = simpleFlow('company.team', 'hello');
    const res = await call(flows(), yamlInit('POST', yaml));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'hello', namespace: 'company.team', revision: 1, source: yaml });
    expect(res.body.tasks[0]).toMatchObject({ id: 'hello', type: LOG_TYPE });
  });

  it('keeps the revision for an identical source and bumps it for a changed one', async () => {
    const yaml = simpleFlow('company.team', 'revs');
    expect((await createFlow(api, yaml)).revision).toBe(1);
    expect((await createFlow(api, yaml)).revision).toBe(1);
    const changed = simpleFlow('company.team', 'revs', 'description: changed');
    expect((await createFlow(api, changed)).revision).toBe(2);
    const list = await call(`${flows()}/company.team/revs/revisions`);
    expect(list.status).toBe(200);
    expect(list.body.map((f: { revision: number }) => f.revision)).toEqual([1, 2]);
    expect(list.body[1].source).toBe(changed);
  });

  it('reads the latest or a given revision, with the source on demand', async () => {
    const latest = await call(`${flows()}/company.team/revs`);
    expect(latest.status).toBe(200);
    expect(latest.body).toMatchObject({ id: 'revs', revision: 2, description: 'changed' });
    expect(latest.body.source).toBeUndefined();
    const first = await call(`${flows()}/company.team/revs?revision=1&source=true`);
    expect(first.body.revision).toBe(1);
    expect(first.body.description).toBeUndefined();
    expect(first.body.source).toContain('id: revs');
    expect((await call(`${flows()}/company.team/revs?revision=9`)).status).toBe(404);
    expect((await call(`${flows()}/company.team/revs?revision=abc`)).status).toBe(400);
    expect((await call(`${flows()}/company.team/nope`)).status).toBe(404);
    expect((await call(`${flows()}/company.team/nope/revisions`)).status).toBe(404);
  });
});

describe('flow validation errors', () => {
  it('answers 422 naming the invalid field', async () => {
    const res = await call(flows(), yamlInit('POST', 'id: bad\nnamespace: company.team\ntasks: []\n'));
    expect(res.status).toBe(422);
    expect(res.body.message).toMatch(/tasks/);
    expect(res.body.errors.some((e: { path: string }) => e.path.startsWith('tasks'))).toBe(true);
  });

  it('answers 422 for a task missing its type, naming the task path', async () => {
    const res = await call(flows(), yamlInit('POST', 'id: bad\nnamespace: company.team\ntasks:\n  - id: t1\n'));
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.errors)).toMatch(/tasks\[0\]/);
  });

  it('answers 400 for malformed YAML and for an empty body', async () => {
    const res = await call(flows(), yamlInit('POST', 'id: [unclosed\nnamespace: x\n'));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/YAML/);
    expect((await call(flows(), yamlInit('POST', ''))).status).toBe(400);
  });
});

describe('hostile YAML', () => {
  it('answers 400 (not 500) for an alias bomb, and validate reports it', async () => {
    const rows = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [n, p] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e']]) rows.push(`${n}: &${n} [${Array(9).fill(`*${p}`).join(',')}]`);
    const bomb = `${rows.join('\n')}\nid: x\nnamespace: y\ntasks: []\n`;
    const res = await call(flows(), yamlInit('POST', bomb));
    expect(res.status).toBe(400);
    const v = await call(`${flows()}/validate`, yamlInit('POST', bomb));
    expect(v.status).toBe(200);
    expect(v.body[0].constraints).toMatch(/alias/i);
  });
});

describe('flow update', () => {
  it('updates through PUT and creates a new revision', async () => {
    await createFlow(api, simpleFlow('company.team', 'upd'));
    const res = await call(`${flows()}/company.team/upd`, yamlInit('PUT', simpleFlow('company.team', 'upd', 'description: v2')));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ revision: 2, description: 'v2' });
  });

  it('rejects a body whose id or namespace differs from the path', async () => {
    const otherId = await call(`${flows()}/company.team/upd`, yamlInit('PUT', simpleFlow('company.team', 'other')));
    expect(otherId.status).toBe(400);
    expect(otherId.body.errors[0].path).toBe('id');
    const otherNs = await call(`${flows()}/company.team/upd`, yamlInit('PUT', simpleFlow('company.other', 'upd')));
    expect(otherNs.status).toBe(400);
    expect(otherNs.body.errors[0].path).toBe('namespace');
  });

  it('answers 404 for a flow that does not exist', async () => {
    const res = await call(`${flows()}/company.team/ghost`, yamlInit('PUT', simpleFlow('company.team', 'ghost')));
    expect(res.status).toBe(404);
    expect((await call(`${flows()}/company.team/ghost`)).status).toBe(404);
  });
});

describe('flow listing, search and deletion', () => {
  it('searches by namespace (children included) and text, with paging', async () => {
    await createFlow(api, simpleFlow('search.alpha', 'one'));
    await createFlow(api, simpleFlow('search.alpha.child', 'two'));
    await createFlow(api, simpleFlow('search.beta', 'three', 'description: needle here'));
    const byNs = await call(`${flows()}/search?namespace=search.alpha`);
    expect(byNs.status).toBe(200);
    expect(byNs.body.total).toBe(2);
    expect(byNs.body.results.map((f: { id: string }) => f.id).sort()).toEqual(['one', 'two']);
    const byText = await call(`${flows()}/search?q=needle`);
    expect(byText.body.results.map((f: { id: string }) => f.id)).toEqual(['three']);
    const paged = await call(`${flows()}/search?namespace=search&size=1&page=2`);
    expect(paged.body.total).toBe(3);
    expect(paged.body.results).toHaveLength(1);
    expect((await call(`${flows()}/search?size=0`)).status).toBe(400);
  });

  it('lists the flows of exactly one namespace', async () => {
    const res = await call(`${flows()}/search.alpha`);
    expect(res.status).toBe(200);
    expect(res.body.map((f: { id: string }) => f.id)).toEqual(['one']);
  });

  it('deletes a flow (204), then it is gone (404)', async () => {
    await createFlow(api, simpleFlow('company.team', 'doomed'));
    expect((await call(`${flows()}/company.team/doomed`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`${flows()}/company.team/doomed`)).status).toBe(404);
    expect((await call(`${flows()}/company.team/doomed`, { method: 'DELETE' })).status).toBe(404);
    const search = await call(`${flows()}/search?q=doomed`);
    expect(search.body.total).toBe(0);
  });
});

describe('POST /flows/validate', () => {
  it('validates several documents and reports constraints per index', async () => {
    const text = `${simpleFlow('company.team', 'ok1')}---\nid: broken\nnamespace: company.team\ntasks: []\n---\n${simpleFlow('company.team', 'ok2')}`;
    const res = await call(`${flows()}/validate`, yamlInit('POST', text));
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    expect(res.body[0]).toEqual({ index: 0, flow: 'ok1', namespace: 'company.team' });
    expect(res.body[1]).toMatchObject({ index: 1, flow: 'broken', namespace: 'company.team' });
    expect(res.body[1].constraints).toMatch(/tasks/);
    expect(res.body[2]).toEqual({ index: 2, flow: 'ok2', namespace: 'company.team' });
    expect((await call(`${flows()}/company.team/ok1`)).status).toBe(404);
  });

  it("reports Kestra's deprecated Subflow outputs in deprecationPaths and settings without effect in warnings", async () => {
    const sub = 'ai.service.plugin.core.flow.Subflow';
    const text = `id: legacy\nnamespace: company.team\ntasks:\n`
      + `  - { id: a, type: ${sub}, namespace: company.team, flowId: c, wait: true, outputs: { v: x } }\n`
      + `  - { id: b, type: ${sub}, namespace: company.team, flowId: c, transmitFailed: true }\n`
      + `  - { id: e, type: io.kestra.plugin.core.flow.ForEachItem, items: x, namespace: company.team, flowId: c, wait: false, transmitFailed: true }\n`
      + `---\n${simpleFlow('company.team', 'plain')}`;
    const res = await call(`${flows()}/validate`, yamlInit('POST', text));
    expect(res.status).toBe(200);
    expect(res.body[0]).toEqual({
      index: 0, flow: 'legacy', namespace: 'company.team',
      deprecationPaths: ['tasks[0].outputs'],
      warnings: [
        'tasks[1].transmitFailed: `transmitFailed: true` has no effect without `wait: true` (as in Kestra): a failure of the subflow is not transmitted to this task',
        'tasks[2].transmitFailed: `transmitFailed: true` has no effect without `wait: true` (as in Kestra): a failure of the subflow is not transmitted to this task',
      ],
    });
    expect(res.body[1]).toEqual({ index: 1, flow: 'plain', namespace: 'company.team' });
  });

  it("reports Kestra's deprecated flow listeners (with a warning) and task types in deprecationPaths", async () => {
    const text = `id: listening\nnamespace: company.team\ntasks:\n  - { id: a, type: io.kestra.plugin.core.log.Log, message: hi }\n`
      + `  - { id: e, type: io.kestra.core.tasks.debugs.Echo, format: hi }\n  - { id: f, type: io.kestra.plugin.core.storage.LocalFiles, outputs: ['*.txt'] }\n`
      + `listeners:\n  - tasks:\n      - { id: l, type: io.kestra.plugin.core.log.Log, message: done }\n`;
    const res = await call(`${flows()}/validate`, yamlInit('POST', text));
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ flow: 'listening', deprecationPaths: ['listeners', 'tasks[1]', 'tasks[2]'] });
    expect(res.body[0].warnings).toEqual([expect.stringContaining('`listeners` is deprecated')]);
  });

  it('reports malformed YAML as a constraint, still 200', async () => {
    const res = await call(`${flows()}/validate`, yamlInit('POST', 'id: [oops\n'));
    expect(res.status).toBe(200);
    expect(res.body[0].constraints).toMatch(/YAML/);
  });
});
