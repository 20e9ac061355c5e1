// S3 / MinIO polling trigger (`minio.Trigger`): lists `bucket`/`prefix` at every interval (after `marker`, directly
// under the prefix with a `delimiter`, files/folder objects by `filter`, matching `regexp`); new objects are copied to
// internal storage and start one execution (`trigger.objects`: [{bucket, key, size, etag, lastModified, uri}], or
// `trigger.uri` of a file listing them when there are more than 1,000).
// Each object triggers once: after the execution is durably created the objects are marked as triggered (durable
// marks), then the action runs (MOVE to `moveTo`, DELETE, or NONE). A crash before the marks repeats the same event
// (same dedupe key, so the same execution); a crash before the action only repeats the action. MOVE and DELETE drop
// the marks once the objects are gone; NONE keeps them (the objects stay).
import { createHash } from 'node:crypto';
import { Client } from 'minio';
import { regexTest } from '../../expr/index.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import { isRecord } from '../../plugins/util.js';
import type { PollingTriggerPlugin, TriggerContext } from '../types.js';
import { int, storeRows, str, tooLargeInline, triggerStoragePath } from './util.js';

interface Found { key: string; size: number; etag: string; lastModified?: string }
type Action = 'MOVE' | 'DELETE' | 'NONE';

export function minioClient(ctx: TriggerContext): Client {
  const t = ctx.trigger;
  const endpoint = str(ctx, t.endpoint, 'endpoint')!;
  const url = new URL(/^[a-z]+:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`);
  const region = str(ctx, t.region, 'region', false);
  return new Client({
    endPoint: url.hostname.replace(/^\[|\]$/g, ''), useSSL: url.protocol === 'https:', pathStyle: true,
    ...(url.port ? { port: Number(url.port) } : {}),
    accessKey: str(ctx, t.accessKeyId, 'accessKeyId', false) ?? '', secretKey: str(ctx, t.secretKeyId, 'secretKeyId', false) ?? '',
    ...(region ? { region } : {}),
  });
}

export type Filter = 'FILES' | 'DIRECTORY' | 'BOTH';

/** What to list: `marker` = start after this key, `delimiter` = only keys directly under `prefix` (not below the next delimiter). */
export interface Listing { prefix: string; delimiter: string; marker: string; filter: Filter; max: number; regexp?: { test(name: string): boolean } }

/**
 * Lists objects page by page (S3 ListObjectsV2 with `start-after` and `delimiter`). The groups a delimiter makes
 * (common prefixes) are not objects and are left out. `filter` FILES keeps keys not ending with '/', DIRECTORY only the
 * folder objects (keys ending with '/'), BOTH (Kestra's default) both.
 */
async function list(client: Client, bucket: string, l: Listing): Promise<Found[]> {
  const out: Found[] = [];
  let token = '';
  for (;;) {
    const page = await client.listObjectsV2Query(bucket, l.prefix, token, l.delimiter, 1000, token ? '' : l.marker);
    for (const item of page.objects) {
      if (!item.name) continue;
      const isDirectory = item.name.endsWith('/');
      if ((l.filter === 'FILES' && isDirectory) || (l.filter === 'DIRECTORY' && !isDirectory)) continue;
      if (l.regexp && !l.regexp.test(item.name)) continue;
      out.push({ key: item.name, size: item.size, etag: item.etag, ...(item.lastModified ? { lastModified: new Date(item.lastModified).toISOString() } : {}) });
      if (out.length >= l.max) return out;
    }
    if (!page.isTruncated || !page.nextContinuationToken) return out;
    token = page.nextContinuationToken;
  }
}

const markScope = (ctx: TriggerContext) => `minio:${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}`;
const markKey = (o: Found) => `${o.key}@${o.etag}`;

async function act(ctx: TriggerContext, client: Client, bucket: string, action: Action, o: Found): Promise<void> {
  if (action === 'NONE') return;
  if (action === 'MOVE') {
    const moveTo = ctx.render(ctx.trigger.moveTo) as unknown;
    if (!isRecord(moveTo) || typeof moveTo.key !== 'string') throw new Error('action MOVE needs moveTo.key');
    const target = typeof moveTo.bucket === 'string' && moveTo.bucket ? moveTo.bucket : bucket;
    const name = o.key.split('/').pop()!;
    await client.copyObject(target, `${moveTo.key.replace(/\/+$/, '')}/${name}`, `/${bucket}/${o.key}`);
  }
  await client.removeObject(bucket, o.key);
}

/**
 * Runs the action; once MOVE or DELETE took the object away its mark is no longer needed (an object uploaded again
 * later, even with the same content, is a new event). NONE keeps its marks: the object stays to be listed again.
 */
async function actAndForget(ctx: TriggerContext, client: Client, bucket: string, action: Action, o: Found): Promise<void> {
  await act(ctx, client, bucket, action, o);
  if (action !== 'NONE') await ctx.stores.triggers.unmark(markScope(ctx), markKey(o));
}

export const minioTrigger: PollingTriggerPlugin = {
  kind: 'polling',
  type: PLUGIN_TRIGGER_TYPES.minio,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.minio),
  defaultInterval: 'PT60S',
  async poll(ctx) {
    const t = ctx.trigger;
    const client = minioClient(ctx);
    const bucket = str(ctx, t.bucket, 'bucket')!;
    const action = String(ctx.render(t.action ?? 'NONE')).toUpperCase() as Action;
    const pattern = str(ctx, t.regexp, 'regexp', false);
    const filter = String(ctx.render(t.filter ?? 'BOTH')).toUpperCase() as Filter;
    if (!['FILES', 'DIRECTORY', 'BOTH'].includes(filter)) throw new Error(`triggers.${t.id}.filter must be FILES, DIRECTORY or BOTH (got '${filter}')`);
    const listed = await list(client, bucket, {
      prefix: str(ctx, t.prefix, 'prefix', false) ?? '', delimiter: str(ctx, t.delimiter, 'delimiter', false) ?? '',
      marker: str(ctx, t.marker, 'marker', false) ?? '', filter, max: int(ctx, t.maxKeys, 1000),
      ...(pattern ? { regexp: regexTest(pattern, 'whole', 'regexp') } : {}), // RE2: linear time
    });
    const fresh: Found[] = [];
    for (const o of listed) {
      if (!(await ctx.stores.triggers.isMarked(markScope(ctx), markKey(o)))) fresh.push(o);
      else if (action !== 'NONE') await actAndForget(ctx, client, bucket, action, o); // triggered before a crash: finish its action
    }
    if (fresh.length === 0) return undefined;
    // With the dates: the same content uploaded again after a MOVE/DELETE is a new event, not the earlier execution.
    const dedupeKey = createHash('sha256').update(fresh.map((o) => `${markKey(o)}@${o.lastModified ?? ''}`).sort().join('\n')).digest('hex');
    const objects = [];
    for (const o of fresh) {
      const data = await client.getObject(bucket, o.key);
      const uri = await ctx.stores.storage.put(triggerStoragePath(ctx, `${dedupeKey.slice(0, 16)}/${o.key}`), data);
      objects.push({ bucket, ...o, uri });
    }
    // Very large listings travel as a file (one object per line) instead of inline.
    const variables = tooLargeInline(objects) ? { uri: await storeRows(ctx, objects), size: objects.length } : { objects, size: objects.length };
    return {
      event: { dedupeKey, variables },
      commit: async () => {
        for (const o of fresh) await ctx.stores.triggers.mark(markScope(ctx), markKey(o));
        for (const o of fresh) await actAndForget(ctx, client, bucket, action, o);
      },
    };
  },
};
