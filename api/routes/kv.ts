// /api/v1/namespaces/{namespace}/kv: write (a JSON value, or any other text as a STRING; optional `ttl` header),
// read `{type, value}`, delete one key (`true`/`false`) or several (`{keys}`), and list the keys of a namespace.
import type { Router, RouterContext } from '@koa/router';
import { parseJsonSafe } from '../../operator/core/keyed.js';
import { expirationFromTtl } from '../../operator/store/sqlite/kv-types.js';
import type { KVEntry } from '../../operator/store/types.js';
import { readJson, readText } from '../body.js';
import { checkBulkCount, type ApiDeps } from '../deps.js';
import { badRequest, notFound } from '../errors.js';

const NAMESPACE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const KEY = /^[\x21-\x7e][\x20-\x7e]*$/;

function params(ctx: RouterContext): { namespace: string; key: string } {
  const { namespace, key } = ctx.params as { namespace: string; key?: string };
  if (!NAMESPACE.test(namespace)) throw badRequest(`Invalid namespace '${namespace}'`, 'namespace');
  if (key !== undefined && !KEY.test(key)) throw badRequest(`Invalid key '${key}': printable ASCII characters only`, 'key');
  return { namespace, key: key ?? '' };
}

/** JSON text gives its value (objects without prototypes); anything else is kept as a string. */
export function parseKvBody(text: string): unknown {
  try {
    return parseJsonSafe(text);
  } catch {
    return text;
  }
}

/** The `ttl` header, checked as the stores check it (malformed, not positive or past the year 9999: 400 naming ttl). */
function ttlHeader(ctx: RouterContext): string | undefined {
  const ttl = ctx.get('ttl').trim();
  if (ttl === '') return undefined;
  try {
    expirationFromTtl(ttl, new Date());
  } catch (err) {
    throw badRequest((err as Error).message, 'ttl');
  }
  return ttl;
}

const missing = (namespace: string, key: string): Error =>
  notFound(`No value found for key '${key}' in namespace '${namespace}'`);

const listItem = (e: KVEntry): Record<string, unknown> => ({
  key: e.key, type: e.type, expirationDate: e.expirationDate ?? null, updateDate: e.updated,
});

/** Adds the KV routes to `r` (mounted under /api/v1). */
export function registerKvRoutes(r: Router, deps: ApiDeps): void {
  const { kv } = deps.stores;

  r.get('/namespaces/:namespace/kv', async (ctx) => {
    const { namespace } = params(ctx);
    ctx.body = (await kv.list(namespace)).map(listItem);
  });

  r.put('/namespaces/:namespace/kv/:key', async (ctx) => {
    const { namespace, key } = params(ctx);
    const ttl = ttlHeader(ctx);
    const text = await readText(ctx, deps.maxBodyBytes);
    if (text.trim() === '') throw badRequest('The request body must hold the value', 'value');
    const entry = await kv.set({ namespace, key, value: parseKvBody(text), ttl, overwrite: true });
    ctx.body = { namespace, key, type: entry.type, value: entry.value, expirationDate: entry.expirationDate ?? null };
  });

  r.get('/namespaces/:namespace/kv/:key', async (ctx) => {
    const { namespace, key } = params(ctx);
    const entry = await kv.get(namespace, key);
    if (!entry) throw missing(namespace, key);
    ctx.body = { type: entry.type, value: entry.value };
  });

  // Kestra answers 200 `true`, or `false` when there was no such key.
  r.delete('/namespaces/:namespace/kv/:key', async (ctx) => {
    const { namespace, key } = params(ctx);
    ctx.body = JSON.stringify(await kv.delete(namespace, key));
    ctx.type = 'application/json';
  });

  // Kestra's bulk delete: `{keys: [...]}` → `{keys: [the keys that existed and were deleted]}`.
  r.delete('/namespaces/:namespace/kv', async (ctx) => {
    const { namespace } = params(ctx);
    const body = await readJson(ctx, deps.maxBodyBytes);
    const keys = (body as { keys?: unknown } | undefined)?.keys;
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string' || !KEY.test(k))) {
      throw badRequest('The body must be {keys: [...]}, each key printable ASCII characters', 'keys');
    }
    checkBulkCount(deps, keys.length, 'keys', 'keys');
    const deleted: string[] = [];
    for (const key of new Set(keys as string[])) if (await kv.delete(namespace, key)) deleted.push(key);
    ctx.body = { keys: deleted };
  });
}
