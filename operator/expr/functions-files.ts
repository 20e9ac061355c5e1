// Template functions over files, logs and ciphertexts: `fileSize()`, `fileExists()`, `isFileEmpty()` (internal
// storage, through the same service and access rules as `read()`), `fileURI()` (a namespace file's URI, as Kestra
// builds it), `errorLogs()` (the current execution's ERROR lines, runnable tasks only) and Kestra's `encrypt(key,
// plaintext)` / `decrypt(key, encrypted)` (AES-GCM, random 12-byte IV first, base64; the key is base64 too).
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { arg, requireString } from './args.js';
import { ExpressionError } from './errors.js';
import type { CallContext, FunctionImpl, Kwargs } from './evaluate.js';
import { isPlainObject, memberLookup } from './values.js';

/** The size of the file a file function names, or undefined when it does not exist (refusals are thrown). */
function stat(name: string, args: unknown[], kwargs: Kwargs, ctx: CallContext): { uri: string; size: number | undefined } {
  const uri = requireString(arg(args, kwargs, 0, 'path'), name);
  if (!ctx.services.stat) throw new ExpressionError(`${name}() is not available here`);
  return { uri, size: ctx.services.stat(uri) };
}

function existingSize(name: string, args: unknown[], kwargs: Kwargs, ctx: CallContext): number {
  const { uri, size } = stat(name, args, kwargs, ctx);
  if (size === undefined) throw new ExpressionError(`${name}: file '${uri}' not found`);
  return size;
}

/** `kestra:///<namespace as path>/_files/<path>`: where Kestra keeps the namespace files of the flow's namespace. */
function fileURI(args: unknown[], kwargs: Kwargs, ctx: CallContext): string {
  const path = requireString(arg(args, kwargs, 0, 'path'), 'fileURI');
  const flow = ctx.lookup('flow');
  const namespace = isPlainObject(flow) ? memberLookup(flow, 'namespace', 'flow.namespace') : undefined;
  if (typeof namespace !== 'string') throw new ExpressionError('fileURI: no flow namespace to resolve the path in');
  return `kestra:///${namespace.replace(/\./g, '/')}/_files/${path.replace(/^\/+/, '')}`;
}

function errorLogs(_args: unknown[], _kwargs: Kwargs, ctx: CallContext): unknown {
  if (!ctx.services.errorLogs) {
    throw new ExpressionError("The 'errorLogs' function can only be used in runnable tasks, as it reads logs from the log store");
  }
  return ctx.services.errorLogs();
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The AES key of encrypt()/decrypt(): base64 of 16, 24 or 32 bytes. The message never quotes the key. */
function aesKey(name: string, value: unknown): { key: Buffer; algorithm: CipherGCMTypes } {
  if (typeof value !== 'string' || value === '') throw new ExpressionError(`${name}: the key must be a base64 string`);
  const key = Buffer.from(value, 'base64');
  if (![16, 24, 32].includes(key.length) || key.toString('base64').replace(/=+$/, '') !== value.trim().replace(/=+$/, '')) {
    throw new ExpressionError(`${name}: the key must be the base64 of 16, 24 or 32 bytes (AES-128/192/256), e.g. \`openssl rand -base64 32\``);
  }
  return { key, algorithm: `aes-${key.length * 8}-gcm` as CipherGCMTypes };
}

function encrypt(args: unknown[], kwargs: Kwargs, ctx: CallContext): string {
  const { key, algorithm } = aesKey('encrypt', arg(args, kwargs, 0, 'key'));
  const plaintext = requireString(arg(args, kwargs, 1, 'plaintext'), 'encrypt');
  ctx.services.onSecret?.(key.toString('base64'));
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(algorithm, key, iv, { authTagLength: TAG_BYTES });
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return Buffer.concat([iv, body]).toString('base64');
}

function decrypt(args: unknown[], kwargs: Kwargs, ctx: CallContext): string {
  const { key, algorithm } = aesKey('decrypt', arg(args, kwargs, 0, 'key'));
  const input = Buffer.from(requireString(arg(args, kwargs, 1, 'encrypted'), 'decrypt'), 'base64');
  ctx.services.onSecret?.(key.toString('base64'));
  if (input.length < IV_BYTES + TAG_BYTES) throw new ExpressionError('decrypt: the value is not an encrypt() result (too short)');
  try {
    const decipher = createDecipheriv(algorithm, key, input.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(input.subarray(input.length - TAG_BYTES));
    const plaintext = Buffer.concat([decipher.update(input.subarray(IV_BYTES, input.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    // What was encrypted is sensitive: masked in what the execution writes, like a secret.
    ctx.services.onSecret?.(plaintext);
    return plaintext;
  } catch {
    throw new ExpressionError('decrypt: wrong key, or the value was altered');
  }
}

export const FILE_FUNCTIONS: Record<string, FunctionImpl> = {
  fileSize: (args, kwargs, ctx) => existingSize('fileSize', args, kwargs, ctx),
  fileExists: (args, kwargs, ctx) => stat('fileExists', args, kwargs, ctx).size !== undefined,
  isFileEmpty: (args, kwargs, ctx) => existingSize('isFileEmpty', args, kwargs, ctx) === 0,
  fileURI,
  errorLogs,
  encrypt,
  decrypt,
};
