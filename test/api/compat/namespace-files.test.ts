// Kestra JSON shapes of the namespace file routes (NamespaceFileController; the SDK's FileAttributes model:
// fileName, lastModifiedTime, creationTime, type File|Directory, size, metadata), called over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApi, type TestApi } from '../helpers.js';
import { expectShape, type Shape } from './shape.js';

const FILE_ATTRIBUTES: Shape = {
  fileName: 'string', lastModifiedTime: 'integer', creationTime: 'integer', type: 'string', size: 'integer', metadata: 'object',
};

let api: TestApi;
const base = () => `${api.url}/api/v1/main/namespaces/compat.files/files`;
beforeAll(async () => {
  api = await startTestApi();
  const form = new FormData();
  form.append('fileContent', new Blob(['print(1)']), 'main.py');
  expect((await call(`${base()}?path=/src/main.py`, { method: 'POST', body: form })).status).toBe(204);
});
afterAll(async () => { await api.close(); });

describe('namespace files (Kestra shapes)', () => {
  it('GET /files/stats is a FileAttributes', async () => {
    const file = await call(`${base()}/stats?path=/src/main.py`);
    expectShape(file.body, FILE_ATTRIBUTES);
    expect(file.body.type).toBe('File');
    const root = await call(`${base()}/stats`);
    expectShape(root.body, FILE_ATTRIBUTES);
    expect(root.body).toMatchObject({ fileName: '_files', type: 'Directory' });
  });

  it('GET /files/directory is a list of FileAttributes', async () => {
    const res = await call(`${base()}/directory`);
    expectShape(res.body, [FILE_ATTRIBUTES]);
    expect(res.body.map((f: { type: string }) => f.type)).toEqual(['Directory']);
    expectShape((await call(`${base()}/directory?path=/src`)).body, [FILE_ATTRIBUTES]);
  });

  it('GET /files/search is a list of paths with a leading slash', async () => {
    const res = await call(`${base()}/search?q=main`);
    expectShape(res.body, ['string']);
    expect(res.body).toEqual(['/src/main.py']);
  });

  it('GET /files is the raw content as application/octet-stream; errors are {message}', async () => {
    const res = await fetch(`${base()}?path=/src/main.py`);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(await res.text()).toBe('print(1)');
    expectShape((await call(`${base()}?path=/absent`)).body, { message: 'string' });
  });
});
