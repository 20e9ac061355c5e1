// API tests of execution creation and reads without a controller: inputs (JSON, multipart with a file), 422 with
// no execution left behind, search filters, the file download and its prefix check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../operator/core/types.js';
import { call, createFlow, jsonInit, LOG_TYPE, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
const NS = 'exec.team';
const INPUT_FLOW = `id: inputs
namespace: ${NS}
labels:
  team: data
inputs:
  - id: name
    type: STRING
  - id: count
    type: INT
    defaults: 3
  - id: doc
    type: FILE
    required: false
tasks:
  - id: hello
    type: ${LOG_TYPE}
    message: "{{ inputs.name }}"
`;

beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, INPUT_FLOW);
  await createFlow(api, INPUT_FLOW.replace('defaults: 3', 'defaults: 4'));
  await createFlow(api, `id: off\nnamespace: ${NS}\ndisabled: true\ninputs:\n  - id: x\n    type: STRING\ntasks:\n  - id: t\n    type: ${LOG_TYPE}\n    message: hi\n`);
});
afterAll(async () => { await api.close(); });

const base = (): string => `${api.url}/api/v1/executions`;
const total = async (query = `namespace=${NS}`): Promise<number> => (await call(`${base()}/search?${query}`)).body.total;

describe('create an execution', () => {
  it('accepts a JSON map of inputs, resolves defaults and merges labels', async () => {
    const res = await call(`${base()}/${NS}/inputs?labels=env:prod`, jsonInit('POST', { name: 'Ada' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ namespace: NS, flowId: 'inputs', flowRevision: 2, state: { current: 'CREATED' } });
    expect(res.body.inputs).toMatchObject({ name: 'Ada', count: 4 });
    expect(res.body.id).toMatch(/^[0-9A-Za-z]{22}$/);
    expect(res.body.originalId).toBe(res.body.id);
    expect(res.body.labels).toEqual(expect.arrayContaining([{ key: 'team', value: 'data' }, { key: 'env', value: 'prod' }]));
    expect((await call(`${base()}/${res.body.id}`)).body.id).toBe(res.body.id);
  });

  it('runs a given revision and 404s on unknown flows or revisions', async () => {
    const res = await call(`${base()}/${NS}/inputs?revision=1`, jsonInit('POST', { name: 'x' }));
    expect(res.status).toBe(200);
    expect(res.body.flowRevision).toBe(1);
    expect(res.body.inputs.count).toBe(3);
    expect((await call(`${base()}/${NS}/inputs?revision=7`, jsonInit('POST', { name: 'x' }))).status).toBe(404);
    expect((await call(`${base()}/${NS}/missing`, { method: 'POST' })).status).toBe(404);
  });

  it('rejects invalid inputs with 422 naming the input, and creates nothing', async () => {
    const before = await total();
    const missing = await call(`${base()}/${NS}/inputs`, { method: 'POST' });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ path: 'inputs.name', message: expect.any(String) }]);
    const badInt = await call(`${base()}/${NS}/inputs`, jsonInit('POST', { name: 'a', count: 'many' }));
    expect(badInt.status).toBe(422);
    expect(badInt.body.errors[0].path).toBe('inputs.count');
    expect(await total()).toBe(before);
  });

  it('accepts multipart fields and a file, downloadable through /file', async () => {
    const form = new FormData();
    form.append('name', 'Grace');
    form.append('count', '7');
    form.append('doc', new Blob(['file content here']), 'report final.txt');
    const res = await call(`${base()}/${NS}/inputs`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const exec = res.body;
    expect(exec.inputs).toMatchObject({ name: 'Grace', count: 7 });
    expect(exec.inputs.doc).toMatch(new RegExp(`^kestra:///${NS.replace('.', '/')}/inputs/executions/${exec.id}/inputs/doc/`));
    const file = await fetch(`${base()}/${exec.id}/file?path=${encodeURIComponent(exec.inputs.doc)}`);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('file content here');
    expect(file.headers.get('content-disposition')).toContain('report final.txt');
    const metas = await call(`${base()}/${exec.id}/file/metas?path=${encodeURIComponent(exec.inputs.doc)}`);
    expect(metas).toMatchObject({ status: 200, body: { size: 17 } });
  });

  it('deletes the uploaded file and creates nothing when another input is invalid', async () => {
    const before = await total();
    const form = new FormData();
    form.append('count', 'not-a-number');
    form.append('doc', new Blob(['orphan']), 'orphan.txt');
    const res = await call(`${base()}/${NS}/inputs`, { method: 'POST', body: form });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['inputs.count', 'inputs.name']);
    expect(await total()).toBe(before);
    const { readdirSync, existsSync } = await import('node:fs');
    const dir = `${api.dataDir}/storage/${NS}/inputs/executions`;
    const leftovers = existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('orphan.txt')) : [];
    expect(leftovers).toEqual([]);
  });

  it('answers 400, not 500, for an upload whose file name storage refuses', async () => {
    const before = await total();
    const form = new FormData();
    form.append('name', 'n');
    form.append('doc', new Blob(['x']), '%2e%2e');
    const res = await call(`${base()}/${NS}/inputs`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect(await total()).toBe(before);
  });

  it('rejects a JSON body that is not an object, and malformed JSON, with 400', async () => {
    expect((await call(`${base()}/${NS}/inputs`, jsonInit('POST', [1, 2]))).status).toBe(400);
    const bad = await call(`${base()}/${NS}/inputs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/JSON/);
  });

  it('creates through /executions/trigger too', async () => {
    const res = await call(`${base()}/trigger/${NS}/inputs`, jsonInit('POST', { name: 'T' }));
    expect(res.status).toBe(200);
    expect(res.body.inputs.name).toBe('T');
  });

  it('returns 200 with a FAILED execution for a disabled flow', async () => {
    const res = await call(`${base()}/${NS}/off`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.state.current).toBe('FAILED');
    expect(res.body.error).toBe('Cannot execute a flow which is disabled');
  });
});

describe('read and search executions', () => {
  it('404s on an unknown execution', async () => {
    const res = await call(`${base()}/doesNotExist`);
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/doesNotExist/);
  });

  it('filters by flow, state and labels, with the /executions alias', async () => {
    const s = await call(`${base()}/search?namespace=${NS}&flowId=off&state=FAILED`);
    expect(s.body.total).toBeGreaterThanOrEqual(1);
    expect(s.body.results.every((e: Execution) => e.flowId === 'off' && e.state.current === 'FAILED')).toBe(true);
    const byLabel = await call(`${base()}?labels=env:prod`);
    expect(byLabel.body.total).toBe(1);
    expect(byLabel.body.results[0].labels).toContainEqual({ key: 'env', value: 'prod' });
    const several = await call(`${base()}/search?namespace=${NS}&state=CREATED&state=FAILED`);
    expect(several.body.total).toBe(await total());
    expect((await call(`${base()}/search?state=NOPE`)).status).toBe(400);
    expect((await call(`${base()}/search?labels=nocolon`)).status).toBe(400);
    expect((await call(`${base()}/search?page=0`)).status).toBe(400);
  });

  it('answers summaries without task runs and outputs with summary=true (search and one flow\'s executions)', async () => {
    const full = await call(`${base()}/search?namespace=${NS}&size=5`);
    expect(full.body.results[0]).toHaveProperty('taskRunList');
    for (const url of [`${base()}/search?namespace=${NS}&size=5&summary=true`, `${base()}/flows/${NS}/inputs?summary=true`]) {
      const res = await call(url);
      expect(res.status).toBe(200);
      expect(res.body.results.length).toBeGreaterThan(0);
      for (const e of res.body.results) {
        expect(e).not.toHaveProperty('taskRunList');
        expect(e).not.toHaveProperty('outputs');
        expect(e).toMatchObject({ namespace: NS, state: { current: expect.any(String) }, labels: expect.any(Array) });
      }
    }
    const bad = await call(`${base()}/search?summary=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("'summary'");
  });
});

describe('GET /executions/{id}/file', () => {
  it('refuses paths outside the execution storage, and needs a path', async () => {
    const a = (await call(`${base()}/${NS}/inputs`, jsonInit('POST', { name: 'a' }))).body;
    const uri = await api.stores.storage.put(`${NS}/inputs/executions/other/secret.txt`, Buffer.from('no'));
    const outside = await call(`${base()}/${a.id}/file?path=${encodeURIComponent(uri)}`);
    expect(outside.status).toBe(422);
    const traversal = `kestra:///${NS}/inputs/executions/${a.id}/../other/secret.txt`;
    expect((await call(`${base()}/${a.id}/file?path=${encodeURIComponent(traversal)}`)).status).toBe(422);
    expect((await call(`${base()}/${a.id}/file`)).status).toBe(400);
    const absent = `kestra:///${NS}/inputs/executions/${a.id}/outputs/none.txt`;
    expect((await call(`${base()}/${a.id}/file?path=${encodeURIComponent(absent)}`)).status).toBe(404);
  });
});
