// The error kinds on real errors: SQLite's busy error from a second connection holding the write lock, fetch and
// client-node failures against a closed port and a server answering 429 / 503 / 404, store conflicts; everything else
// (engine errors, non-Error throws) is permanent. Also the backoff formula and retryTransient.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoff, isTransient, PermanentError, reasonOf, retryTransient, TransientError } from './faults.js';
import { openDatabase } from './store/sqlite/db.js';
import { tempDir } from './store/sqlite/test-fixtures.js';
import { ConflictError } from './store/types.js';

let server: Server;
let base = '';
/** Port of a server that was closed: connecting is refused. */
let closedPort = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const code = Number(/\/status\/(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message: `answered ${code}` }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
});

afterAll(() => new Promise((r) => server.close(r)));

const caught = async (f: () => unknown): Promise<unknown> => {
  try { await f(); } catch (err) { return err; }
  throw new Error('expected a failure');
};

function kubeClient(url: string): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
  });
  return kc.makeApiClient(CoreV1Api);
}

describe('isTransient', () => {
  it('SQLITE_BUSY from a write while another connection holds the write lock', () => {
    const tmp = tempDir('faults-');
    const file = join(tmp.dir, 'x.db');
    const a = openDatabase(file);
    const b = openDatabase(file, { busyTimeoutMs: 0 });
    try {
      a.exec('BEGIN IMMEDIATE');
      const err = (() => { try { b.prepare('INSERT INTO kv (namespace, key, type, value, updated) VALUES (?, ?, ?, ?, ?)').run('n', 'k', 'STRING', '"v"', 'now'); } catch (e) { return e; } })();
      expect((err as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      expect(isTransient(err)).toBe(true);
      a.exec('ROLLBACK');
    } finally { a.close(); b.close(); tmp.remove(); }
  });

  it('a permanent SQLite error (constraint, syntax) is not transient', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    db.exec('INSERT INTO t VALUES (1)');
    expect(isTransient((() => { try { db.exec('INSERT INTO t VALUES (1)'); } catch (e) { return e; } })())).toBe(false);
    expect(isTransient((() => { try { db.exec('SELEC nothing'); } catch (e) { return e; } })())).toBe(false);
    db.close();
  });

  it('fetch to a refused port (the socket error sits in `cause`) and client-node network errors', async () => {
    const fetchErr = await caught(() => fetch(`http://127.0.0.1:${closedPort}/`));
    expect((fetchErr as Error).message).toBe('fetch failed');
    expect(isTransient(fetchErr)).toBe(true);
    expect(isTransient(await caught(() => kubeClient(`http://127.0.0.1:${closedPort}`).listNamespacedPod({ namespace: 'a' })))).toBe(true);
  });

  it.each([[429, true], [500, true], [503, true], [404, false], [422, false], [409, false]])('Kubernetes API answer %i → transient %s', async (code, transient) => {
    // client-node's ApiException carries the status in `code`; the test server answers it for any path.
    const err = await caught(() => kubeClient(`${base}/status/${code}`).listNamespacedPod({ namespace: 'a' }));
    expect((err as { code?: unknown }).code).toBe(code);
    expect(isTransient(err)).toBe(transient);
  });

  it.each([
    ['a store conflict', new ConflictError('modified'), true],
    ['TransientError', new TransientError('later'), true],
    ['an S3 SlowDown', Object.assign(new Error('reduce your request rate'), { code: 'SlowDown' }), true],
    ['an S3 NoSuchKey', Object.assign(new Error('missing'), { code: 'NoSuchKey' }), false],
    ['ENOENT', Object.assign(new Error('no such file'), { code: 'ENOENT' }), false],
    ['PermanentError with a transient cause', new PermanentError('no', { cause: new ConflictError('x') }), false],
    ['an engine error', new Error("Task 'x' of task run 'y' is not in flow revision 1"), false],
    ['a TypeError', new TypeError('x is not a function'), false],
    ['a thrown string', 'SQLITE_BUSY', false],
    ['undefined', undefined, false],
    ['null', null, false],
    ['a prototype-less object', Object.create(null), false],
  ])('%s → %s', (_what, err, transient) => {
    expect(isTransient(err)).toBe(transient);
  });
});

describe('reasonOf', () => {
  it('names any thrown value, even one that cannot be printed', () => {
    expect(reasonOf(new Error('boom'))).toBe('boom');
    expect(reasonOf('plain')).toBe('plain');
    expect(reasonOf(undefined)).toBe('Non-error thrown: undefined');
    expect(reasonOf({ a: 1 })).toBe('Non-error thrown: {"a":1}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(reasonOf(cyclic)).toBe('Non-error thrown (not printable)');
    expect(reasonOf(Object.create(null))).toBe('Non-error thrown: {}');
    expect(reasonOf('x'.repeat(10_000))).toHaveLength(4001);
  });
});

describe('backoff and retryTransient', () => {
  it('grows exponentially, is capped, and jitters within the upper half', () => {
    expect([0, 1, 2, 3].map((n) => backoff(n, { baseMs: 100, maxMs: 1000, random: () => 1 }))).toEqual([100, 200, 400, 800]);
    expect(backoff(10, { baseMs: 100, maxMs: 1000, random: () => 1 })).toBe(1000);
    expect(backoff(10, { baseMs: 100, maxMs: 1000, random: () => 0 })).toBe(500);
    expect(backoff(5000, { baseMs: 100, maxMs: 1000, random: () => 0.5 })).toBe(750);
  });

  it('retries transient failures until success, and stops at the first permanent one', async () => {
    let calls = 0;
    const retries: number[] = [];
    expect(await retryTransient(async () => { if (++calls < 3) throw new ConflictError('again'); return 'done'; }, { baseMs: 1, onRetry: (_e, n) => retries.push(n) })).toBe('done');
    expect(retries).toEqual([0, 1]);
    calls = 0;
    await expect(retryTransient(async () => { calls++; throw new Error('bad input'); }, { baseMs: 1 })).rejects.toThrow('bad input');
    expect(calls).toBe(1);
  });

  it('gives up when its signal aborts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    await expect(retryTransient(async () => { throw new ConflictError('forever'); }, { baseMs: 5, maxMs: 5, signal: ac.signal })).rejects.toThrow('forever');
  });
});
