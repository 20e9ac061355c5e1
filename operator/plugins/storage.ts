// core.storage.Write, Concat, Split, Size, Delete and PurgeCurrentExecutionFiles: Kestra's file tasks over internal storage. Files are streamed (a large
// file is never read whole); reads and deletes go through the task's storage view (operator/tenancy: an execution
// reads its own, related and namespace files, and writes or deletes only inside its own execution folder).
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { limitError, limitsFromEnv, type Limits } from '../core/limits.js';
import { LineFile, readLines } from '../storage/lines.js';
import { ATTEMPTS_FOLDER, executionStoragePath, storageUri } from '../storage/paths.js';
import { definePlugin, p } from './define.js';
import type { RunContext } from './types.js';

/** Refuses an extension that could leave the task's folder; adds the leading dot Kestra's examples sometimes omit. */
export function fileExtension(raw: string | undefined, fallback: string): string {
  let ext = raw ?? fallback;
  if (ext !== '' && !ext.startsWith('.')) ext = '.' + ext;
  if (/[/\\\0]/.test(ext)) throw new Error(`Invalid extension '${ext}'`);
  return ext;
}

/** A new file of this task run in internal storage. */
const newFilePath = (ctx: RunContext, extension: string): string => `${ctx.storagePrefix}/${randomUUID()}${extension}`;

const URI_OUTPUT = { uri: { type: 'uri', description: 'The new file.' } } as const;

export const storageConcatDefinition = definePlugin({
  type: 'core.storage.Concat',
  title: 'Concatenate files',
  description: 'Streams internal-storage files one after the other into a new file, `separator` after each (the last one too, as Kestra).',
  properties: {
    files: p.stringList().required().describe('The files (kestra:/// URIs), or an expression or JSON text yielding a list of them.'),
    separator: p.string().describe('Written after each file.'),
    extension: p.string().describe('Extension of the new file (default .tmp).'),
  },
  outputs: URI_OUTPUT,
  examples: [{ title: 'Join two files', code: 'id: concat\ntype: ai.service.plugin.core.storage.Concat\nfiles:\n  - "{{ outputs.a.uri }}"\n  - "{{ outputs.b.uri }}"\nseparator: "\\n"\n' }],
  async run(ctx, props) {
    const files = props.files.map((uri, i) => {
      if (!uri) throw new Error(`files[${i}] must be an internal storage URI`);
      return uri;
    });
    const separator = props.separator;
    const extension = fileExtension(props.extension, '.tmp');
    const storage = ctx.storage;
    // Each file is streamed in turn into the new one, the separator after each (as Kestra: the last one too).
    async function* body(): AsyncGenerator<Buffer> {
      for (const uri of files) {
        for await (const chunk of await storage.stream(uri) as AsyncIterable<Buffer | string>) yield Buffer.from(chunk);
        if (separator !== undefined) yield Buffer.from(separator, 'utf8');
      }
    }
    const uri = await storage.put(newFilePath(ctx, extension), Readable.from(body()));
    return { state: 'SUCCESS', outputs: { uri } };
  },
});

