// Hostile archives against compress.ArchiveDecompress / FileDecompress (real tar, zip and gzip bytes made by the same
// libraries real tools use; real internal storage): traversal, absolute paths, links refused; bombs stopped at the limit.
import { gzipSync } from 'node:zlib';
import tarStream from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';
import { safeEntryName } from './archive.js';

let t: TestContext | undefined;
const savedEnv = { ...process.env };
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  process.env = { ...savedEnv };
});

async function tarOf(entries: { name: string; type?: 'file' | 'symlink' | 'link'; content?: string; linkname?: string }[]): Promise<Buffer> {
  const pack = tarStream.pack();
  for (const e of entries) {
    if (e.type === 'symlink' || e.type === 'link') pack.entry({ name: e.name, type: e.type, linkname: e.linkname ?? '/etc/passwd' });
    else pack.entry({ name: e.name }, e.content ?? 'x');
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function zipOf(add: (z: yazl.ZipFile) => void): Promise<Buffer> {
  const z = new yazl.ZipFile();
  add(z);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

const DECOMPRESS = 'ai.service.plugin.compress.ArchiveDecompress';

/** Runs ArchiveDecompress on `bytes`; returns the result and the files left in the task run's storage folder. */
async function extract(bytes: Buffer, algorithm: string, compression?: string) {
  t = makeTestContext({ task: { id: 'x', type: DECOMPRESS, from: '', algorithm, ...(compression ? { compression } : {}) } });
  const from = await t.ctx.storage.put(`${t.ctx.storagePrefix}/input.bin`, bytes);
  (t.ctx.task as Record<string, unknown>).from = from;
  const r = await getRunnable(DECOMPRESS)!.run(t.ctx);
  const left = (await t.ctx.storage.tree!.list(t.ctx.storagePrefix, 1000, () => new Error('too many')))
    .filter((e) => e.type === 'File').map((e) => e.path).filter((p) => p !== 'input.bin');
  return { r, left };
}

describe('safeEntryName', () => {
  it.each(['../x', 'a/../../x', '/etc/passwd', 'C:/x', 'a\\..\\x', 'a\0b', '..'])('refuses %s', (name) => {
    expect(() => safeEntryName(name)).toThrow(/refused/);
  });
  it('normalizes . and empty segments', () => expect(safeEntryName('./a//b/./c.txt')).toBe('a/b/c.txt'));
});

describe('compress.ArchiveDecompress on hostile archives', () => {
  it.each([
    ['a parent path', '../escape.txt', /'\.\.' could leave/],
    ['an absolute path', '/etc/cron.d/evil', /absolute path/],
  ])('refuses a tar entry with %s and keeps nothing it wrote before', async (_what, name, message) => {
    const { r, left } = await extract(await tarOf([{ name: 'ok.txt' }, { name }]), 'TAR');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(message);
    expect(left).toEqual([]);
  });

  it.each(['symlink', 'link'] as const)('refuses a tar %s', async (type) => {
    const { r } = await extract(await tarOf([{ name: 'passwd', type }]), 'TAR');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/links and special files are refused/);
  });

  it('refuses a zip entry named ../ (name patched in after writing, as an attacker would)', async () => {
    const bytes = await zipOf((z) => z.addBuffer(Buffer.from('evil'), 'XX/escape.txt'));
    const hostile = Buffer.from(bytes.toString('latin1').replaceAll('XX/escape.txt', '../escape.txt'), 'latin1');
    const { r, left } = await extract(hostile, 'ZIP');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/\.\./);
    expect(left).toEqual([]);
  });

  it('refuses a zip symlink entry', async () => {
    const bytes = await zipOf((z) => z.addBuffer(Buffer.from('/etc/passwd'), 'link', { mode: 0o120777 }));
    const { r } = await extract(bytes, 'ZIP');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/links and special files are refused/);
  });

  it('stops a tar.gz bomb at ARCHIVE_MAX_EXTRACTED_BYTES and deletes what it wrote', async () => {
    process.env.ARCHIVE_MAX_EXTRACTED_BYTES = String(64 * 1024);
    const zeros = '\0'.repeat(48 * 1024);
    const bomb = gzipSync(await tarOf([{ name: 'a', content: zeros }, { name: 'b', content: zeros }, { name: 'c', content: zeros }]));
    expect(bomb.length).toBeLessThan(4096);
    const { r, left } = await extract(bomb, 'TAR', 'GZIP');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/over the limit of 65536 .*ARCHIVE_MAX_EXTRACTED_BYTES/);
    expect(left).toEqual([]);
  });

  it('stops a zip bomb (one deflated entry) at ARCHIVE_MAX_EXTRACTED_BYTES', async () => {
    process.env.ARCHIVE_MAX_EXTRACTED_BYTES = String(64 * 1024);
    const bytes = await zipOf((z) => z.addBuffer(Buffer.alloc(1024 * 1024), 'zeros.bin'));
    expect(bytes.length).toBeLessThan(8 * 1024);
    const { r, left } = await extract(bytes, 'ZIP');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/ARCHIVE_MAX_EXTRACTED_BYTES/);
    expect(left).toEqual([]);
  });

  it('refuses a zip of more entries than ARCHIVE_MAX_ENTRIES before extracting any', async () => {
    process.env.ARCHIVE_MAX_ENTRIES = '2';
    const bytes = await zipOf((z) => { for (const n of ['a', 'b', 'c']) z.addBuffer(Buffer.from(n), n); });
    const { r, left } = await extract(bytes, 'ZIP');
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/ARCHIVE_MAX_ENTRIES/);
    expect(left).toEqual([]);
  });

  it('stops a gzip bomb in FileDecompress', async () => {
    process.env.ARCHIVE_MAX_EXTRACTED_BYTES = String(64 * 1024);
    const type = 'ai.service.plugin.compress.FileDecompress';
    t = makeTestContext({ task: { id: 'x', type, from: '', compression: 'GZIP' } });
    (t.ctx.task as Record<string, unknown>).from = await t.ctx.storage.put(`${t.ctx.storagePrefix}/in.gz`, gzipSync(Buffer.alloc(1024 * 1024)));
    const r = await getRunnable(type)!.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/ARCHIVE_MAX_EXTRACTED_BYTES/);
  });

  it('extracts nested paths of a plain zip', async () => {
    const bytes = await zipOf((z) => { z.addBuffer(Buffer.from('A'), 'dir/a.txt'); z.addEmptyDirectory('empty'); });
    const { r } = await extract(bytes, 'ZIP');
    expect(r.state).toBe('SUCCESS');
    const files = r.outputs!.files as Record<string, string>;
    expect(Object.keys(files)).toEqual(['dir/a.txt']);
    expect((await t!.ctx.storage.get(files['dir/a.txt']!)).toString()).toBe('A');
  });
});

