// Internal storage on the local disk (embedded mode): `kestra:///<path>` lives at `<root>/<path>`.
// Writes are atomic (temporary file + rename); paths that could leave the root are rejected.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { InternalStorage } from '../store/types.js';
import { badPath, storageSegments, storageUri } from './paths.js';

export { storageSegments, storageUri } from './paths.js';

/** Error for a file that does not exist, carrying code ENOENT like Node's own. */
function notFound(uri: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file in internal storage: ${uri}`), { code: 'ENOENT', status: 404 });
}

export class LocalStorage implements InternalStorage {
  readonly root: string;

  constructor(rootDir: string) {
    this.root = path.resolve(rootDir);
  }

  /** Absolute file path behind a path or URI, guaranteed to stay inside the root. */
  resolve(pathOrUri: string): string {
    const file = path.resolve(this.root, ...storageSegments(pathOrUri));
    if (!file.startsWith(this.root + path.sep)) throw badPath(`Path outside internal storage rejected: ${pathOrUri}`);
    return file;
  }

  async put(storagePath: string, data: Buffer | NodeJS.ReadableStream): Promise<string> {
    const file = this.resolve(storagePath);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      if (Buffer.isBuffer(data) || data instanceof Uint8Array) await writeFile(tmp, data);
      else await pipeline(data, createWriteStream(tmp));
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return storageUri(storagePath);
  }

  async get(uri: string): Promise<Buffer> {
    try {
      return await readFile(this.resolve(uri));
    } catch (err) {
      throw isMissing(err) ? notFound(uri) : err;
    }
  }

  getSync(uri: string): Buffer {
    try {
      return readFileSync(this.resolve(uri));
    } catch (err) {
      throw isMissing(err) ? notFound(uri) : err;
    }
  }

  statSync(uri: string): number | undefined {
    try {
      const info = statSync(this.resolve(uri));
      return info.isFile() ? info.size : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async stream(uri: string): Promise<NodeJS.ReadableStream> {
    const file = this.resolve(uri);
    await this.statFile(uri, file);
    return createReadStream(file);
  }

  async exists(uri: string): Promise<boolean> {
    const file = this.resolve(uri);
    try {
      return (await stat(file)).isFile();
    } catch {
      return false;
    }
  }

  async size(uri: string): Promise<number> {
    return (await this.statFile(uri, this.resolve(uri))).size;
  }

  async delete(uri: string): Promise<boolean> {
    try {
      await unlink(this.resolve(uri));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async deleteTree(pathOrUri: string): Promise<number> {
    const dir = this.resolve(pathOrUri);
    let files = 0;
    try {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      files = entries.filter((e) => !e.isDirectory()).length;
    } catch (err) {
      if (isMissing(err)) return 0;
      throw err;
    }
    await rm(dir, { recursive: true, force: true });
    return files;
  }

  localPath(uri: string): string | undefined {
    const file = this.resolve(uri);
    return existsSync(file) ? file : undefined;
  }

  private async statFile(uri: string, file: string) {
    try {
      const info = await stat(file);
      if (!info.isFile()) throw notFound(uri);
      return info;
    } catch (err) {
      throw isMissing(err) ? notFound(uri) : err;
    }
  }
}

const isMissing = (err: unknown): boolean =>
  (err as NodeJS.ErrnoException)?.code === 'ENOENT' || (err as NodeJS.ErrnoException)?.code === 'ENOTDIR';
