// Namespace files (Kestra's code-editor files of a namespace) over internal storage, in Kestra's layout
// `<namespace as path>/_files/<path>`: the path rules (no traversal, no absolute or Windows paths, no NUL), Kestra's
// FileAttributes, listing, search, folders, move, delete (with the folders a deletion leaves empty), and zip export and
// import. Every walk and every write is bounded by NAMESPACE_FILES_MAX_COUNT and NAMESPACE_FILES_MAX_BYTES. One
// definition for both homes (local disk, S3 bucket: their StorageTree) and for the API and task attempts alike.
import { randomUUID } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { Zip, ZipDeflate } from 'fflate';
import { unzipBounded } from './unzip.js';
import { DEFAULT_LIMITS, limitError, type Limits } from '../core/limits.js';
import type { InternalStorage, StorageEntry, StorageTree } from '../store/types.js';
import { NAMESPACE_FILES_SEGMENT, namespaceFilesPath } from './paths.js';

/** A refused request on namespace files: its HTTP status and the field it is about. */
export class NamespaceFileError extends Error {
  constructor(readonly status: number, message: string, readonly field?: string) {
    super(message);
    this.name = 'NamespaceFileError';
  }
}

/** Kestra's FileAttributes (io.kestra.core.storages.FileAttributes). */
export interface FileAttributes {
  fileName: string;
  lastModifiedTime: number;
  creationTime: number;
  type: 'File' | 'Directory';
  size: number;
  metadata: Record<string, string>;
}

type NsLimits = Pick<Limits, 'namespaceFilesMaxCount' | 'namespaceFilesMaxBytes'>;

/** Longest file or folder name (as on common filesystems, and Kestra). */
const MAX_NAME = 255;
/** Kestra keeps `_flows` for flow sources: such paths are refused (flows are not imported through namespace files here). */
const FLOWS_FOLDER = '_flows';
/** Uploads are staged here (a first segment no namespace can have) and moved into place once complete and checked. */
const STAGING = '_uploads';
/** Namespace segments no flow can have (operator/model/semantic.ts): a namespace named so is not one. */
const RESERVED_SEGMENTS = new Set([NAMESPACE_FILES_SEGMENT, 'executions']);

const bad = (message: string, field = 'path'): NamespaceFileError => new NamespaceFileError(400, message, field);
const missing = (what: string): NamespaceFileError => new NamespaceFileError(404, what);

/**
 * The segments of a namespace file path as a caller gives it (`/scripts/a.py`, `scripts/a.py`; the root is `/` or
 * empty when `root` is allowed). Refused: `.` and `..` segments, backslashes (Windows separators), drive letters, NUL
 * and other control characters, names longer than 255 characters, and Kestra's reserved `_flows` folder.
 */
export function parseNamespaceFilePath(raw: unknown, field = 'path', opts: { root?: boolean } = {}): string[] {
  if (raw === undefined || raw === null || (raw === '' && !opts.root)) {
    if (opts.root) return [];
    throw bad(`The query parameter '${field}' is required`, field);
  }
  if (typeof raw !== 'string') throw bad(`'${field}' must be one path`, field);
  const show = JSON.stringify(raw);
  if (/[\x00-\x1f\x7f]/.test(raw)) throw bad(`Invalid ${field} ${show}: NUL and control characters are refused`, field);
  if (raw.includes('\\')) throw bad(`Invalid ${field} ${show}: backslashes (Windows separators) are refused; use '/'`, field);
  if (/^[a-z]:/i.test(raw)) throw bad(`Invalid ${field} ${show}: drive letters are refused; paths are relative to the namespace`, field);
  const segments = raw.split('/').filter((s) => s !== '');
  for (const s of segments) {
    if (s === '.' || s === '..') throw bad(`Invalid ${field} ${show}: '.' and '..' segments are refused (no path traversal)`, field);
    if (s.length > MAX_NAME) throw bad(`Invalid ${field}: a file or folder name exceeds the maximum length of ${MAX_NAME} characters`, field);
  }
  if (segments[0] === FLOWS_FOLDER) throw bad(`Forbidden ${field} ${show}: '/${FLOWS_FOLDER}' is reserved for flow sources (import flows with POST /flows)`, field);
  if (segments.length === 0 && !opts.root) throw bad(`Invalid ${field} ${show}: the namespace root is not a file`, field);
  return segments;
}

