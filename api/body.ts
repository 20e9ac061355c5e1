// Request body readers with size limits: raw bytes, text, JSON, and multipart/form-data (busboy) whose file
// parts are streamed straight into internal storage. Oversized bodies give 413, malformed ones 400.
import busboy from 'busboy';
import type { Context } from 'koa';
import type { Readable } from 'node:stream';
import { dict, parseJsonSafe } from '../operator/core/keyed.js';
import { DEFAULT_LIMITS, LIMIT_SETTINGS } from '../operator/core/limits.js';
import type { InternalStorage } from '../operator/store/types.js';
import { HttpError, badRequest } from './errors.js';

export const DEFAULT_MAX_BODY_BYTES = DEFAULT_LIMITS.apiMaxBodyBytes;
export const DEFAULT_MAX_FILE_BYTES = DEFAULT_LIMITS.apiMaxFileBytes;
const BODY_SETTING = LIMIT_SETTINGS.apiMaxBodyBytes.env;
const FILE_SETTING = LIMIT_SETTINGS.apiMaxFileBytes.env;

function tooLarge(ctx: Context, limit: number): HttpError {
  ctx.set('Connection', 'close');
  ctx.req.resume(); // discard the rest so the client can read the answer
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes (setting ${BODY_SETTING})`);
}

/** Reads the whole body, failing with 413 as soon as it grows past `limit`. */
export async function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(ctx, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(ctx, limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function readText(ctx: Context, limit: number): Promise<string> {
  return (await readRaw(ctx, limit)).toString('utf8');
}

/** Parses a JSON body (objects without prototypes: the keys are the caller's); an empty body is `undefined`. */
export async function readJson(ctx: Context, limit: number): Promise<unknown> {
  const text = await readText(ctx, limit);
  if (text.trim() === '') return undefined;
  try {
    return parseJsonSafe(text);
  } catch (err) {
    throw badRequest(`Malformed JSON body: ${(err as Error).message}`, 'body');
  }
}

export const isMultipart = (ctx: Context): boolean => ctx.is('multipart/form-data') === 'multipart/form-data';
export const isJson = (ctx: Context): boolean => Boolean(ctx.is('application/json', '+json'));

export interface StoredFile { field: string; filename: string; uri: string }

export interface MultipartResult {
  /** Plain fields (prototype-free: field names are the caller's); a repeated name gives a list. */
  fields: Record<string, string | string[]>;
  files: StoredFile[];
}

export interface MultipartOptions {
  storage: InternalStorage;
  /** Storage path for a file part, or undefined to discard the part. */
  pathFor(field: string, filename: string): string | undefined;
  maxFileBytes?: number;
  maxFieldBytes?: number;
}

/** Keeps only the last path segment of a client-supplied file name. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()?.replace(/[\x00-\x1f]/g, '').trim() ?? '';
  return base === '' || base === '.' || base === '..' ? 'file' : base;
}

function addField(fields: Record<string, string | string[]>, name: string, value: string): void {
  const prev = fields[name];
  if (prev === undefined) fields[name] = value;
  else fields[name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
}

async function deleteAll(storage: InternalStorage, files: StoredFile[]): Promise<void> {
  await Promise.all(files.map((f) => storage.delete(f.uri).catch(() => false)));
}

/** A storage rejection of a client-chosen name is a 400 (its `status`); anything else is a logged 500. */
function storeFailure(field: string, err: unknown): HttpError {
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpError(400, `Invalid file '${field}': ${(err as Error).message}`, [{ path: field, message: 'invalid file name' }]);
  }
  console.error(`[api] storing the uploaded file '${field}' failed:`, err);
  return new HttpError(500, `Could not store file '${field}'`);
}

/** Parses multipart/form-data; on any failure the files already stored are deleted before throwing. */
export async function readMultipart(ctx: Context, opts: MultipartOptions): Promise<MultipartResult> {
  const maxFile = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const maxField = opts.maxFieldBytes ?? DEFAULT_MAX_BODY_BYTES;
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: ctx.req.headers, limits: { fileSize: maxFile, fieldSize: maxField, fields: 1000, files: 100 } });
  } catch (err) {
    throw badRequest(`Malformed multipart request: ${(err as Error).message}`, 'body');
  }
  const result: MultipartResult = { fields: dict(), files: [] };
  const pending: Promise<void>[] = [];
  let failure: HttpError | undefined;
  const fail = (e: HttpError): void => { failure ??= e; };

  bb.on('field', (name, value, info) => {
    if (info.valueTruncated) fail(new HttpError(413, `Field '${name}' exceeds the limit of ${maxField} bytes (setting ${BODY_SETTING})`));
    else addField(result.fields, name, value);
  });
  bb.on('file', (field, stream: Readable, info) => {
    const filename = safeFilename(info.filename);
    const path = failure ? undefined : opts.pathFor(field, filename);
    if (!path) { stream.resume(); return; }
    stream.on('limit', () => fail(new HttpError(413, `File '${field}' exceeds the limit of ${maxFile} bytes (setting ${FILE_SETTING})`)));
    pending.push(opts.storage.put(path, stream).then(
      (uri) => { result.files.push({ field, filename, uri }); },
      (err) => { stream.resume(); fail(storeFailure(field, err)); },
    ));
  });
  bb.on('filesLimit', () => fail(new HttpError(413, 'Too many files')));
  bb.on('fieldsLimit', () => fail(new HttpError(413, 'Too many fields')));

  try {
    await new Promise<void>((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', (err: Error) => reject(badRequest(`Malformed multipart request: ${err.message}`, 'body')));
      ctx.req.on('error', reject);
      ctx.req.pipe(bb);
    });
  } catch (err) {
    ctx.req.unpipe(bb);
    ctx.req.resume();
    fail(err instanceof HttpError ? err : badRequest(`Malformed multipart request: ${(err as Error).message}`, 'body'));
  }
  await Promise.all(pending);
  if (failure) {
    await deleteAll(opts.storage, result.files);
    if (failure.status === 413) ctx.set('Connection', 'close');
    throw failure;
  }
  for (const f of result.files) addField(result.fields, f.field, f.uri);
  return result;
}

export { deleteAll as deleteStoredFiles };