/** `10MB`, `512KB`, `1GB`, `100` (bytes): Kestra's readable sizes (binary multiples). */
export function parseByteSize(v: unknown, field: string): number {
  const m = /^(\d+)\s*([KMGT]?B?)$/i.exec(String(v).trim());
  if (!m) throw new Error(`${field}: '${String(v)}' is not a size such as 10MB`);
  const unit = (m[2] ?? '').toUpperCase().replace(/B$/, '');
  const n = Number(m[1]) * 1024 ** ['', 'K', 'M', 'G', 'T'].indexOf(unit);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${field}: '${String(v)}' must be at least 1 byte`);
  return n;
}

/** How Split cuts: exactly one of bytes, rows, partitions (Kestra's order of precedence decides nothing here: two are refused). */
export type SplitMode = { kind: 'bytes' | 'rows'; max: number } | { kind: 'partitions'; count: number };

function splitMode(props: { bytes?: string; rows?: number; partitions?: number; regexPattern?: string }): SplitMode {
  if (props.regexPattern !== undefined) throw new Error("Property 'regexPattern' of core.storage.Split is not supported here; use bytes, rows or partitions");
  const given = (['bytes', 'rows', 'partitions'] as const).filter((k) => props[k] !== undefined);
  if (given.length !== 1) throw new Error(`core.storage.Split needs exactly one of 'bytes', 'rows' or 'partitions' (got ${given.length ? given.join(', ') : 'none'})`);
  if (given[0] === 'bytes') return { kind: 'bytes', max: parseByteSize(props.bytes, 'bytes') };
  if (given[0] === 'rows') return { kind: 'rows', max: props.rows! };
  return { kind: 'partitions', count: props.partitions! };
}

/** Extension of the source file's name (`.tmp` without one), as Kestra names the pieces. */
function extensionOf(uri: string): string {
  const name = uri.slice(uri.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? fileExtension(decodeURIComponent(name.slice(dot)), '.tmp') : '.tmp';
}

/** Uploads a finished piece to `path` and removes the local copy. */
async function upload(ctx: RunContext, file: LineFile, path: string): Promise<string> {
  try {
    return await ctx.storage.put(path, file.read());
  } finally {
    await rm(file.path, { force: true });
  }
}

/** Where the pieces of a split go, and how many there may be (core.storage.Split and ForEachItem's `_split`). */
export interface SplitTarget {
  /** Storage path of piece `i` (0-based, in order). */
  pathOf(i: number): string;
  /** The error when `count` pieces are too many, undefined while they are allowed. */
  tooMany(count: number): Error | undefined;
}

/**
 * Streams `lines` into pieces in internal storage, Kestra's way: `rows` / `bytes` cut consecutive pieces (a new one
 * starts when the current one reached the bound, checked before a row), `partitions` deal rows round-robin (row i to
 * piece i mod n; empty pieces are not kept). Only one piece (or the partitions' bounded buffer) is held at a time.
 */
export async function splitRows(ctx: RunContext, lines: AsyncIterable<string>, mode: SplitMode, separator: string, target: SplitTarget): Promise<string[]> {
  return mode.kind === 'partitions'
    ? splitPartitions(ctx, lines, mode.count, separator, target)
    : splitSequential(ctx, lines, mode, separator, target);
}

async function splitSequential(ctx: RunContext, lines: AsyncIterable<string>, mode: { kind: 'bytes' | 'rows'; max: number }, separator: string, target: SplitTarget): Promise<string[]> {
  const uris: string[] = [];
  let current: LineFile | undefined;
  try {
    for await (const line of lines) {
      if (current && (mode.kind === 'rows' ? current.lines : current.bytes) >= mode.max) {
        await current.close();
        const done = current;
        current = undefined;
        uris.push(await upload(ctx, done, target.pathOf(uris.length)));
      }
      if (!current) {
        const over = target.tooMany(uris.length + 1);
        if (over) throw over;
        current = new LineFile(join(ctx.workingDir, `split-${randomUUID()}`));
      }
      await current.write(line + separator);
    }
    if (current) {
      await current.close();
      const done = current;
      current = undefined;
      uris.push(await upload(ctx, done, target.pathOf(uris.length)));
    }
  } finally {
    if (current) { await current.close().catch(() => {}); await rm(current.path, { force: true }); }
  }
  return uris;
}

/** Bytes of pending rows the partitions may hold in memory before they are appended to their files. */
const PARTITION_BUFFER_BYTES = 4 * 1024 * 1024;

async function splitPartitions(ctx: RunContext, lines: AsyncIterable<string>, count: number, separator: string, target: SplitTarget): Promise<string[]> {
  const over = target.tooMany(count);
  if (over) throw over;
  const base = join(ctx.workingDir, `partition-${randomUUID()}`);
  const pending: string[][] = Array.from({ length: count }, () => []);
  const written = new Array<boolean>(count).fill(false);
  let buffered = 0;
  const flush = async (): Promise<void> => {
    for (let i = 0; i < count; i++) {
      if (pending[i]!.length === 0) continue;
      await appendFile(`${base}-${i}`, pending[i]!.join(''));
      pending[i] = [];
      written[i] = true;
    }
    buffered = 0;
  };
  try {
    let index = 0;
    for await (const line of lines) {
      const row = line + separator;
      pending[index]!.push(row);
      buffered += row.length;
      index = (index + 1) % count;
      if (buffered >= PARTITION_BUFFER_BYTES) await flush();
    }
    await flush();
    const uris: string[] = [];
    for (let i = 0; i < count; i++) {
      if (written[i]) uris.push(await ctx.storage.put(target.pathOf(uris.length), createReadStream(`${base}-${i}`)));
    }
    return uris;
  } finally {
    for (let i = 0; i < count; i++) if (written[i]) await rm(`${base}-${i}`, { force: true });
  }
}

export const storageSplitDefinition = definePlugin({
  type: 'core.storage.Split',
  title: 'Split a file',
  description: 'Splits an internal-storage file of lines into pieces of at most `bytes` or `rows`, or into `partitions` pieces (exactly one of the three), streaming; at most STORAGE_MAX_SPLIT_FILES pieces.',
  properties: {
    from: p.string().required().describe('The file to split (kestra:/// URI).'),
    bytes: p.text({ type: ['string', 'integer'] }).describe('Largest piece, as a size such as 10MB.'),
    rows: p.integer({ min: 1 }).describe('Lines a piece holds at most.'),
    partitions: p.integer({ min: 1 }).describe('How many pieces (lines dealt in turn).'),
    separator: p.string().default('\n').describe('The line separator.'),
    regexPattern: p.string().describe('Kestra\'s split by pattern: not supported (the task fails naming it).'),
  },
  outputs: { uris: { type: 'array', description: 'The pieces (kestra:/// URIs), in order.' } },
  examples: [{ title: 'Pieces of 1000 rows', code: 'id: split\ntype: ai.service.plugin.core.storage.Split\nfrom: "{{ outputs.extract.uri }}"\nrows: 1000\n' }],
  async run(ctx, props) {
    const from = props.from;
    const mode = splitMode(props);
    const separator = props.separator;
    const limits = limitsFromEnv(process.env);
    const extension = extensionOf(from);
    const lines = readLines(await ctx.storage.stream(from), limits, `core.storage.Split of '${from}'`);
    const uris = await splitRows(ctx, lines, mode, separator, {
      pathOf: () => newFilePath(ctx, extension),
      tooMany: (count) => (count > limits.storageMaxSplitFiles
        ? limitError('storageMaxSplitFiles', `core.storage.Split would create ${count} files`, limits) : undefined),
    });
    return { state: 'SUCCESS', outputs: { uris } };
  },
});

export const storageSizeDefinition = definePlugin({
  type: 'core.storage.Size',
  title: 'File size',
  description: 'The size in bytes of an internal-storage file.',
  properties: { uri: p.string().required().describe('The file (kestra:/// URI).') },
  outputs: { size: { type: 'integer', description: 'Its size in bytes.' } },
  examples: [{ title: 'Size of a download', code: 'id: size\ntype: ai.service.plugin.core.storage.Size\nuri: "{{ outputs.download.uri }}"\n' }],
  async run(ctx, props) {
    return { state: 'SUCCESS', outputs: { size: await ctx.storage.size(props.uri) } };
  },
});

export const storageDeleteDefinition = definePlugin({
  type: 'core.storage.Delete',
  title: 'Delete a file',
  description: 'Deletes an internal-storage file of the execution\'s namespace.',
  properties: {
    uri: p.string().required().describe('The file (kestra:/// URI).'),
    errorOnMissing: p.boolean().default(false).describe('Fail when the file does not exist.'),
  },
  outputs: { uri: { type: 'uri', description: 'The file.' }, deleted: { type: 'boolean', description: 'Whether it existed.' } },
  examples: [{ title: 'Delete a download', code: 'id: rm\ntype: ai.service.plugin.core.storage.Delete\nuri: "{{ outputs.download.uri }}"\n' }],
  async run(ctx, props) {
    const deleted = await ctx.storage.delete(props.uri);
    if (!deleted && props.errorOnMissing) throw new Error(`Unable to find file '${props.uri}'`);
    return { state: 'SUCCESS', outputs: { uri: props.uri, deleted } };
  },
});

export const storageWriteDefinition = definePlugin({
  type: 'core.storage.Write',
  title: 'Write a file',
  description: 'Writes rendered content to a new internal-storage file (a map or a list is written as JSON text).',
  properties: {
    content: p.text({}).required().describe('The content (expressions allowed).'),
    extension: p.string().describe('Extension of the new file (default .ion).'),
  },
  outputs: URI_OUTPUT,
  examples: [{ title: 'Write rows', code: 'id: write\ntype: ai.service.plugin.core.storage.Write\ncontent: |\n  {"id": 1}\n  {"id": 2}\nextension: .ion\n' }],
  async run(ctx, props) {
    const extension = fileExtension(props.extension, '.ion');
    const uri = await ctx.storage.put(newFilePath(ctx, extension), Buffer.from(props.content, 'utf8'));
    return { state: 'SUCCESS', outputs: { uri } };
  },
});

/** Kestra's PurgeCurrentExecutionFiles: every file of the execution's own folder is deleted; `uris` lists them. */
export const storagePurgeDefinition = definePlugin({
  type: 'core.storage.PurgeCurrentExecutionFiles',
  title: 'Purge the execution\'s files',
  description: 'Deletes every internal-storage file of the current execution (at most STORAGE_MAX_PURGE_FILES).',
  properties: {},
  outputs: { uris: { type: 'array', description: 'The deleted files.' } },
  examples: [{ title: 'Clean up at the end', code: 'id: purge\ntype: ai.service.plugin.core.storage.PurgeCurrentExecutionFiles\n' }],
  async run(ctx) {
    const folder = executionStoragePath(ctx.execution);
    const tree = ctx.storage.tree;
    if (!tree) throw new Error('core.storage.PurgeCurrentExecutionFiles: this internal storage cannot list folders');
    const limits = limitsFromEnv(process.env);
    const entries = await tree.list(folder, limits.storageMaxPurgeFiles,
      () => limitError('storageMaxPurgeFiles', `core.storage.PurgeCurrentExecutionFiles of '${folder}' would delete more files`, limits));
    // The service's attempt files (cluster mode) are not the execution's: a sibling's result may still be unread.
    const mine = entries.filter((e) => e.path.split('/')[0] !== ATTEMPTS_FOLDER);
    const files = mine.filter((e) => e.type === 'File').map((e) => storageUri(`${folder}/${e.path}`)).sort();
    for (const e of mine) if (e.type === 'File' && !e.path.includes('/')) await ctx.storage.delete(`${folder}/${e.path}`);
    const folders = new Set(mine.filter((e) => e.path.includes('/') || e.type === 'Directory').map((e) => e.path.split('/')[0]!));
    for (const top of folders) await ctx.storage.deleteTree(`${folder}/${top}`);
    ctx.logger.info(`Deleted ${files.length} files of execution ${ctx.execution.id}`);
    return { state: 'SUCCESS', outputs: { uris: files } };
  },
});

export const storageWritePlugin = storageWriteDefinition.runnable;
export const storageConcatPlugin = storageConcatDefinition.runnable;
export const storageSplitPlugin = storageSplitDefinition.runnable;
export const storageSizePlugin = storageSizeDefinition.runnable;
export const storageDeletePlugin = storageDeleteDefinition.runnable;
export const storagePurgePlugin = storagePurgeDefinition.runnable;