/** `/a/b` of segments. */
export const displayPath = (segments: string[]): string => `/${segments.join('/')}`;

function attributes(name: string, e: StorageEntry): FileAttributes {
  return { fileName: name, lastModifiedTime: e.lastModified, creationTime: e.created, type: e.type, size: e.size, metadata: {} };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

/** A namespace file a task may receive: its path (`a/b.py`) and size. */
export interface NamespaceFileEntry { path: string; size: number }

export class NamespaceFiles {
  constructor(private readonly storage: InternalStorage, private readonly limits: NsLimits = DEFAULT_LIMITS) {}

  private get tree(): StorageTree {
    if (!this.storage.tree) throw new Error('This internal storage has no folders: namespace files are not available');
    return this.storage.tree;
  }

  /** Storage path of a namespace file (segments percent-encoded: storage paths decode them back to the exact names). */
  private at(namespace: string, segments: string[]): string {
    const reserved = namespace.split('.').find((s) => RESERVED_SEGMENTS.has(s));
    if (reserved) throw bad(`Invalid namespace '${namespace}': \`${reserved}\` is a reserved folder of internal storage, not a namespace segment`, 'namespace');
    return [namespaceFilesPath(namespace), ...segments.map(encodeURIComponent)].join('/');
  }

  /** Where a write goes, once checked not to lead out of the storage through a link (stat refuses those). */
  private async target(namespace: string, segments: string[]): Promise<string> {
    const p = this.at(namespace, segments);
    await this.tree.stat(p);
    return p;
  }

  /** `kestra:///` URI of a namespace file. */
  uri(namespace: string, segments: string[]): string {
    return `kestra:///${this.at(namespace, segments)}`;
  }

  /** Every file and folder of the namespace (bounded by NAMESPACE_FILES_MAX_COUNT). */
  async all(namespace: string): Promise<StorageEntry[]> {
    return this.tree.list(this.at(namespace, []), this.limits.namespaceFilesMaxCount,
      () => limitError('namespaceFilesMaxCount', `Namespace '${namespace}' holds too many namespace files`, this.limits as Limits));
  }

  /** Every file (not folder) of the namespace, paths without a leading slash. */
  async files(namespace: string): Promise<NamespaceFileEntry[]> {
    return (await this.all(namespace)).filter((e) => e.type === 'File').map((e) => ({ path: e.path, size: e.size })).sort((a, b) => a.path.localeCompare(b.path));
  }

  async stat(namespace: string, segments: string[]): Promise<FileAttributes> {
    if (segments.length === 0) {
      // Kestra creates the namespace's root folder when it is first looked at.
      let root = await this.tree.stat(this.at(namespace, []));
      if (!root) { await this.tree.mkdir(this.at(namespace, [])); root = await this.tree.stat(this.at(namespace, [])); }
      return attributes(NAMESPACE_FILES_SEGMENT, root ?? { path: '', type: 'Directory', size: 0, lastModified: 0, created: 0 });
    }
    const e = await this.tree.stat(this.at(namespace, segments));
    if (!e) throw missing(`File not found: ${displayPath(segments)}`);
    return attributes(segments[segments.length - 1]!, e);
  }

  /** The direct children of a folder (the root is created when absent, as Kestra does). */
  async list(namespace: string, segments: string[]): Promise<FileAttributes[]> {
    const here = segments.length === 0 ? await this.stat(namespace, []) : await this.stat(namespace, segments).catch((err) => {
      throw err instanceof NamespaceFileError && err.status === 404 ? missing(`Directory not found: ${displayPath(segments)}`) : err;
    });
    if (here.type !== 'Directory') throw bad(`Not a directory: ${displayPath(segments)}`);
    const entries = await this.tree.list(this.at(namespace, segments), this.limits.namespaceFilesMaxCount,
      () => limitError('namespaceFilesMaxCount', `Directory ${displayPath(segments)} of namespace '${namespace}' holds too many entries`, this.limits as Limits));
    return entries.filter((e) => !e.path.includes('/')).sort((a, b) => a.path.localeCompare(b.path)).map((e) => attributes(e.path, e));
  }

  async read(namespace: string, segments: string[]): Promise<{ stream: NodeJS.ReadableStream; size: number }> {
    const e = await this.tree.stat(this.at(namespace, segments));
    if (!e || e.type !== 'File') throw missing(`File not found: ${displayPath(segments)}`);
    return { stream: await this.storage.stream(this.uri(namespace, segments)), size: e.size };
  }

  /** Paths (`/a/b.txt`) of the files whose path contains `q`, as Kestra's search. */
  async search(namespace: string, q: string): Promise<string[]> {
    return (await this.files(namespace)).map((f) => `/${f.path}`).filter((p) => p.includes(q));
  }

  async mkdir(namespace: string, segments: string[]): Promise<void> {
    const entries = await this.all(namespace);
    this.checkPlacement(entries, segments, 'Directory');
    if (entries.length + segments.length > this.limits.namespaceFilesMaxCount) {
      throw limitError('namespaceFilesMaxCount', `Creating ${displayPath(segments)} in namespace '${namespace}'`, this.limits as Limits);
    }
    await this.tree.mkdir(await this.target(namespace, segments));
  }

  /** A parent that is a file, or a target of the other kind, is a conflict. */
  private checkPlacement(entries: StorageEntry[], segments: string[], kind: 'File' | 'Directory'): void {
    const byPath = new Map(entries.map((e) => [e.path, e]));
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (byPath.get(parent)?.type === 'File') throw new NamespaceFileError(409, `Cannot create ${displayPath(segments)}: /${parent} is a file`, 'path');
    }
    const existing = byPath.get(segments.join('/'));
    if (existing && existing.type !== kind) {
      throw new NamespaceFileError(409, `Cannot create ${displayPath(segments)}: a ${existing.type === 'File' ? 'file' : 'directory'} exists there`, 'path');
    }
  }

  /** Where an upload is staged before `commit` moves it into place (outside every namespace's files). */
  stagingPath(): string {
    return `${STAGING}/${randomUUID()}/upload`;
  }

  /** The namespace's budget for new files, from its current entries. */
  private budget(namespace: string, entries: StorageEntry[]): Budget {
    return new Budget(namespace, entries, this.limits);
  }

  /** Moves a staged upload to a namespace file, once the namespace's limits allow it; the staged copy is removed. */
  async commit(namespace: string, segments: string[], staged: string): Promise<void> {
    try {
      const size = await this.storage.size(`kestra:///${staged}`);
      const entries = await this.all(namespace);
      this.checkPlacement(entries, segments, 'File');
      this.budget(namespace, entries).add(segments.join('/'), size);
      await this.storage.put(await this.target(namespace, segments), await this.storage.stream(`kestra:///${staged}`));
    } finally {
      await this.discard(staged);
    }
  }

  /** Removes a staged upload and its folder. */
  async discard(staged: string): Promise<void> {
    await this.tree.deleteTree(staged.slice(0, staged.lastIndexOf('/'))).catch(() => false);
  }

  /** Writes a small file (tests, tasks): the same checks as an upload. */
  async write(namespace: string, segments: string[], data: Buffer): Promise<void> {
    const entries = await this.all(namespace);
    this.checkPlacement(entries, segments, 'File');
    this.budget(namespace, entries).add(segments.join('/'), data.length);
    await this.storage.put(await this.target(namespace, segments), data);
  }

  /** Moves (renames) a file or a folder; the target must not exist, a folder cannot move into itself. */
  async move(namespace: string, from: string[], to: string[]): Promise<void> {
    if (from.length === 0 || to.length === 0) throw bad('The namespace root cannot be moved', from.length === 0 ? 'from' : 'to');
    const source = await this.tree.stat(this.at(namespace, from));
    if (!source) throw missing(`File not found: ${displayPath(from)}`);
    if (await this.tree.stat(this.at(namespace, to))) throw new NamespaceFileError(409, `Cannot move to ${displayPath(to)}: it exists`, 'to');
    if (to.length > from.length && from.every((s, i) => to[i] === s)) throw bad(`Cannot move ${displayPath(from)} into itself`, 'to');
    const entries = await this.all(namespace);
    this.checkPlacement(entries, to, source.type);
    if (source.type === 'File') {
      await this.copyFile(namespace, from, to);
      await this.storage.delete(this.uri(namespace, from));
    } else {
      await this.tree.mkdir(this.at(namespace, to));
      for (const e of await this.tree.list(this.at(namespace, from), this.limits.namespaceFilesMaxCount, () => limitError('namespaceFilesMaxCount', `Moving ${displayPath(from)}`, this.limits as Limits))) {
        const rel = e.path.split('/');
        if (e.type === 'Directory') await this.tree.mkdir(this.at(namespace, [...to, ...rel]));
        else await this.copyFile(namespace, [...from, ...rel], [...to, ...rel]);
      }
      await this.tree.deleteTree(this.at(namespace, from));
    }
    await this.dropEmptyParents(namespace, from);
  }

  private async copyFile(namespace: string, from: string[], to: string[]): Promise<void> {
    await this.storage.put(await this.target(namespace, to), await this.storage.stream(this.uri(namespace, from)));
  }

  /** Deletes a file or a folder (with its content), then the folders this left empty (not the root), as Kestra. */
  async delete(namespace: string, segments: string[]): Promise<void> {
    if (segments.length === 0) throw bad('The namespace root cannot be deleted');
    const e = await this.tree.stat(this.at(namespace, segments));
    if (!e) throw missing(`File not found: ${displayPath(segments)}`);
    if (e.type === 'Directory') await this.tree.deleteTree(this.at(namespace, segments));
    else await this.storage.delete(this.uri(namespace, segments));
    await this.dropEmptyParents(namespace, segments);
  }

  private async dropEmptyParents(namespace: string, segments: string[]): Promise<void> {
    const NOT_EMPTY = new Error('not empty');
    for (let n = segments.length - 1; n >= 1; n--) {
      const parent = segments.slice(0, n);
      const empty = await this.tree.list(this.at(namespace, parent), 0, () => NOT_EMPTY).then((l) => l.length === 0, (err) => {
        if (err === NOT_EMPTY) return false;
        throw err;
      });
      if (!empty) return;
      await this.tree.deleteTree(this.at(namespace, parent));
    }
  }

  /** Every file of the namespace in a zip (entries without a leading slash), streamed. */
  async exportZip(namespace: string): Promise<Readable> {
    const files = await this.files(namespace);
    const out = new PassThrough();
    let failed = false;
    out.on('close', () => { failed = true; }); // the caller went away: stop reading files
    const zip = new Zip((err, chunk, final) => {
      if (err) { failed = true; out.destroy(err); return; }
      out.write(Buffer.from(chunk));
      if (final) out.end();
    });
    void (async () => {
      for (const f of files) {
        const entry = new ZipDeflate(f.path, { level: 6 });
        zip.add(entry);
        for await (const c of await this.storage.stream(this.uri(namespace, f.path.split('/'))) as AsyncIterable<Buffer>) {
          entry.push(Buffer.from(c));
          if (out.writableNeedDrain) await new Promise((r) => out.once('drain', r));
          if (failed) return;
        }
        entry.push(new Uint8Array(0), true);
      }
      zip.end();
    })().catch((err: unknown) => { failed = true; out.destroy(err as Error); });
    return out;
  }

  /**
   * Imports a staged zip: each file entry becomes a namespace file (folders come with their files; empty ones are not
   * kept, as in Kestra). Entry names follow the path rules; decompressed sizes count against the namespace's limits as
   * they are inflated (a zip bomb stops at the limit). Nothing is written unless the whole archive is acceptable.
   */
  async importZip(namespace: string, staged: string): Promise<number> {
    const entries = await this.all(namespace);
    const files = new Map<string, Buffer>();
    try {
      await this.inflate(namespace, staged, entries, files);
    } finally {
      await this.discard(staged);
    }
    for (const [p, data] of files) await this.storage.put(await this.target(namespace, p.split('/')), data);
    return files.size;
  }

  private async inflate(namespace: string, staged: string, entries: StorageEntry[], files: Map<string, Buffer>): Promise<void> {
    const budget = this.budget(namespace, entries);
    const keys = new Map<string, string>(); // entry name → file key
    const taken = new Set<string>();
    const stream = await this.storage.stream(`kestra:///${staged}`);
    const { files: inflated, seen } = await unzipBounded(stream as AsyncIterable<Buffer>, {
      entry: (name) => {
        const segments = parseNamespaceFilePath(name, 'fileContent');
        this.checkPlacement(entries, segments, 'File');
        const key = segments.join('/');
        if (taken.has(key)) throw bad(`Invalid zip file: the entry '${name}' appears twice`, 'fileContent');
        taken.add(key);
        keys.set(name, key);
        budget.add(key, 0);
      },
      bytes: (_name, n) => budget.grow(n),
      invalid: (message) => bad(message, 'fileContent'),
    });
    if (seen === 0) throw bad('Invalid zip file: it holds no entries', 'fileContent');
    for (const f of inflated) files.set(keys.get(f.name)!, f.data);
  }

  /** Reads a whole namespace file (tasks copy them into their working directory). */
  async get(namespace: string, path: string): Promise<Buffer> {
    return readAll((await this.read(namespace, path.split('/'))).stream);
  }
}

