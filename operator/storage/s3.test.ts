// S3 internal storage against a real S3-protocol server (s3rver on port 0): bucket creation, URIs and keys, buffers and
// streams, the synchronous worker-thread read and its size bound, missing objects, rejected paths. s3rver runs in a
// child process: getSync blocks this thread, so a server on this thread's event loop could never answer it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3Storage } from './s3.js';

const KEY = 'S3RVER';
let dir: string;
let server: ChildProcess;
let endpoint: string;
let raw: Client;
const opened: S3Storage[] = [];

function storage(extra: Partial<ConstructorParameters<typeof S3Storage>[0]> = {}): S3Storage {
  const s = new S3Storage({ endpoint, bucket: 'internal', region: 'us-east-1', accessKey: KEY, secretKey: KEY, ...extra });
  opened.push(s);
  return s;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString();
}

async function keys(bucket: string): Promise<string[]> {
  const out: string[] = [];
  for await (const item of raw.listObjectsV2(bucket, '', true)) out.push((item as { name: string }).name);
  return out.sort();
}

/** Starts s3rver (a real S3-protocol server) in a child node process and resolves with the port it listens on. */
async function startS3rver(directory: string): Promise<{ port: number }> {
  const code = `import S3rver from 's3rver';
    const server = new S3rver({ address: '127.0.0.1', port: 0, directory: process.argv[1], silent: true });
    const addr = await server.run();
    console.log('PORT=' + addr.port);
    process.on('SIGTERM', () => server.close().then(() => process.exit(0)));`;
  server = spawn(process.execPath, ['--input-type=module', '-e', code, directory], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /PORT=(\d+)/.exec(out);
      if (m) resolve({ port: Number(m[1]) });
    });
    server.once('exit', (c) => reject(new Error(`s3rver exited with ${c}`)));
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 's3-storage-'));
  const addr = await startS3rver(dir);
  endpoint = `http://127.0.0.1:${addr.port}`;
  raw = new Client({ endPoint: '127.0.0.1', port: addr.port, useSSL: false, accessKey: KEY, secretKey: KEY, pathStyle: true, region: 'us-east-1' });
  await storage().ensureBucket();
});

afterAll(async () => {
  for (const s of opened) await s.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('S3Storage', () => {
  it('creates its bucket once, idempotently', async () => {
    const s = storage({ bucket: 'fresh-bucket' });
    expect(await raw.bucketExists('fresh-bucket')).toBe(false);
    await s.ensureBucket();
    await s.ensureBucket();
    expect(await raw.bucketExists('fresh-bucket')).toBe(true);
  });

  it('writes a buffer and reads it back through its URI, asynchronously and synchronously', async () => {
    const s = storage();
    const uri = await s.put('/company/flow/executions/e1/out.txt', Buffer.from('hello'));
    expect(uri).toBe('kestra:///company/flow/executions/e1/out.txt');
    expect((await s.get(uri)).toString()).toBe('hello');
    expect(s.getSync(uri).toString()).toBe('hello');
    expect(s.statSync(uri)).toBe(5);
    expect(await readAll(await s.stream(uri))).toBe('hello');
    expect(await s.exists(uri)).toBe(true);
    expect(await s.size(uri)).toBe(5);
    expect('localPath' in s).toBe(false);
    expect(await keys('internal')).toContain('company/flow/executions/e1/out.txt');
  });

  it('writes a stream of unknown length and replaces an object', async () => {
    const s = storage();
    const uri = await s.put('a/b.csv', Readable.from(['x,y\n', '1,2\n']));
    expect(uri).toBe('kestra:///a/b.csv');
    expect((await s.get(uri)).toString()).toBe('x,y\n1,2\n');
    await s.put('a/b.csv', Buffer.from('replaced'));
    expect(s.getSync('kestra:///a/b.csv').toString()).toBe('replaced');
  });

  it('decodes percent-encoded names into keys and keeps objects under the prefix', async () => {
    const s = storage({ bucket: 'prefixed', prefix: '/tenant-a/' });
    await s.ensureBucket();
    const uri = await s.put('ns/my file#1.txt', Buffer.from('x'));
    expect(uri).toBe('kestra:///ns/my%20file%231.txt');
    expect(await keys('prefixed')).toEqual(['tenant-a/ns/my file#1.txt']);
    expect(s.getSync(uri).toString()).toBe('x');
  });

  it('reads a multi-megabyte object synchronously, byte for byte', async () => {
    const s = storage();
    const data = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) & 0xff;
    const uri = await s.put('big/blob.bin', data);
    expect(s.getSync(uri).equals(data)).toBe(true);
  });

  it('refuses synchronous reads above the size bound', async () => {
    const s = storage({ maxSyncBytes: 1024 });
    const uri = await s.put('big/over.bin', Buffer.alloc(2048, 1));
    expect(() => s.getSync(uri)).toThrow(/more than the 1024 bytes/);
    expect((await s.get(uri)).length).toBe(2048);
    expect(s.getSync(await s.put('big/under.bin', Buffer.alloc(1024, 2))).length).toBe(1024);
  });

  it('reports missing objects with ENOENT and deletes', async () => {
    const s = storage();
    await expect(s.get('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => s.getSync('kestra:///nope.txt')).toThrow(/ENOENT/);
    expect(s.statSync('kestra:///nope.txt')).toBeUndefined();
    await expect(s.size('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(s.stream('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await s.exists('kestra:///nope.txt')).toBe(false);
    const uri = await s.put('d.txt', Buffer.from('x'));
    expect(await s.delete(uri)).toBe(true);
    expect(await s.delete(uri)).toBe(false);
    expect(await s.exists(uri)).toBe(false);
  });

  it('deletes a folder tree, counting its objects, and nothing beside it', async () => {
    const s = storage({ prefix: 'tree-test' });
    await s.put('tree/e1/a.txt', Buffer.from('a'));
    await s.put('tree/e1/sub/b.txt', Buffer.from('b'));
    const beside = await s.put('tree/e10/c.txt', Buffer.from('c'));
    expect(await s.deleteTree('tree/e1')).toBe(2);
    expect(await s.exists('kestra:///tree/e1/a.txt')).toBe(false);
    expect(await s.exists(beside)).toBe(true);
    expect(await s.deleteTree('kestra:///tree/e1')).toBe(0);
    expect(await s.deleteTree('a.b/f/executions/none')).toBe(0);
  });

  it.each([
    'kestra:///../outside.txt', '../outside.txt', 'a/../../outside.txt', 'kestra:///a/%2e%2e/%2E%2E/outside.txt',
    'kestra:////etc/passwd', 'kestra:///a%2F..%2F..%2Foutside.txt', 'file:///etc/passwd', 'a/\0b', 'a\\..\\b', 'kestra://host/x', '', 'kestra:///',
  ])('rejects %j', async (bad) => {
    const s = storage();
    await expect(s.get(bad)).rejects.toThrow(Error);
    await expect(s.put(bad, Buffer.from('x'))).rejects.toThrow(Error);
    expect(() => s.getSync(bad)).toThrow(/rejected|Invalid|Unsupported|Empty/);
  });
});
