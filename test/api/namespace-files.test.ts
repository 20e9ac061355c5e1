// API tests of namespace files (embedded home, real local storage): upload, read, stats, listing, folders, search,
// move, delete with the folders it empties, zip export and import, the limits, and every hostile path refused.
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { zipSync, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../operator/core/limits.js';
import { call, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => { api = await startTestApi(); });
afterAll(async () => { await api.close(); });

const files = (ns: string, rest = '', query = ''): string => `${api.url}/api/v1/namespaces/${ns}/files${rest}${query ? `?${query}` : ''}`;
const q = (params: Record<string, string>): string => new URLSearchParams(params).toString();

async function upload(ns: string, p: string, content: string | Uint8Array<ArrayBuffer>, filename = 'upload.txt') {
  const form = new FormData();
  form.append('fileContent', new Blob([content]), filename);
  return call(files(ns, '', q({ path: p })), { method: 'POST', body: form });
}

const read = async (ns: string, p: string) => {
  const res = await fetch(files(ns, '', q({ path: p })));
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
};
const names = async (ns: string, p = '/') => (await call(files(ns, '/directory', q({ path: p })))).body.map((f: { fileName: string; type: string }) => `${f.fileName}:${f.type}`);

describe('namespace files', () => {
  it('uploads, reads back, lists and stats files in folders', async () => {
    expect((await upload('nf.a', '/scripts/hello.py', 'print("hi")')).status).toBe(204);
    expect((await upload('nf.a', 'data/in.csv', 'a,b\n1,2\n')).status).toBe(204);
    const got = await read('nf.a', '/scripts/hello.py');
    expect(got).toMatchObject({ status: 200, text: 'print("hi")', type: 'application/octet-stream' });
    expect(await names('nf.a')).toEqual(['data:Directory', 'scripts:Directory']);
    expect(await names('nf.a', '/scripts')).toEqual(['hello.py:File']);
    const stats = await call(files('nf.a', '/stats', q({ path: '/data/in.csv' })));
    expect(stats.body).toMatchObject({ fileName: 'in.csv', type: 'File', size: 8 });
    expect(stats.body.lastModifiedTime).toBeGreaterThan(0);
    // Files live in Kestra's layout: <namespace as path>/_files/<path>.
    const onDisk = path.join(api.dataDir, 'storage', 'nf', 'a', '_files', 'scripts', 'hello.py');
    expect(existsSync(onDisk)).toBe(true);
  });

  it('overwrites a file, and answers 404 for what does not exist', async () => {
    await upload('nf.b', '/x.txt', 'one');
    await upload('nf.b', '/x.txt', 'two');
    expect((await read('nf.b', '/x.txt')).text).toBe('two');
    expect((await read('nf.b', '/nope.txt')).status).toBe(404);
    expect((await call(files('nf.b', '/directory', q({ path: '/nope' })))).status).toBe(404);
  });

  it('answers the root: stats named _files, an empty listing for a new namespace', async () => {
    expect((await call(files('nf.empty', '/stats'))).body).toMatchObject({ fileName: '_files', type: 'Directory' });
    expect((await call(files('nf.new', '/directory'))).body).toEqual([]);
  });

  it('creates folders, searches paths, moves files and folders', async () => {
    expect((await call(files('nf.c', '/directory', q({ path: '/empty/inner' })), { method: 'POST' })).status).toBe(204);
    expect(await names('nf.c')).toEqual(['empty:Directory']);
    await upload('nf.c', '/file.txt', '1');
    await upload('nf.c', '/another_file.json', '2');
    await upload('nf.c', '/folder/file.txt', '3');
    await upload('nf.c', '/folder/sub/script.py', '4');
    const search = async (s: string) => (await call(files('nf.c', '/search', q({ q: s })))).body.sort();
    expect(await search('file')).toEqual(['/another_file.json', '/file.txt', '/folder/file.txt']);
    expect(await search('.py')).toEqual(['/folder/sub/script.py']);
    expect((await call(files('nf.c', '/search'))).status).toBe(400);

    expect((await call(files('nf.c', '', q({ from: '/file.txt', to: '/renamed.txt' })), { method: 'PUT' })).status).toBe(204);
    expect((await read('nf.c', '/renamed.txt')).text).toBe('1');
    expect((await read('nf.c', '/file.txt')).status).toBe(404);
    expect((await call(files('nf.c', '', q({ from: '/folder', to: '/moved/here' })), { method: 'PUT' })).status).toBe(204);
    expect((await read('nf.c', '/moved/here/sub/script.py')).text).toBe('4');
    expect(await names('nf.c', '/moved/here')).toEqual(['file.txt:File', 'sub:Directory']);
    expect((await call(files('nf.c', '/directory', q({ path: '/folder' })))).status).toBe(404);
    // A target that exists, or a folder into itself: refused.
    expect((await call(files('nf.c', '', q({ from: '/renamed.txt', to: '/another_file.json' })), { method: 'PUT' })).status).toBe(409);
    expect((await call(files('nf.c', '', q({ from: '/moved', to: '/moved/in' })), { method: 'PUT' })).status).toBe(400);
  });

  it('deletes a file and the folders it leaves empty, never the root; deletes folders with their content', async () => {
    await upload('nf.d', '/folder/file.txt', 'x');
    await upload('nf.d', '/multi/one.txt', 'x');
    await upload('nf.d', '/multi/two.txt', 'x');
    expect((await call(files('nf.d', '', q({ path: '/folder/file.txt' })), { method: 'DELETE' })).status).toBe(204);
    expect(await names('nf.d')).toEqual(['multi:Directory']);
    await call(files('nf.d', '', q({ path: '/multi/one.txt' })), { method: 'DELETE' });
    expect(await names('nf.d', '/multi')).toEqual(['two.txt:File']);
    await call(files('nf.d', '', q({ path: '/multi' })), { method: 'DELETE' });
    expect(await names('nf.d')).toEqual([]);
    expect((await call(files('nf.d', '/stats'))).status).toBe(200);
    expect((await call(files('nf.d', '', q({ path: '/multi' })), { method: 'DELETE' })).status).toBe(404);
  });

  it('exports every file as a zip and imports a zip into another namespace', async () => {
    await upload('nf.e', '/a.txt', 'A');
    await upload('nf.e', '/dir/b.txt', 'B');
    const res = await fetch(files('nf.e', '/export'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('nf.e_files.zip');
    const zip = new Uint8Array(await res.arrayBuffer());
    const entries = unzipSync(zip);
    expect(Object.keys(entries).sort()).toEqual(['a.txt', 'dir/b.txt']);
    expect((await upload('nf.f', '/files.zip', zip, 'files.zip')).status).toBe(204);
    expect((await read('nf.f', '/dir/b.txt')).text).toBe('B');
    expect((await read('nf.f', '/files.zip')).status).toBe(404);
  });

  it('refuses a revision (none are kept) and a second file part, naming the field', async () => {
    await upload('nf.g', '/a.txt', 'A');
    const rev = await call(files('nf.g', '', q({ path: '/a.txt', revision: '2' })));
    expect(rev.status).toBe(400);
    expect(rev.body.errors[0].path).toBe('revision');
    const form = new FormData();
    form.append('fileContent', new Blob(['1']), 'a.txt');
    form.append('fileContent', new Blob(['2']), 'b.txt');
    const two = await call(files('nf.g', '', q({ path: '/a.txt' })), { method: 'POST', body: form });
    expect(two.status).toBe(400);
    expect((await read('nf.g', '/a.txt')).text).toBe('A');
    const none = await call(files('nf.g', '', q({ path: '/a.txt' })), { method: 'POST', body: new FormData() });
    expect(none.status).toBe(400);
  });

  it('refuses a file where a folder is, and a folder under a file', async () => {
    await upload('nf.h', '/dir/a.txt', 'A');
    expect((await upload('nf.h', '/dir', 'x')).status).toBe(409);
    expect((await upload('nf.h', '/dir/a.txt/b', 'x')).status).toBe(409);
    expect((await call(files('nf.h', '/directory', q({ path: '/dir/a.txt' })), { method: 'POST' })).status).toBe(409);
  });
});

describe('hostile paths', () => {
  it.each([
    ['../escape.txt', 'traversal'],
    ['/a/../../b.txt', 'traversal'],
    ['./a.txt', 'traversal'],
    ['a\\..\\b.txt', 'backslash'],
    ['C:/windows/x', 'drive letter'],
    ['a\u0000b', 'NUL'],
    ['/_flows/f.yml', 'reserved'],
    ['x'.repeat(256), 'long name'],
  ])('refuses %j (%s) on every route, naming the field', async (p) => {
    const up = await upload('nf.h1', p, 'evil');
    expect(up.status, JSON.stringify(up.body)).toBe(400);
    expect(up.body.errors[0].path).toBe('path');
    expect((await read('nf.h1', p)).status).toBe(400);
    expect((await call(files('nf.h1', '/stats', q({ path: p })))).status).toBe(400);
    expect((await call(files('nf.h1', '/directory', q({ path: p })), { method: 'POST' })).status).toBe(400);
    expect((await call(files('nf.h1', '', q({ path: p })), { method: 'DELETE' })).status).toBe(400);
    const mv = await call(files('nf.h1', '', q({ from: '/a', to: p })), { method: 'PUT' });
    expect(mv.status).toBe(400);
    expect(mv.body.errors[0].path).toBe('to');
  });

  it('keeps an encoded traversal as a plain name inside the namespace', async () => {
    expect((await upload('nf.h2', '/%2e%2e/x.txt', 'inside')).status).toBe(204);
    expect(await names('nf.h2')).toEqual(['%2e%2e:Directory']);
    expect((await read('nf.h2', '/%2e%2e/x.txt')).text).toBe('inside');
  });

  it('refuses namespaces that are not namespaces, or reserved storage segments', async () => {
    expect((await call(`${api.url}/api/v1/namespaces/..%2F..%2Fetc/files/directory`)).status).toBe(400);
    expect((await call(`${api.url}/api/v1/namespaces/a._files/files/directory`)).status).toBe(400);
    expect((await call(`${api.url}/api/v1/namespaces/a.executions/files/directory`)).status).toBe(400);
  });

  it('never reads another namespace: same path, other namespace, is its own file', async () => {
    await upload('nf.owner', '/secret.txt', 'owner only');
    expect((await read('nf.other', '/secret.txt')).status).toBe(404);
    expect((await read('nf', '/owner/_files/secret.txt')).status).toBe(404);
  });

  it('does not follow a symbolic link out of internal storage', async () => {
    await upload('nf.link', '/real.txt', 'x');
    const outside = path.join(api.dataDir, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, 'passwd'), 'host file');
    symlinkSync(outside, path.join(api.dataDir, 'storage', 'nf', 'link', '_files', 'escape'));
    expect((await read('nf.link', '/escape/passwd')).status).toBe(400);
    expect(await names('nf.link')).toEqual(['real.txt:File']); // links are not listed
    expect((await upload('nf.link', '/escape/new.txt', 'x')).status).toBe(400);
  });
});

describe('limits', () => {
  let small: TestApi;
  beforeAll(async () => {
    small = await startTestApi({ limits: { ...DEFAULT_LIMITS, namespaceFilesMaxCount: 3, namespaceFilesMaxBytes: 2048, apiMaxFileBytes: 4096 } });
  });
  afterAll(async () => { await small.close(); });
  const up = (p: string, content: string | Uint8Array<ArrayBuffer>, filename = 'f.txt') => {
    const form = new FormData();
    form.append('fileContent', new Blob([content]), filename);
    return call(`${small.url}/api/v1/namespaces/lim/files?${q({ path: p })}`, { method: 'POST', body: form });
  };

  it('refuses a file past the namespace size with 413 naming NAMESPACE_FILES_MAX_BYTES, keeping the old content', async () => {
    expect((await up('/big.txt', 'a'.repeat(1000))).status).toBe(204);
    const res = await up('/big.txt', 'b'.repeat(3000));
    expect(res.status).toBe(413);
    expect(res.body.message).toContain('NAMESPACE_FILES_MAX_BYTES');
    expect(await (await fetch(`${small.url}/api/v1/namespaces/lim/files?path=/big.txt`)).text()).toBe('a'.repeat(1000));
    const tooBig = await up('/huge.txt', 'c'.repeat(5000));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.message).toContain('API_MAX_FILE_BYTES');
    // Refused uploads leave nothing behind in the staging folder.
    expect(readdirSync(path.join(small.dataDir, 'storage', '_uploads'))).toEqual([]);
  });

  it('refuses more files than NAMESPACE_FILES_MAX_COUNT', async () => {
    await up('/two.txt', '2');
    const res = await up('/dir/three.txt', '3');
    expect(res.status).toBe(413);
    expect(res.body.message).toContain('NAMESPACE_FILES_MAX_COUNT');
  });

  it('stops a zip bomb at the namespace size while inflating', async () => {
    const bomb = zipSync({ 'zeros.bin': new Uint8Array(2 * 1024 * 1024) }, { level: 9 });
    expect(bomb.length).toBeLessThan(4096);
    const res = await up('/bomb.zip', bomb, 'bomb.zip');
    expect(res.status).toBe(413);
    expect(res.body.message).toContain('NAMESPACE_FILES_MAX_BYTES');
    expect((await call(`${small.url}/api/v1/namespaces/lim/files/search?q=zeros`)).body).toEqual([]);
  });

  it('refuses a zip entry with a traversing name, importing nothing', async () => {
    const evil = zipSync({ 'ok.txt': new TextEncoder().encode('ok'), '../evil.txt': new TextEncoder().encode('x') });
    const res = await up('/e.zip', evil, 'e.zip');
    expect(res.status).toBe(400);
    expect((await call(`${small.url}/api/v1/namespaces/lim/files/search?q=ok`)).body).toEqual([]);
  });
});
