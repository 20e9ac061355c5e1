// Namespace files over both storages as one table: the local disk (real directories) and an S3 bucket (s3rver in a
// child process: `<key>/` folder markers and folders implied by keys). Folders, listing, stats, move, delete with the
// folders it empties, zip round trip, the count limit, and the layout `<namespace>/_files/...`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type Service } from '../../test/support/services.js';
import { DEFAULT_LIMITS } from '../core/limits.js';
import type { InternalStorage } from '../store/types.js';
import { LocalStorage } from './local.js';
import { NamespaceFiles } from './namespace-files.js';
import { S3Storage } from './s3.js';

let s3: Service;
let s3Storage: S3Storage;
let dir: string;
beforeAll(async () => {
  s3 = await startS3rver();
  s3Storage = new S3Storage({ endpoint: s3.url, bucket: 'nsfiles', accessKey: 'S3RVER', secretKey: 'S3RVER', prefix: 'base' });
  await s3Storage.ensureBucket();
  dir = mkdtempSync(join(tmpdir(), 'nsfiles-'));
}, 60_000);
afterAll(async () => {
  await s3Storage?.close();
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const homes: [string, () => InternalStorage][] = [['local', () => new LocalStorage(dir)], ['s3', () => s3Storage]];
const seg = (p: string) => p.split('/').filter(Boolean);
const text = (b: Buffer) => b.toString('utf8');

describe.each(homes)('namespace files on %s storage', (home, storageOf) => {
  const ns = `t.${home}`;
  const files = () => new NamespaceFiles(storageOf());
  const children = async (namespace: string, p = '') => (await files().list(namespace, seg(p))).map((f) => `${f.fileName}:${f.type}`);

  it('keeps files in Kestra layout and lists folders, explicit and implied', async () => {
    const f = files();
    await f.write(ns, seg('a/b/c.txt'), Buffer.from('abc'));
    await f.mkdir(ns, seg('empty'));
    expect(await storageOf().exists(`kestra:///t/${home}/_files/a/b/c.txt`)).toBe(true);
    expect(await children(ns)).toEqual(['a:Directory', 'empty:Directory']);
    expect(await children(ns, 'a')).toEqual(['b:Directory']);
    expect(await children(ns, 'empty')).toEqual([]);
    expect(await f.stat(ns, seg('a/b/c.txt'))).toMatchObject({ fileName: 'c.txt', type: 'File', size: 3 });
    expect(await f.stat(ns, seg('a'))).toMatchObject({ fileName: 'a', type: 'Directory', size: 0 });
    expect(await f.stat(ns, [])).toMatchObject({ fileName: '_files', type: 'Directory' });
    expect((await f.files(ns)).map((e) => e.path)).toEqual(['a/b/c.txt']);
    expect(await f.search(ns, 'c.t')).toEqual(['/a/b/c.txt']);
  });

  it('moves a folder with its content and drops the folders a move or delete leaves empty', async () => {
    const f = files();
    const m = `${ns}.move`;
    await f.write(m, seg('src/one.txt'), Buffer.from('1'));
    await f.write(m, seg('src/deep/two.txt'), Buffer.from('2'));
    await f.mkdir(m, seg('src/vacant'));
    await f.move(m, seg('src'), seg('dst/inner'));
    expect(await children(m)).toEqual(['dst:Directory']);
    expect(await children(m, 'dst/inner')).toEqual(['deep:Directory', 'one.txt:File', 'vacant:Directory']);
    expect(text(await f.get(m, 'dst/inner/deep/two.txt'))).toBe('2');
    await f.delete(m, seg('dst/inner/deep/two.txt'));
    expect(await children(m, 'dst/inner')).toEqual(['one.txt:File', 'vacant:Directory']);
    await f.delete(m, seg('dst/inner/one.txt'));
    await f.delete(m, seg('dst/inner/vacant'));
    expect(await children(m)).toEqual([]);
  });

  it('round-trips a zip export into another namespace', async () => {
    const f = files();
    await f.write(`${ns}.zip`, seg('x.txt'), Buffer.from('x'));
    await f.write(`${ns}.zip`, seg('d/y.txt'), Buffer.from('y'));
    const chunks: Buffer[] = [];
    for await (const c of await f.exportZip(`${ns}.zip`)) chunks.push(c as Buffer);
    expect(Object.keys(unzipSync(Buffer.concat(chunks))).sort()).toEqual(['d/y.txt', 'x.txt']);
    const staged = f.stagingPath();
    await storageOf().put(staged, Buffer.concat(chunks));
    expect(await f.importZip(`${ns}.copy`, staged)).toBe(2);
    expect(text(await f.get(`${ns}.copy`, 'd/y.txt'))).toBe('y');
    expect(await storageOf().exists(`kestra:///${staged}`)).toBe(false);
  });

  it('bounds the files of a namespace by NAMESPACE_FILES_MAX_COUNT, uploads and imports alike', async () => {
    const f = new NamespaceFiles(storageOf(), { ...DEFAULT_LIMITS, namespaceFilesMaxCount: 2 });
    const l = `${ns}.limit`;
    await f.write(l, seg('one.txt'), Buffer.from('1'));
    await expect(f.write(l, seg('d/two.txt'), Buffer.from('2'))).rejects.toThrow(/NAMESPACE_FILES_MAX_COUNT/);
    const staged = f.stagingPath();
    await storageOf().put(staged, Buffer.from(zipSync({ 'a.txt': new Uint8Array(1), 'b.txt': new Uint8Array(1) })));
    await expect(f.importZip(l, staged)).rejects.toThrow(/NAMESPACE_FILES_MAX_COUNT/);
    expect((await f.files(l)).map((e) => e.path)).toEqual(['one.txt']);
  });
});
