// Internal storage on an S3-compatible bucket (cluster mode) through `minio`: `kestra:///<path>` is the object
// `<prefix>/<path>`, with the same path rules as the local storage. `getSync` (for the `read()` template function)
// runs the GET on a worker thread while the caller blocks on Atomics.wait, and is bounded in size.
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { Client } from 'minio';
import type { InternalStorage } from '../store/types.js';
import { storageSegments, storageUri } from './local.js';

export interface S3StorageOptions {
  /** `http(s)://host[:port]` of the S3 API. */
  endpoint: string;
  bucket: string;
  region?: string;
  accessKey?: string;
  secretKey?: string;
  sessionToken?: string;
  /** Key prefix under which every object lives (no leading or trailing slash needed). */
  prefix?: string;
  /** Path-style addressing (default true: what MinIO and most self-hosted servers expect). */
  pathStyle?: boolean;
  /** Largest object `getSync` reads (default 10 MiB). */
  maxSyncBytes?: number;
  /** How long `getSync` waits for the worker (default 30 s). */
  syncTimeoutMs?: number;
}

/** Connection settings handed to the minio client (and to the getSync worker). */
interface ClientConfig {
  endPoint: string; port?: number; useSSL: boolean; accessKey: string; secretKey: string;
  sessionToken?: string; region?: string; pathStyle: boolean;
}

function clientConfig(options: S3StorageOptions): ClientConfig {
  const url = new URL(options.endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`S3 endpoint must be http(s)://: ${options.endpoint}`);
  const config: ClientConfig = {
    endPoint: url.hostname.replace(/^\[|\]$/g, ''), useSSL: url.protocol === 'https:',
    accessKey: options.accessKey ?? '', secretKey: options.secretKey ?? '', pathStyle: options.pathStyle ?? true,
  };
  if (url.port) config.port = Number(url.port);
  if (options.sessionToken) config.sessionToken = options.sessionToken;
  if (options.region) config.region = options.region;
  return config;
}