describe('round trips', () => {
  it.each([
    ['ZIP', undefined], ['ZIP', 'DEFLATE'], ['JAR', undefined], ['TAR', undefined], ['TAR', 'GZIP'], ['TAR', 'BROTLI'], ['TAR', 'DEFLATE'],
  ])('ArchiveCompress then ArchiveDecompress keep paths and bytes (%s, %s)', async (algorithm, compression) => {
    const compressType = 'ai.service.plugin.compress.ArchiveCompress';
    t = makeTestContext({ task: { id: 'x', type: compressType, algorithm, ...(compression ? { compression } : {}) } });
    const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256));
    const from = {
      'bin/data.bin': await t.ctx.storage.put(`${t.ctx.storagePrefix}/data.bin`, binary),
      'empty.txt': await t.ctx.storage.put(`${t.ctx.storagePrefix}/empty.txt`, Buffer.alloc(0)),
    };
    Object.assign(t.ctx.task, { from });
    const packed = await getRunnable(compressType)!.run(t.ctx);
    expect(packed.error).toBeUndefined();
    Object.assign(t.ctx.task, { type: DECOMPRESS, from: packed.outputs!.uri });
    const unpacked = await getRunnable(DECOMPRESS)!.run(t.ctx);
    expect(unpacked.error).toBeUndefined();
    const files = unpacked.outputs!.files as Record<string, string>;
    expect(Object.keys(files).sort()).toEqual(['bin/data.bin', 'empty.txt']);
    expect((await t.ctx.storage.get(files['bin/data.bin']!)).equals(binary)).toBe(true);
    expect((await t.ctx.storage.get(files['empty.txt']!)).length).toBe(0);
  });

  it.each(['GZIP', 'DEFLATE', 'BROTLI'])('FileCompress then FileDecompress (%s)', async (compression) => {
    t = makeTestContext({ task: { id: 'x', type: 'ai.service.plugin.compress.FileCompress', compression } });
    const text = Buffer.from('abc'.repeat(10_000));
    Object.assign(t.ctx.task, { from: await t.ctx.storage.put(`${t.ctx.storagePrefix}/in.txt`, text) });
    const packed = await getRunnable('ai.service.plugin.compress.FileCompress')!.run(t.ctx);
    expect(await t.ctx.storage.size(packed.outputs!.uri as string)).toBeLessThan(text.length / 10);
    Object.assign(t.ctx.task, { from: packed.outputs!.uri });
    const unpacked = await getRunnable('ai.service.plugin.compress.FileDecompress')!.run(t.ctx);
    expect((await t.ctx.storage.get(unpacked.outputs!.uri as string)).equals(text)).toBe(true);
  });

  it('refuses an ArchiveCompress entry path that could leave the archive folder', async () => {
    const compressType = 'ai.service.plugin.compress.ArchiveCompress';
    t = makeTestContext({ task: { id: 'x', type: compressType, algorithm: 'TAR' } });
    Object.assign(t.ctx.task, { from: { '../up.txt': await t.ctx.storage.put(`${t.ctx.storagePrefix}/a`, Buffer.from('a')) } });
    const r = await getRunnable(compressType)!.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/'\.\.' could leave/);
  });
});
