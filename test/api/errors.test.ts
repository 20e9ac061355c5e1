// API tests of the generic behaviour: health, JSON 404/405, body limits (413) for text and multipart uploads,
// malformed bodies (400) and unsupported content types (415), never a 500 for bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { limitsFromEnv } from '../../operator/core/limits.js';
import { call, createFlow, LOG_TYPE, simpleFlow, startTestApi, yamlInit, type TestApi } from './helpers.js';

let api: TestApi;
const NS = 'limits.team';

beforeAll(async () => {
  // The limits as the settings give them (API_MAX_BODY_BYTES, API_MAX_FILE_BYTES through limitsFromEnv).
  api = await startTestApi({ limits: limitsFromEnv({ API_MAX_BODY_BYTES: '4096', API_MAX_FILE_BYTES: '1024' }) });
  await createFlow(api, `id: up\nnamespace: ${NS}\ninputs:\n  - id: doc\n    type: FILE\ntasks:\n  - id: t\n    type: ${LOG_TYPE}\n    message: x\n`);
});
afterAll(async () => { await api.close(); });

const total = async (): Promise<number> => (await call(`${api.url}/api/v1/executions/search?namespace=${NS}`)).body.total;

describe('generic responses', () => {
  it('answers /healthz', async () => {
    const res = await call(`${api.url}/healthz`);
    expect(res).toMatchObject({ status: 200, body: { status: 'UP' } });
  });

  it('answers unknown routes with a JSON 404 and wrong methods with a JSON 405', async () => {
    const res = await call(`${api.url}/api/v1/nothing/here`);
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/nothing/);
    const wrong = await call(`${api.url}/api/v1/flows/search`, { method: 'PATCH' });
    expect(wrong.status).toBe(405);
    expect(wrong.body.message).toBeTypeOf('string');
  });
});

describe('body limits', () => {
  it('answers 413 for a flow body over the limit', async () => {
    const big = simpleFlow(NS, 'big', `description: "${'x'.repeat(5000)}"`);
    const res = await call(`${api.url}/api/v1/flows`, yamlInit('POST', big));
    expect(res.status).toBe(413);
    expect(res.body.message).toBe('Request body exceeds the limit of 4096 bytes (setting API_MAX_BODY_BYTES)');
  });

  it('answers 413 for an uploaded file over the limit, keeping neither file nor execution', async () => {
    const before = await total();
    const form = new FormData();
    form.append('doc', new Blob(['y'.repeat(2048)]), 'big.bin');
    const res = await call(`${api.url}/api/v1/executions/${NS}/up`, { method: 'POST', body: form });
    expect(res.status).toBe(413);
    expect(res.body.message).toBe("File 'doc' exceeds the limit of 1024 bytes (setting API_MAX_FILE_BYTES)");
    expect(await total()).toBe(before);
    const dir = `${api.dataDir}/storage/${NS}`;
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('big.bin')) : [];
    expect(files).toEqual([]);
  });

  it('accepts a file under the limit', async () => {
    const form = new FormData();
    form.append('doc', new Blob(['small']), 'small.txt');
    const res = await call(`${api.url}/api/v1/executions/${NS}/up`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(await api.stores.storage.get(res.body.inputs.doc)).toEqual(Buffer.from('small'));
  });
});

describe('malformed bodies', () => {
  it('answers 400 for a broken multipart body', async () => {
    const res = await call(`${api.url}/api/v1/executions/${NS}/up`, {
      method: 'POST', headers: { 'Content-Type': 'multipart/form-data' }, body: 'garbage',
    });
    expect(res.status).toBe(400);
  });

  it('answers 415 for an unsupported content type with a body', async () => {
    const res = await call(`${api.url}/api/v1/executions/${NS}/up`, {
      method: 'POST', headers: { 'Content-Type': 'application/xml' }, body: '<a/>',
    });
    expect(res.status).toBe(415);
  });
});

describe('tenant path', () => {
  it('serves the same API under /api/v1/main', async () => {
    const res = await call(`${api.url}/api/v1/main/flows/${NS}/up`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe('up');
    expect((await call(`${api.url}/api/v1/main/nothing`)).status).toBe(404);
  });
});
