// compress.ArchiveCompress / ArchiveDecompress (zip, tar, optionally gzip/deflate/brotli-compressed) and
// compress.FileCompress / FileDecompress: Kestra's plugin-compress over internal storage, streamed (no file is read
// whole). Archives are hostile: an entry that could leave its folder (`../`, an absolute path, a drive letter, a
// backslash), a link or a special file fails the task; the bytes written are counted as they are decompressed, so a
// zip bomb stops at ARCHIVE_MAX_EXTRACTED_BYTES, and an archive of more than ARCHIVE_MAX_ENTRIES entries is refused.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tarStream from 'tar-stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { limitError, limitsFromEnv, type Limits } from '../../core/limits.js';
import { definePlugin, p } from '../define.js';
import type { RunContext } from '../types.js';

export const ARCHIVE_ALGORITHMS = ['ZIP', 'JAR', 'TAR'] as const;
export const COMPRESSIONS = ['GZIP', 'DEFLATE', 'BROTLI'] as const;
type Algorithm = (typeof ARCHIVE_ALGORITHMS)[number];
type Compression = (typeof COMPRESSIONS)[number];

const EXTENSIONS: Record<Compression, string> = { GZIP: '.gz', DEFLATE: '.deflate', BROTLI: '.br' };
const compressor = (c: Compression): Transform =>
  ({ GZIP: () => zlib.createGzip(), DEFLATE: () => zlib.createDeflate(), BROTLI: () => zlib.createBrotliCompress() })[c]();
const decompressor = (c: Compression): Transform =>
  ({ GZIP: () => zlib.createGunzip(), DEFLATE: () => zlib.createInflate(), BROTLI: () => zlib.createBrotliDecompress() })[c]();

/**
 * The name an archive entry is stored under, or an error when it could leave its folder: absolute (`/x`, `C:x`),
 * `..` segments, backslashes, NUL. `.` and empty segments are dropped (`./a//b` is `a/b`).
 */
export function safeEntryName(name: string): string {
  if (name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new Error(`Archive entry '${name}' is refused: an absolute path or a backslash could leave the extraction folder`);
  }
  const parts = name.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) throw new Error(`Archive entry '${name}' is refused: '..' could leave the extraction folder`);
  if (parts.length === 0) throw new Error(`Archive entry '${name}' has no file name`);
  return parts.join('/');
}

/** Counts the bytes decompressed so far (all entries of one task together); past the limit the stream fails. */
class ByteBudget {
  private used = 0;
  constructor(private readonly limits: Limits, private readonly what: string) {}
  meter(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        this.used += chunk.length;
        if (this.used > this.limits.archiveMaxExtractedBytes) {
          done(limitError('archiveMaxExtractedBytes', `${this.what} decompresses to more bytes`, this.limits));
        } else done(null, chunk);
      },
    });
  }
  get bytes(): number { return this.used; }
}

/** A stream of tar-stream (streamx) or node: piped, its errors forwarded. */
interface Pipeable { pipe(to: NodeJS.WritableStream): unknown; on(event: 'error', fn: (err: Error) => void): unknown }

/** Writes a stream through the budget's meter into a new file of this task run. */
async function putMetered(ctx: RunContext, path: string, source: Pipeable, budget: ByteBudget): Promise<string> {
  const meter = budget.meter();
  source.on('error', (err) => meter.destroy(err));
  source.pipe(meter);
  return ctx.storage.put(path, meter);
}

/** Collects the extracted files; on failure, deletes the ones already written (no half archive is left behind). */
class Extracted {
  readonly files: Record<string, string> = {};
  private count = 0;
  private readonly folder: string;
  constructor(private readonly ctx: RunContext, private readonly limits: Limits, private readonly from: string) {
    this.folder = `${ctx.storagePrefix}/${randomUUID()}`;
  }
  checkCount(n = this.count + 1): void {
    if (n > this.limits.archiveMaxEntries) throw limitError('archiveMaxEntries', `Archive '${this.from}' has more entries`, this.limits);
  }
  async add(name: string, source: Pipeable, budget: ByteBudget): Promise<void> {
    this.checkCount();
    this.count++;
    if (Object.hasOwn(this.files, name)) throw new Error(`Archive entry '${name}' appears twice`);
    this.files[name] = await putMetered(this.ctx, `${this.folder}/${name}`, source, budget);
  }
  async discard(): Promise<void> {
    await Promise.all(Object.values(this.files).map((uri) => this.ctx.storage.delete(uri).catch(() => false)));
  }
}

