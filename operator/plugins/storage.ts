// core.storage.Write, Concat, Split, Size, Delete and PurgeCurrentExecutionFiles: Kestra's file tasks over internal storage. Files are streamed (a large
// file is never read whole); reads and deletes go through the task's storage view (operator/tenancy: an execution
// reads its own, related and namespace files, and writes or deletes only inside its own execution folder).
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseJsonSafe } from '../core/keyed.js';
import { limitError, limitsFromEnv, type Limits } from '../core/limits.js';
import { LineFile, readLines } from '../storage/lines.js';
import { ATTEMPTS_FOLDER, executionStoragePath, storageUri } from '../storage/paths.js';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderBool, renderString, requireString } from './util.js';

/** Refuses an extension that could leave the task's folder; adds the leading dot Kestra's examples sometimes omit. */
export function fileExtension(raw: string | undefined, fallback: string): string {
  let ext = raw ?? fallback;
  if (ext !== '' && !ext.startsWith('.')) ext = '.' + ext;
  if (/[/\\\0]/.test(ext)) throw new Error(`Invalid extension '${ext}'`);
  return ext;
}

/** A new file of this task run in internal storage. */
const newFilePath = (ctx: RunContext, extension: string): string => `${ctx.storagePrefix}/${randomUUID()}${extension}`;

/** `files`: a list of URIs, or an expression / JSON text yielding one (Kestra accepts both). */
function fileList(ctx: RunContext): string[] {
  const raw = ctx.task.files;
  if (raw === undefined || raw === null) throw new Error("Missing required property 'files'");
  let value: unknown = Array.isArray(raw) ? raw : ctx.renderTyped(raw);
  if (typeof value === 'string') {
    try { value = parseJsonSafe(value); } catch { throw new Error(`Property 'files' must be a list of URIs or a JSON list, got '${value}'`); }
  }
  if (!Array.isArray(value)) throw new Error("Property 'files' must be a list of internal storage URIs");
  return value.map((item, i) => {
    const uri = typeof item === 'string' ? ctx.render(item) : undefined;
    if (!uri) throw new Error(`files[${i}] must be an internal storage URI`);
    return uri;
  });
}

async function runConcat(ctx: RunContext): Promise<TaskResult> {
  const files = fileList(ctx);
  const separator = renderString(ctx, ctx.task.separator);
  const extension = fileExtension(renderString(ctx, ctx.task.extension), '.tmp');
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
}

/** `10MB`, `512KB`, `1GB`, `100` (bytes): Kestra's readable sizes (binary multiples). */
export function parseByteSize(v: unknown, field: string): number {
  const m = /^(\d+)\s*([KMGT]?B?)$/i.exec(String(v).trim());
  if (!m) throw new Error(`${field}: '${String(v)}' is not a size such as 10MB`);
  const unit = (m[2] ?? '').toUpperCase().replace(/B$/, '');
  const n = Number(m[1]) * 1024 ** ['', 'K', 'M', 'G', 'T'].indexOf(unit);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${field}: '${String(v)}' must be at least 1 byte`);
  return n;
}

function positiveInt(ctx: RunContext, name: string): number | undefined {
  const raw = ctx.task[name];
  if (raw === undefined || raw === null) return undefined;
  const v = Number(typeof raw === 'number' ? raw : ctx.renderTyped(raw));
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`Property '${name}' must be a positive integer, got '${String(raw)}'`);
  return v;
}

/** How Split cuts: exactly one of bytes, rows, partitions (Kestra's order of precedence decides nothing here: two are refused). */
export type SplitMode = { kind: 'bytes' | 'rows'; max: number } | { kind: 'partitions'; count: number };

function splitMode(ctx: RunContext): SplitMode {
  if (ctx.task.regexPattern !== undefined) throw new Error("Property 'regexPattern' of core.storage.Split is not supported here; use bytes, rows or partitions");
  const given = (['bytes', 'rows', 'partitions'] as const).filter((k) => ctx.task[k] !== undefined && ctx.task[k] !== null);
  if (given.length !== 1) throw new Error(`core.storage.Split needs exactly one of 'bytes', 'rows' or 'partitions' (got ${given.length ? given.join(', ') : 'none'})`);
  if (given[0] === 'bytes') return { kind: 'bytes', max: parseByteSize(renderString(ctx, ctx.task.bytes), 'bytes') };
  if (given[0] === 'rows') return { kind: 'rows', max: positiveInt(ctx, 'rows')! };
  return { kind: 'partitions', count: positiveInt(ctx, 'partitions')! };
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

async function runSplit(ctx: RunContext): Promise<TaskResult> {
  const from = requireString(ctx, 'from');
  const mode = splitMode(ctx);
  const separator = renderString(ctx, ctx.task.separator) ?? '\n';
  const limits = limitsFromEnv(process.env);
  const extension = extensionOf(from);
  const lines = readLines(await ctx.storage.stream(from), limits, `core.storage.Split of '${from}'`);
  const uris = await splitRows(ctx, lines, mode, separator, {
    pathOf: () => newFilePath(ctx, extension),
    tooMany: (count) => (count > limits.storageMaxSplitFiles
      ? limitError('storageMaxSplitFiles', `core.storage.Split would create ${count} files`, limits) : undefined),
  });
  return { state: 'SUCCESS', outputs: { uris } };
}

async function runSize(ctx: RunContext): Promise<TaskResult> {
  const uri = requireString(ctx, 'uri');
  return { state: 'SUCCESS', outputs: { size: await ctx.storage.size(uri) } };
}

async function runDelete(ctx: RunContext): Promise<TaskResult> {
  const uri = requireString(ctx, 'uri');
  const errorOnMissing = renderBool(ctx, ctx.task.errorOnMissing, false);
  const deleted = await ctx.storage.delete(uri);
  if (!deleted && errorOnMissing) throw new Error(`Unable to find file '${uri}'`);
  return { state: 'SUCCESS', outputs: { uri, deleted } };
}

async function runWrite(ctx: RunContext): Promise<TaskResult> {
  const content = renderString(ctx, ctx.task.content);
  if (content === undefined) throw new Error("Missing required property 'content'");
  const extension = fileExtension(renderString(ctx, ctx.task.extension), '.ion');
  const uri = await ctx.storage.put(newFilePath(ctx, extension), Buffer.from(content, 'utf8'));
  return { state: 'SUCCESS', outputs: { uri } };
}

/** Kestra's PurgeCurrentExecutionFiles: every file of the execution's own folder is deleted; `uris` lists them. */
async function runPurge(ctx: RunContext): Promise<TaskResult> {
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
}

export const storageWritePlugin = plugin('core.storage.Write', runWrite);
export const storageConcatPlugin = plugin('core.storage.Concat', runConcat);
export const storageSplitPlugin = plugin('core.storage.Split', runSplit);
export const storageSizePlugin = plugin('core.storage.Size', runSize);
export const storageDeletePlugin = plugin('core.storage.Delete', runDelete);
export const storagePurgePlugin = plugin('core.storage.PurgeCurrentExecutionFiles', runPurge);