function notFound(uri: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file in internal storage: ${uri}`), { code: 'ENOENT', status: 404 });
}

const isMissing = (err: unknown): boolean => {
  const code = (err as { code?: string })?.code;
  return code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchObject';
};

/** Worker body (CommonJS, run with `eval`): answers `{ key, port, signal, maxBytes }` requests with the object's bytes, `{ op: 'stat', ... }` ones with its size. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let client, initError;
try { client = new (require(workerData.minioPath).Client)(workerData.config); } catch (e) { initError = e; }
const missing = (e) => ['NoSuchKey', 'NotFound', 'NoSuchObject'].includes(e && e.code);
async function fetchObject(bucket, key, maxBytes) {
  const stat = await client.statObject(bucket, key);
  if (stat.size > maxBytes) return { ok: false, code: 'EFBIG', message: 'object is ' + stat.size + ' bytes, more than the ' + maxBytes + ' bytes a synchronous read allows' };
  const stream = await client.getObject(bucket, key);
  const chunks = []; let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > maxBytes) { stream.destroy(); return { ok: false, code: 'EFBIG', message: 'object exceeds ' + maxBytes + ' bytes' }; }
    chunks.push(chunk);
  }
  const out = new Uint8Array(size); let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return { ok: true, data: out };
}
parentPort.on('message', async ({ op, bucket, key, port, signal, maxBytes }) => {
  let reply;
  try {
    if (initError) throw initError;
    reply = op === 'stat' ? { ok: true, size: (await client.statObject(bucket, key)).size } : await fetchObject(bucket, key, maxBytes);
  }
  catch (e) { reply = { ok: false, code: missing(e) ? 'ENOENT' : (e && e.code) || 'EIO', message: String(e && e.message || e) }; }
  try { port.postMessage(reply, reply.ok && reply.data ? [reply.data.buffer] : []); }
  finally { port.close(); Atomics.store(signal, 0, 1); Atomics.notify(signal, 0); }
});
`;

/** Streams up to this size are buffered and written with a single PUT. */
const SINGLE_PUT_MAX = 16 * 1024 * 1024;

type SyncReply = { ok: true; data: Uint8Array } | { ok: true; size: number } | { ok: false; code: string; message: string };

export class S3Storage implements InternalStorage {
  readonly client: Client;
  readonly bucket: string;
  private readonly prefix: string;
  private readonly config: ClientConfig;
  private readonly maxSyncBytes: number;
  private readonly syncTimeoutMs: number;
  private worker: Worker | undefined;

  constructor(options: S3StorageOptions) {
    this.config = clientConfig(options);
    this.client = new Client(this.config);
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? '').split('/').filter(Boolean).join('/');
    this.maxSyncBytes = options.maxSyncBytes ?? 10 * 1024 * 1024;
    this.syncTimeoutMs = options.syncTimeoutMs ?? 30_000;
  }

  /** Creates the bucket when it does not exist (idempotent). */
  async ensureBucket(): Promise<void> {
    if (await this.client.bucketExists(this.bucket)) return;
    try {
      await this.client.makeBucket(this.bucket, this.config.region ?? '');
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err;
    }
  }

  /** Object key behind a storage path or URI (validated like the local storage's paths). */
  key(pathOrUri: string): string {
    const key = storageSegments(pathOrUri).join('/');
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(storagePath: string, data: Buffer | NodeJS.ReadableStream): Promise<string> {
    const key = this.key(storagePath);
    if (Buffer.isBuffer(data) || data instanceof Uint8Array) {
      await this.client.putObject(this.bucket, key, Buffer.from(data), data.length);
      return storageUri(storagePath);
    }
    // A stream that ends below the threshold is sent in one PUT; longer ones go through a multipart upload.
    const source = (data as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let size = 0;
    for (;;) {
      const next = await source.next();
      if (next.done) {
        const body = Buffer.concat(head);
        await this.client.putObject(this.bucket, key, body, body.length);
        return storageUri(storagePath);
      }
      head.push(Buffer.from(next.value));
      size += head[head.length - 1]!.length;
      if (size > SINGLE_PUT_MAX) break;
    }
    async function* rest(): AsyncGenerator<Buffer> {
      yield* head;
      for (let next = await source.next(); !next.done; next = await source.next()) yield Buffer.from(next.value);
    }
    await this.client.putObject(this.bucket, key, Readable.from(rest()));
    return storageUri(storagePath);
  }

  async get(uri: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.stream(uri)) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }

  /** Blocks the calling thread until a worker thread has read the object; objects above `maxSyncBytes` are refused. */
  getSync(uri: string): Buffer {
    const reply = this.askWorker(uri, 'get', 'reading');
    if ('data' in reply) return Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength);
    throw new Error(`reading ${uri} from S3: unexpected reply from the storage worker`);
  }

  /** Blocks the calling thread until a worker thread has the object's size; undefined when there is no such object. */
  statSync(uri: string): number | undefined {
    try {
      const reply = this.askWorker(uri, 'stat', 'sizing');
      if ('size' in reply) return reply.size;
      throw new Error(`sizing ${uri} on S3: unexpected reply from the storage worker`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** One synchronous request to the worker thread (Atomics.wait on a shared flag, bounded by `syncTimeoutMs`). */
  private askWorker(uri: string, op: 'get' | 'stat', doing: string): Exclude<SyncReply, { ok: false }> {
    const key = this.key(uri);
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    try {
      this.syncWorker().postMessage({ op, bucket: this.bucket, key, port: port2, signal, maxBytes: this.maxSyncBytes }, [port2]);
      if (Atomics.wait(signal, 0, 0, this.syncTimeoutMs) === 'timed-out') {
        throw Object.assign(new Error(`${doing} ${uri} from S3 timed out after ${this.syncTimeoutMs} ms`), { code: 'ETIMEDOUT' });
      }
      const reply = receiveMessageOnPort(port1)?.message as SyncReply | undefined;
      if (!reply) throw new Error(`${doing} ${uri} from S3: no reply from the storage worker`);
      if (reply.ok) return reply;
      if (reply.code === 'ENOENT') throw notFound(uri);
      throw Object.assign(new Error(`${doing} ${uri} from S3: ${reply.message}`), { code: reply.code, ...(reply.code === 'EFBIG' ? { status: 413 } : {}) });
    } finally {
      port1.close();
    }
  }

  async stream(uri: string): Promise<NodeJS.ReadableStream> {
    try {
      return await this.client.getObject(this.bucket, this.key(uri));
    } catch (err) {
      throw isMissing(err) ? notFound(uri) : err;
    }
  }

  async exists(uri: string): Promise<boolean> {
    const key = this.key(uri);
    try {
      await this.client.statObject(this.bucket, key);
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async size(uri: string): Promise<number> {
    try {
      return (await this.client.statObject(this.bucket, this.key(uri))).size;
    } catch (err) {
      throw isMissing(err) ? notFound(uri) : err;
    }
  }

  async delete(uri: string): Promise<boolean> {
    if (!(await this.exists(uri))) return false;
    await this.client.removeObject(this.bucket, this.key(uri));
    return true;
  }

  /** Lists the objects under the folder and removes them in batches of 1000 (S3's DeleteObjects bound). */
  async deleteTree(pathOrUri: string): Promise<number> {
    const prefix = `${this.key(pathOrUri)}/`;
    let removed = 0;
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await this.client.removeObjects(this.bucket, batch);
      removed += batch.length;
      batch = [];
    };
    for await (const item of this.client.listObjectsV2(this.bucket, prefix, true) as AsyncIterable<{ name?: string }>) {
      if (item.name) batch.push(item.name);
      if (batch.length >= 1000) await flush();
    }
    await flush();
    return removed;
  }

  /** Stops the getSync worker thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private syncWorker(): Worker {
    if (!this.worker) {
      const minioPath = createRequire(import.meta.url).resolve('minio');
      this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { config: this.config, minioPath } });
      this.worker.unref();
      this.worker.on('error', (err) => { console.error('S3 storage worker failed:', err.message); this.worker = undefined; });
    }
    return this.worker;
  }
}
