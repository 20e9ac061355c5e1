// Local internal storage on a temporary directory: URIs, atomic writes from buffers and streams, traversal rejection.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalStorage, storageUri } from './local.js';

let root: string;
let storage: LocalStorage;

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'storage-test-'));
  storage = new LocalStorage(path.join(root, 'storage'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString();
}

describe('LocalStorage', () => {
  it('writes a buffer and reads it back through its URI', async () => {
    const uri = await storage.put('/company/flow/executions/e1/out.txt', Buffer.from('hello'));
    expect(uri).toBe('kestra:///company/flow/executions/e1/out.txt');
    expect((await storage.get(uri)).toString()).toBe('hello');
    expect(storage.getSync(uri).toString()).toBe('hello');
    expect(storage.statSync(uri)).toBe(5);
    expect(storage.statSync('kestra:///company/flow/executions/e1/nope.txt')).toBeUndefined();
    expect(storage.statSync('kestra:///company/flow')).toBeUndefined(); // a folder is no file
    expect(await readAll(await storage.stream(uri))).toBe('hello');
    expect(await storage.exists(uri)).toBe(true);
    expect(await storage.size(uri)).toBe(5);
    expect(storage.localPath(uri)).toBe(path.join(root, 'storage', 'company/flow/executions/e1/out.txt'));
  });

  it('writes a stream atomically and leaves no temporary file', async () => {
    const uri = await storage.put('a/b.csv', Readable.from(['x,y\n', '1,2\n']));
    expect(uri).toBe('kestra:///a/b.csv');
    expect((await storage.get(uri)).toString()).toBe('x,y\n1,2\n');
    await storage.put('a/b.csv', Buffer.from('replaced'));
    expect(readdirSync(path.join(root, 'storage', 'a'))).toEqual(['b.csv']);
    expect((await storage.get('kestra:///a/b.csv')).toString()).toBe('replaced');
  });

  it('removes the temporary file when the stream fails', async () => {
    const failing = new Readable({ read() { this.destroy(new Error('source broke')); } });
    await expect(storage.put('a/broken.bin', failing)).rejects.toThrow('source broke');
    expect(readdirSync(path.join(root, 'storage', 'a'))).toEqual([]);
  });

  it('percent-encodes names in URIs and decodes them back', async () => {
    const uri = await storage.put('ns/my file#1.txt', Buffer.from('x'));
    expect(uri).toBe('kestra:///ns/my%20file%231.txt');
    expect(readdirSync(path.join(root, 'storage', 'ns'))).toEqual(['my file#1.txt']);
    expect((await storage.get(uri)).toString()).toBe('x');
    expect(storageUri('kestra:///ns/my%20file%231.txt')).toBe(uri);
  });

  it('reports missing files with ENOENT and deletes', async () => {
    await expect(storage.get('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => storage.getSync('kestra:///nope.txt')).toThrow(/ENOENT/);
    await expect(storage.size('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(storage.stream('kestra:///nope.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await storage.exists('kestra:///nope.txt')).toBe(false);
    expect(storage.localPath('kestra:///nope.txt')).toBeUndefined();
    const uri = await storage.put('d.txt', Buffer.from('x'));
    expect(await storage.delete(uri)).toBe(true);
    expect(await storage.delete(uri)).toBe(false);
  });

  it('deletes a folder tree, counting its files, and nothing beside it', async () => {
    await storage.put('tree/e1/a.txt', Buffer.from('a'));
    await storage.put('tree/e1/sub/b.txt', Buffer.from('b'));
    const beside = await storage.put('tree/e10/c.txt', Buffer.from('c'));
    expect(await storage.deleteTree('tree/e1')).toBe(2);
    expect(await storage.exists('kestra:///tree/e1/a.txt')).toBe(false);
    expect(await storage.exists(beside)).toBe(true);
    expect(await storage.deleteTree('kestra:///tree/e1')).toBe(0);
    await expect(storage.deleteTree('tree/../..')).rejects.toThrow(Error);
  });

  it.each([
    'kestra:///../outside.txt', '../outside.txt', 'a/../../outside.txt', 'kestra:///a/%2e%2e/%2E%2E/outside.txt',
    'kestra:////etc/passwd', 'kestra:///a%2F..%2F..%2Foutside.txt', 'kestra:///%2Fetc%2Fpasswd', 'file:///etc/passwd', 'a/\0b', 'a\\..\\b', 'kestra://host/x', '', 'kestra:///',
  ])('rejects %j', async (bad) => {
    writeFileSync(path.join(root, 'outside.txt'), 'secret');
    await expect(storage.get(bad)).rejects.toThrow(Error);
    await expect(storage.put(bad, Buffer.from('x'))).rejects.toThrow(Error);
    expect(() => storage.resolve(bad)).toThrow(/rejected|Invalid|Unsupported|Empty/);
  });
});