const refusedKind = (name: string, kind: string): Error =>
  new Error(`Archive entry '${name}' is a ${kind}: links and special files are refused`);

async function extractTar(source: Readable, out: Extracted, budget: ByteBudget): Promise<void> {
  const extract = tarStream.extract();
  source.on('error', (err) => extract.destroy(err));
  source.pipe(extract as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extract) {
      const { name, type } = entry.header;
      if (type === 'directory') { entry.resume(); continue; }
      if (type !== 'file' && type !== 'contiguous-file') throw refusedKind(name, type ?? 'special entry');
      await out.add(safeEntryName(name), entry, budget);
    }
  } catch (err) {
    extract.destroy();
    source.destroy();
    throw err;
  }
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** Reads a zip from a local file through its central directory; each entry's real size is checked by yauzl too. */
async function extractZipFile(file: string, out: Extracted, budget: ByteBudget): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(file,
    { lazyEntries: true, autoClose: true, strictFileNames: true, validateEntrySizes: true, decodeStrings: true },
    (err, z) => (err ? reject(err) : resolve(z))));
  try {
    out.checkCount(zip.entryCount);
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry): void => { off(); resolve(e); };
        const onEnd = (): void => { off(); resolve(undefined); };
        const onError = (e: Error): void => { off(); reject(e); };
        const off = (): void => { zip.off('entry', onEntry); zip.off('end', onEnd); zip.off('error', onError); };
        zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
        zip.readEntry();
      });
      if (!entry) return;
      const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (entry.fileName.endsWith('/') || mode === S_IFDIR) continue;
      if (mode !== 0 && mode !== S_IFREG) throw refusedKind(entry.fileName, 'link or special file');
      const name = safeEntryName(entry.fileName);
      const stream = await new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
      await out.add(name, stream, budget);
    }
  } finally {
    zip.close();
  }
}

