// Kestra's flow routes over many flows and the latest executions (api/routes/flow-bulk.ts, POST /executions/latest):
// delete/disable/enable by ids and by query, zip export and import (zip or multi-document YAML, bounded), namespace
// replacement (`/flows/bulk`, `POST /flows/{namespace}`), one task of a flow; Kestra's shapes and bounds.
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../operator/core/limits.js';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, yamlInit, type TestApi } from './helpers.js';
import { expectShape, type Shape } from './compat/shape.js';

let api: TestApi;
const v1 = (p: string): string => `${api.url}/api/v1/main${p}`;
const BULK_RESPONSE: Shape = { count: 'integer' };

beforeAll(async () => { api = await startTestApi({ limits: { ...DEFAULT_LIMITS, apiBulkMaxItems: 5 } }); });
afterAll(async () => { await api.close(); });

async function live(namespace: string, id: string): Promise<any> {
  return (await call(v1(`/flows/${namespace}/${id}`))).body;
}

function upload(name: string, data: Uint8Array | string): RequestInit {
  const form = new FormData();
  form.append('fileUpload', new Blob([typeof data === 'string' ? Buffer.from(data) : Buffer.from(data)]), name);
  return { method: 'POST', body: form };
}

describe('flows by ids and by query', () => {
  it('disables then enables flows by ids, rewriting the source (comments kept) as a new revision', async () => {
    await createFlow(api, `# keep me\n${simpleFlow('bulk.dis', 'a')}`);
    await createFlow(api, simpleFlow('bulk.dis', 'b'));
    const res = await call(v1('/flows/disable/by-ids'), jsonInit('POST', [{ namespace: 'bulk.dis', id: 'a' }, { namespace: 'bulk.dis', id: 'b' }]));
    expect(res.status).toBe(200);
    expectShape(res.body, BULK_RESPONSE);
    expect(res.body.count).toBe(2);
    const a = await live('bulk.dis', 'a');
    expect(a).toMatchObject({ disabled: true, revision: 2 });
    const src = (await call(v1('/flows/bulk.dis/a?source=true'))).body.source as string;
    expect(src).toContain('# keep me');
    expect(src).toMatch(/^disabled: true$/m);
    const back = await call(v1('/flows/enable/by-query?namespace=bulk.dis'), { method: 'POST' });
    expect(back.body).toEqual({ count: 2 });
    expect(await live('bulk.dis', 'a')).toMatchObject({ disabled: false, revision: 3 });
  });

  it('refuses an unknown flow (404, nothing done) and a malformed or oversized id list (400 naming the body)', async () => {
    await createFlow(api, simpleFlow('bulk.ref', 'a'));
    const unknown = await call(v1('/flows/disable/by-ids'), jsonInit('POST', [{ namespace: 'bulk.ref', id: 'a' }, { namespace: 'bulk.ref', id: 'nope' }]));
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain("'bulk.ref.nope'");
    expect((await live('bulk.ref', 'a')).disabled).toBe(false);
    const bad = await call(v1('/flows/delete/by-ids'), jsonInit('DELETE', { namespace: 'bulk.ref', id: 'a' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('body');
    const many = Array.from({ length: 6 }, (_, i) => ({ namespace: 'bulk.ref', id: `f${i}` }));
    const tooMany = await call(v1('/flows/delete/by-ids'), jsonInit('DELETE', many));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toContain('API_BULK_MAX_ITEMS');
  });

  it('deletes by ids and by query; a query matching more than API_BULK_MAX_ITEMS flows is refused', async () => {
    for (const id of ['a', 'b', 'c']) await createFlow(api, simpleFlow('bulk.del', id));
    const byIds = await call(v1('/flows/delete/by-ids'), jsonInit('DELETE', [{ namespace: 'bulk.del', id: 'a' }]));
    expect(byIds.body).toEqual({ count: 1 });
    expect((await call(v1('/flows/bulk.del/a'))).status).toBe(404);
    const byQuery = await call(v1('/flows/delete/by-query?filters[namespace][EQUALS]=bulk.del'), { method: 'DELETE' });
    expect(byQuery.body).toEqual({ count: 2 });
    expect((await call(v1('/flows/bulk.del'))).body).toEqual([]);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await createFlow(api, simpleFlow('bulk.many', id));
    const over = await call(v1('/flows/delete/by-query?namespace=bulk.many'), { method: 'DELETE' });
    expect(over.status).toBe(400);
    expect(over.body.message).toContain('API_BULK_MAX_ITEMS');
    expect((await call(v1('/flows/bulk.many'))).body).toHaveLength(6);
  });
});

describe('export and import', () => {
  it('exports sources as a zip (Kestra entry names per route) that imports back', async () => {
    await createFlow(api, simpleFlow('bulk.exp', 'a'));
    await createFlow(api, simpleFlow('bulk.exp', 'b'));
    const byIds = await fetch(v1('/flows/export/by-ids'), jsonInit('POST', [{ namespace: 'bulk.exp', id: 'a' }]));
    expect(byIds.status).toBe(200);
    expect(byIds.headers.get('content-disposition')).toContain('flows.zip');
    const idsZip = unzipSync(new Uint8Array(await byIds.arrayBuffer()));
    expect(Object.keys(idsZip)).toEqual(['bulk.exp.a.yaml']);
    expect(Buffer.from(idsZip['bulk.exp.a.yaml']!).toString()).toBe(simpleFlow('bulk.exp', 'a'));
    const byQuery = await fetch(v1('/flows/export/by-query?namespace=bulk.exp'));
    const queryZip = unzipSync(new Uint8Array(await byQuery.arrayBuffer()));
    expect(Object.keys(queryZip).sort()).toEqual(['bulk.exp-a.yml', 'bulk.exp-b.yml']);

    const renamed = Buffer.from(queryZip['bulk.exp-a.yml']!).toString().replace('namespace: bulk.exp', 'namespace: bulk.imp');
    const zip = zipSync({ 'one.yml': Buffer.from(renamed), 'bad.yml': Buffer.from('id: x\nnamespace: bulk.imp\ntasks: 3\n') });
    const res = await call(v1('/flows/import'), upload('flows.zip', zip));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(['bad.yml']);
    expect((await live('bulk.imp', 'a')).id).toBe('a');
  });

  it('imports a multi-document YAML file, answering the indexes it refused; failOnError imports nothing', async () => {
    const yaml = `${simpleFlow('bulk.yml', 'a')}---\nid: broken\n---\n${simpleFlow('bulk.yml', 'b')}`;
    const strict = await call(v1('/flows/import?failOnError=true'), upload('flows.yaml', yaml));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('1');
    expect((await call(v1('/flows/bulk.yml/a'))).status).toBe(404);
    const res = await call(v1('/flows/import'), upload('flows.yaml', yaml));
    expect(res.body).toEqual(['1']);
    expect((await call(v1('/flows/bulk.yml'))).body.map((f: { id: string }) => f.id)).toEqual(['a', 'b']);
  });

  it('bounds an import: zip entries (API_BULK_MAX_ITEMS), inflated bytes (a zip bomb stops), the part name', async () => {
    const entries = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.yml`, Buffer.from(simpleFlow('bulk.bound', `f${i}`))]));
    const many = await call(v1('/flows/import'), upload('flows.zip', zipSync(entries)));
    expect(many.status).toBe(400);
    expect(many.body.message).toContain('API_BULK_MAX_ITEMS');
    const bomb = zipSync({ 'big.yml': new Uint8Array(DEFAULT_LIMITS.apiMaxBodyBytes + 10) }, { level: 9 });
    const big = await call(v1('/flows/import'), upload('bomb.zip', bomb));
    expect(big.status).toBe(400);
    expect(big.body.message).toContain('API_MAX_BODY_BYTES');
    expect((await call(v1('/flows/bulk.bound'))).body).toEqual([]);
    const form = new FormData();
    form.append('file', new Blob([simpleFlow('bulk.bound', 'x')]), 'x.yml');
    const wrongPart = await call(v1('/flows/import'), { method: 'POST', body: form });
    expect(wrongPart.status).toBe(400);
    expect(wrongPart.body.errors[0].path).toBe('fileUpload');
  });
});

describe('namespace replacement', () => {
  it('POST /flows/bulk saves every flow and deletes the namespace\'s others (delete defaults to true)', async () => {
    await createFlow(api, simpleFlow('bulk.ns', 'old'));
    await createFlow(api, simpleFlow('bulk.other', 'kept'));
    const res = await call(v1('/flows/bulk?namespace=bulk.ns'), yamlInit('POST', `${simpleFlow('bulk.ns', 'a')}---\n${simpleFlow('bulk.ns', 'b')}`));
    expect(res.status).toBe(200);
    expectShape(res.body, [{ id: 'string', namespace: 'string', revision: 'integer', source: 'string', deleted: 'boolean' }]);
    expect(res.body.map((f: { id: string }) => f.id)).toEqual(['old', 'a', 'b']);
    expect((await call(v1('/flows/bulk.ns'))).body.map((f: { id: string }) => f.id)).toEqual(['a', 'b']);
    expect((await live('bulk.other', 'kept')).id).toBe('kept');
  });

  it('POST /flows/{namespace} refuses a flow of another namespace and duplicate ids (422, nothing done)', async () => {
    await createFlow(api, simpleFlow('bulk.ns2', 'stay'));
    const other = await call(v1('/flows/bulk.ns2'), yamlInit('POST', simpleFlow('bulk.elsewhere', 'a')));
    expect(other.status).toBe(422);
    expect(other.body.errors[0].path).toBe('flow.namespace');
    const dup = await call(v1('/flows/bulk.ns2'), yamlInit('POST', `${simpleFlow('bulk.ns2', 'a')}---\n${simpleFlow('bulk.ns2', 'a')}`));
    expect(dup.status).toBe(422);
    const keep = await call(v1('/flows/bulk.ns2?delete=false'), yamlInit('POST', simpleFlow('bulk.ns2', 'a')));
    expect(keep.status).toBe(200);
    expect((await call(v1('/flows/bulk.ns2'))).body.map((f: { id: string }) => f.id).sort()).toEqual(['a', 'stay']);
  });
});

describe('one task, latest executions', () => {
  it('GET /flows/{namespace}/{id}/tasks/{taskId} answers a nested task with its written type; 404 otherwise', async () => {
    await createFlow(api, `id: t
namespace: bulk.task
tasks:
  - id: seq
    type: io.kestra.plugin.core.flow.Sequential
    tasks:
      - id: inner
        type: io.kestra.plugin.core.log.Log
        message: hi
`);
    const res = await call(v1('/flows/bulk.task/t/tasks/inner'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'inner', type: 'io.kestra.plugin.core.log.Log', message: 'hi' });
    expect((await call(v1('/flows/bulk.task/t/tasks/nope'))).status).toBe(404);
  });

  it('POST /executions/latest answers Kestra\'s LastExecutionResponse for flows that have executions', async () => {
    await createFlow(api, simpleFlow('bulk.last', 'f'));
    await createFlow(api, simpleFlow('bulk.last', 'never'));
    await call(v1('/executions/bulk.last/f'), { method: 'POST' });
    const second = (await call(v1('/executions/bulk.last/f'), { method: 'POST' })).body;
    const res = await call(v1('/executions/latest'), jsonInit('POST', [{ namespace: 'bulk.last', id: 'f' }, { namespace: 'bulk.last', id: 'never' }]));
    expect(res.status).toBe(200);
    expectShape(res.body, [{ id: 'string', namespace: 'string', flowId: 'string', startDate: 'string', status: 'string' }]);
    expect(res.body).toEqual([{ id: second.id, namespace: 'bulk.last', flowId: 'f', startDate: second.state.startDate, status: 'CREATED' }]);
    expect((await call(v1('/executions/latest'), jsonInit('POST', { namespace: 'x' }))).status).toBe(400);
  });
});