/**
 * What a namespace may still take (NAMESPACE_FILES_MAX_COUNT, NAMESPACE_FILES_MAX_BYTES), from its entries: files added
 * or replaced (`add`, with their parent folders) and bytes as they arrive (`grow`), each checked in constant time.
 */
class Budget {
  private readonly known: Map<string, StorageEntry>;
  private readonly added = new Set<string>();
  private bytes: number;
  private count: number;

  constructor(private readonly namespace: string, entries: StorageEntry[], private readonly limits: NsLimits) {
    this.known = new Map(entries.map((e) => [e.path, e]));
    this.bytes = entries.reduce((n, e) => n + (e.type === 'File' ? e.size : 0), 0);
    this.count = entries.length;
  }

  /** A file at `path` (replacing what is there) of `size` bytes. */
  add(path: string, size: number): void {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const sub = parts.slice(0, i).join('/');
      if (!this.known.has(sub) && !this.added.has(sub)) { this.added.add(sub); this.count++; }
    }
    this.bytes -= this.known.get(path)?.size ?? 0;
    if (this.count > this.limits.namespaceFilesMaxCount) {
      throw limitError('namespaceFilesMaxCount', `Namespace '${this.namespace}' would hold ${this.count} files and folders`, this.limits as Limits);
    }
    this.grow(size);
  }

  grow(size: number): void {
    this.bytes += size;
    if (this.bytes > this.limits.namespaceFilesMaxBytes) {
      throw limitError('namespaceFilesMaxBytes', `Namespace '${this.namespace}' would hold more than ${this.limits.namespaceFilesMaxBytes} bytes of files`, this.limits as Limits);
    }
  }
}