async function extractZip(source: Readable, out: Extracted, budget: ByteBudget, copyBudget: ByteBudget): Promise<void> {
  // A zip is read from its end (the central directory): the archive is first copied to a private temporary file
  // (metered too: a compressed zip could itself be a bomb).
  const dir = await mkdtemp(join(tmpdir(), 'archive-'));
  try {
    const file = join(dir, 'archive.zip');
    await pipeline(source, copyBudget.meter(), createWriteStream(file, { mode: 0o600 }));
    await extractZipFile(file, out, budget);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The archive (after its outer decompression, when `compression` is set). */
async function openSource(ctx: RunContext, uri: string, compression: Compression | undefined): Promise<Readable> {
  const raw = await ctx.storage.stream(uri) as Readable;
  if (!compression) return raw;
  const out = new PassThrough();
  pipeline(raw, decompressor(compression), out).catch((err) => out.destroy(err));
  return out;
}

const algorithmProp = () => p.enum(ARCHIVE_ALGORITHMS).required()
  .describe('Archive format: `ZIP` (`JAR` is read and written as a zip) or `TAR`. Kestra\'s AR, ARJ, CPIO and DUMP are not supported.');
const compressionProp = () => p.enum(COMPRESSIONS)
  .describe('Compression of the whole stream: `GZIP`, `DEFLATE` (zlib) or `BROTLI`; none when unset (a `.tar.gz` is `algorithm: TAR` with `compression: GZIP`). Kestra\'s BZIP2, LZ4, LZMA, SNAPPY, XZ, Z and ZSTD are not supported.');

export const archiveDecompress = definePlugin({
  type: 'compress.ArchiveDecompress',
  title: 'Extract an archive from internal storage.',
  description: 'Reads a zip or tar archive (optionally gzip, deflate or brotli compressed) from internal storage and writes each file it holds to internal storage, streamed. Entries that could leave the extraction folder (`../`, absolute paths), links and special files fail the task; the decompressed bytes are bounded by `ARCHIVE_MAX_EXTRACTED_BYTES` and the entries by `ARCHIVE_MAX_ENTRIES`. Directories are not outputs (their files are, with their relative path as name).',
  properties: {
    from: p.string().required().describe('Internal storage URI of the archive.'),
    algorithm: algorithmProp(),
    compression: compressionProp(),
  },
  outputs: { files: { type: 'object', description: 'Map of each extracted file\'s path inside the archive to its internal storage URI.' } },
  examples: [{
    title: 'Extract a .tar.gz given as a FILE input.',
    code: `id: untar\nnamespace: company.team\ninputs:\n  - id: file\n    type: FILE\ntasks:\n  - id: extract\n    type: io.kestra.plugin.compress.ArchiveDecompress\n    from: "{{ inputs.file }}"\n    algorithm: TAR\n    compression: GZIP\n`,
  }],
  async run(ctx, props) {
    const limits = limitsFromEnv(process.env);
    const budget = new ByteBudget(limits, `Archive '${props.from}'`);
    const out = new Extracted(ctx, limits, props.from);
    try {
      const source = await openSource(ctx, props.from, props.compression);
      if (props.algorithm === 'TAR') await extractTar(source, out, budget);
      else await extractZip(source, out, budget, new ByteBudget(limits, `Archive '${props.from}' (the zip itself)`));
    } catch (err) {
      await out.discard();
      throw err;
    }
    ctx.logger.info(`Extracted ${Object.keys(out.files).length} files (${budget.bytes} bytes) from ${props.from}`);
    return { state: 'SUCCESS', outputs: { files: out.files } };
  },
});

async function writeTar(ctx: RunContext, files: [string, string][], sink: PassThrough): Promise<void> {
  const pack = tarStream.pack();
  pack.on('error', (err) => sink.destroy(err));
  pack.pipe(sink);
  for (const [name, uri] of files) {
    const size = await ctx.storage.size(uri);
    const source = await ctx.storage.stream(uri);
    await new Promise<void>((resolve, reject) => {
      const entry = pack.entry({ name, size, type: 'file', mode: 0o644 }, (err) => (err ? reject(err) : resolve()));
      source.on('error', reject);
      source.pipe(entry as unknown as NodeJS.WritableStream);
    });
  }
  pack.finalize();
}

async function writeZip(ctx: RunContext, files: [string, string][], sink: PassThrough): Promise<void> {
  const zip = new yazl.ZipFile();
  const writing = pipeline(zip.outputStream, sink);
  // Lazy: each file is opened when yazl reaches it, so one file is open at a time.
  for (const [name, uri] of files) {
    zip.addReadStreamLazy(name, (cb) => { ctx.storage.stream(uri).then((s) => cb(null, s), (err) => cb(err, undefined as never)); });
  }
  zip.end();
  await writing;
}

export const archiveCompress = definePlugin({
  type: 'compress.ArchiveCompress',
  title: 'Create an archive of files from internal storage.',
  description: 'Writes a zip or tar archive (optionally gzip, deflate or brotli compressed) of internal storage files to internal storage, streamed: one file is read at a time. `from` maps each entry\'s path inside the archive to the file\'s URI; a path that could leave the archive\'s folder (`../`, absolute) is refused. At most `ARCHIVE_MAX_ENTRIES` files.',
  properties: {
    from: p.stringMap().required().describe('Map of the path of each entry inside the archive to an internal storage URI (or an expression rendering to such a map).'),
    algorithm: algorithmProp(),
    compression: compressionProp(),
  },
  outputs: { uri: { type: 'uri', description: 'Internal storage URI of the archive.' } },
  examples: [{
    title: 'Archive two files as a .tar.gz.',
    code: `id: archive\nnamespace: company.team\ntasks:\n  - id: a\n    type: io.kestra.plugin.core.storage.Write\n    content: hello\n  - id: archive\n    type: io.kestra.plugin.compress.ArchiveCompress\n    algorithm: TAR\n    compression: GZIP\n    from:\n      docs/a.txt: "{{ outputs.a.uri }}"\n`,
  }],
  async run(ctx, props) {
    const limits = limitsFromEnv(process.env);
    const files = Object.entries(props.from).map(([name, uri]): [string, string] => [safeEntryName(name), uri]);
    if (files.length > limits.archiveMaxEntries) throw limitError('archiveMaxEntries', `ArchiveCompress of ${files.length} files`, limits);
    const ext = props.algorithm === 'TAR' ? '.tar' : props.algorithm === 'JAR' ? '.jar' : '.zip';
    const sink = new PassThrough();
    const compressed = props.compression ? sink.pipe(compressor(props.compression)) : sink;
    const path = `${ctx.storagePrefix}/${randomUUID()}${ext}${props.compression ? EXTENSIONS[props.compression] : ''}`;
    const [uri] = await Promise.all([
      ctx.storage.put(path, compressed),
      (props.algorithm === 'TAR' ? writeTar(ctx, files, sink) : writeZip(ctx, files, sink)).catch((err) => { sink.destroy(err); throw err; }),
    ]);
    return { state: 'SUCCESS', outputs: { uri } };
  },
});

const fileCompressionProp = () => p.enum(COMPRESSIONS).required().describe('`GZIP`, `DEFLATE` (zlib) or `BROTLI`. Kestra\'s BZIP2, LZ4, LZMA, SNAPPY, XZ, Z and ZSTD are not supported.');

export const fileCompress = definePlugin({
  type: 'compress.FileCompress',
  title: 'Compress one file of internal storage.',
  description: 'Compresses one internal storage file with gzip, deflate or brotli, streamed, into a new internal storage file.',
  properties: {
    from: p.string().required().describe('Internal storage URI of the file.'),
    compression: fileCompressionProp(),
  },
  outputs: { uri: { type: 'uri', description: 'Internal storage URI of the compressed file.' } },
  examples: [{
    title: 'Gzip a file.',
    code: `- id: gzip\n  type: io.kestra.plugin.compress.FileCompress\n  from: "{{ outputs.extract.uri }}"\n  compression: GZIP\n`,
  }],
  async run(ctx, props) {
    const source = await ctx.storage.stream(props.from);
    const z = compressor(props.compression);
    const feeding = pipeline(source, z);
    const [uri] = await Promise.all([ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}${EXTENSIONS[props.compression]}`, z), feeding]);
    return { state: 'SUCCESS', outputs: { uri } };
  },
});

export const fileDecompress = definePlugin({
  type: 'compress.FileDecompress',
  title: 'Decompress one file of internal storage.',
  description: 'Decompresses one gzip, deflate or brotli internal storage file, streamed, into a new internal storage file; the decompressed size is bounded by `ARCHIVE_MAX_EXTRACTED_BYTES`.',
  properties: {
    from: p.string().required().describe('Internal storage URI of the compressed file.'),
    compression: fileCompressionProp(),
  },
  outputs: { uri: { type: 'uri', description: 'Internal storage URI of the decompressed file.' } },
  examples: [{
    title: 'Gunzip a file given as a FILE input.',
    code: `- id: gunzip\n  type: io.kestra.plugin.compress.FileDecompress\n  from: "{{ inputs.file }}"\n  compression: GZIP\n`,
  }],
  async run(ctx, props) {
    const budget = new ByteBudget(limitsFromEnv(process.env), `File '${props.from}'`);
    const source = await openSource(ctx, props.from, props.compression);
    const uri = await putMetered(ctx, `${ctx.storagePrefix}/${randomUUID()}`, source, budget);
    return { state: 'SUCCESS', outputs: { uri } };
  },
});

export const compressDefinitions = [archiveCompress, archiveDecompress, fileCompress, fileDecompress];
