// Kestra's flow routes over many flows at once: delete, disable and enable by ids or by query, export as a zip of
// sources, import a zip or a multi-document YAML file, replace a namespace's flows (`/flows/bulk`, `POST
// /flows/{namespace}`), and read one task of a flow. Every list is bounded by API_BULK_MAX_ITEMS, every text by
// API_MAX_BODY_BYTES, an import's inflated total by API_MAX_FILE_BYTES.
import type { Router, RouterContext } from '@koa/router';
import { randomUUID } from 'node:crypto';
import { zipSync } from 'fflate';
import { unzipBounded } from '../../operator/storage/unzip.js';
import { parseDocument } from 'yaml';
import { limitError } from '../../operator/core/limits.js';
import type { Flow } from '../../operator/core/types.js';
import { locateAllTasks, parseFlow } from '../../operator/model/index.js';
import type { FlowRecord } from '../../operator/store/types.js';
import { isMultipart, readJson, readMultipart, readText } from '../body.js';
import { checkBulkCount, type ApiDeps } from '../deps.js';
import { badRequest, HttpError, notFound, toResponse } from '../errors.js';
import { queryBool, queryOne } from '../query.js';
import { assertYaml, flowJson, flowQuery, getRecord, inheritedDefaults, looseIdentity, splitDocuments } from './flows.js';

interface FlowId { namespace: string; id: string }

/** Kestra's IdWithNamespace list: `[{namespace, id}]`, at most API_BULK_MAX_ITEMS. */
async function readIds(ctx: RouterContext, deps: ApiDeps): Promise<FlowId[]> {
  const raw = await readJson(ctx, deps.maxBodyBytes);
  const ok = Array.isArray(raw) && raw.every((v) => typeof v === 'object' && v !== null
    && typeof (v as FlowId).namespace === 'string' && typeof (v as FlowId).id === 'string');
  if (!ok) throw badRequest('The body must be a list of flow identifiers [{namespace, id}]', 'body');
  const list = raw as FlowId[];
  checkBulkCount(deps, list.length, 'flows', 'body');
  return list.map(({ namespace, id }) => ({ namespace, id }));
}

/** The live flows named by `ids`; 404 naming the first unknown one (nothing is done then). */
async function byIds(deps: ApiDeps, ids: FlowId[]): Promise<FlowRecord[]> {
  const out: FlowRecord[] = [];
  const seen = new Set<string>();
  for (const { namespace, id } of ids) {
    const key = `${namespace}\u0000${id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const record = await deps.stores.flows.get(namespace, id);
    if (!record || record.deleted) throw notFound(`Flow '${namespace}.${id}' not found`);
    out.push(record);
  }
  return out;
}

/** The live flows the search parameters of the request match; more than API_BULK_MAX_ITEMS is a 400. */
async function byQuery(ctx: RouterContext, deps: ApiDeps): Promise<FlowRecord[]> {
  const page = await deps.stores.flows.search({ ...flowQuery(ctx, deps), offset: 0, limit: deps.limits.apiBulkMaxItems + 1 });
  checkBulkCount(deps, Math.max(page.total, page.results.length), 'flows', 'query');
  return page.results;
}

/** The source of `record` with its top-level `disabled` set (comments and the rest kept), as Kestra rewrites it. */
export function withDisabled(source: string, disabled: boolean): string {
  const doc = parseDocument(source);
  doc.set('disabled', disabled);
  return doc.toString();
}

async function setDisabled(deps: ApiDeps, records: FlowRecord[], disabled: boolean): Promise<number> {
  for (const record of records) {
    if (!!record.flow.disabled === disabled) continue;
    const source = withDisabled(record.source, disabled);
    const flow = parseFlow(source, await inheritedDefaults(deps, record.namespace));
    await deps.stores.flows.save(flow, source);
  }
  return records.length;
}

function zipOf(records: FlowRecord[], name: (r: FlowRecord) => string): Buffer {
  const entries: Record<string, Uint8Array> = {};
  for (const r of records) entries[name(r)] = Buffer.from(r.source, 'utf8');
  return Buffer.from(zipSync(entries, { level: 6 }));
}

function sendZip(ctx: RouterContext, zip: Buffer): void {
  ctx.set('Content-Disposition', 'attachment; filename="flows.zip"');
  ctx.type = 'application/octet-stream';
  ctx.body = zip;
}

/** A parsed flow to save, or why its source is refused. */
type Parsed = { flow: Flow; source: string } | { error: string };

async function parseOne(deps: ApiDeps, source: string): Promise<Parsed> {
  try {
    assertYaml(source);
    return { flow: parseFlow(source, await inheritedDefaults(deps, looseIdentity(source).namespace)), source };
  } catch (err) {
    const mapped = toResponse(err);
    if (!mapped) throw err;
    return { error: mapped.body.errors?.map((e) => `${e.path}: ${e.message}`).join('; ') || mapped.body.message };
  }
}

/**
 * Kestra's bulkUpdateOrCreate: every source valid, each in `namespace` (or a child when allowed), no id twice; then,
 * with `remove`, the live flows of `namespace` (of every namespace without one) missing from the list are deleted,
 * and each flow is saved (a new revision when its source changed). Answers the deleted ones then the saved ones.
 */
async function replaceFlows(deps: ApiDeps, sources: string[], namespace: string | undefined, remove: boolean, allowChild: boolean): Promise<FlowRecord[]> {
  checkBulkCount(deps, sources.length, 'flows', 'body');
  const parsed: { flow: Flow; source: string }[] = [];
  for (const [i, source] of sources.entries()) {
    const p = await parseOne(deps, source);
    if ('error' in p) throw new HttpError(422, `Flow ${i} is invalid: ${p.error}`, [{ path: `flows[${i}]`, message: p.error }]);
    parsed.push(p);
  }
  if (namespace !== undefined) {
    const outside = parsed.find(({ flow }) => flow.namespace !== namespace && !(allowChild && flow.namespace.startsWith(`${namespace}.`)));
    if (outside) {
      throw new HttpError(422, `${outside.flow.namespace}.${outside.flow.id} - flow namespace is invalid (expected '${namespace}')`, [
        { path: 'flow.namespace', message: `'${outside.flow.namespace}' is not '${namespace}'` },
      ]);
    }
  }
  const ids = parsed.map(({ flow }) => flow.id);
  if (new Set(ids).size < ids.length) throw new HttpError(422, 'Duplicate flow id', [{ path: 'flow.id', message: 'Duplicate flow id' }]);
  const deleted: FlowRecord[] = [];
  if (remove) {
    const live = (await deps.stores.flows.all()).filter((r) => !r.deleted && (namespace === undefined || r.namespace === namespace));
    for (const r of live.filter((r) => !ids.includes(r.id))) {
      if (await deps.stores.flows.delete(r.namespace, r.id)) deleted.push(r);
    }
  }
  const saved: FlowRecord[] = [];
  for (const { flow, source } of parsed) saved.push((await deps.stores.flows.save(flow, source)).record);
  return [...deleted, ...saved];
}

/**
 * The flow sources of an uploaded zip: `{name, source}` per file entry (folders skipped). At most
 * API_BULK_MAX_ITEMS entries, each at most API_MAX_BODY_BYTES inflated, all together at most API_MAX_FILE_BYTES:
 * sizes are counted as entries inflate, so a zip bomb stops at the limit.
 */
async function unzipSources(deps: ApiDeps, stream: AsyncIterable<Buffer>): Promise<{ name: string; source: string }[]> {
  let count = 0;
  let total = 0;
  const sizes = new Map<string, number>();
  const { files } = await unzipBounded(stream, {
    entry: (name) => {
      if (++count > deps.limits.apiBulkMaxItems) throw badRequest(limitError('apiBulkMaxItems', 'too many zip entries', deps.limits).message, 'fileUpload');
    },
    bytes: (name, n) => {
      const size = (sizes.get(name) ?? 0) + n;
      sizes.set(name, size);
      total += n;
      if (size > deps.maxBodyBytes) throw badRequest(limitError('apiMaxBodyBytes', `zip entry '${name}'`, deps.limits).message, 'fileUpload');
      if (total > deps.maxFileBytes) throw badRequest(limitError('apiMaxFileBytes', 'the inflated zip', deps.limits).message, 'fileUpload');
    },
    invalid: (message) => badRequest(message, 'fileUpload'),
  });
  return files.map((f) => ({ name: f.name, source: f.data.toString('utf8') }));
}

/** Reads the `fileUpload` part of an import (staged in internal storage, removed afterwards): zip entries or YAML documents. */
async function importSources(ctx: RouterContext, deps: ApiDeps): Promise<{ name: string; source: string }[]> {
  if (!isMultipart(ctx)) throw badRequest('The body must be multipart/form-data with the file in a `fileUpload` part', 'fileUpload');
  const folder = `_api-staging/flow-imports/${randomUUID()}`;
  const storage = deps.stores.storage;
  let filename = '';
  let parts = 0;
  try {
    const body = await readMultipart(ctx, {
      storage, maxFileBytes: deps.maxFileBytes, maxFieldBytes: deps.maxBodyBytes,
      pathFor: (field, name) => {
        if (field !== 'fileUpload' || ++parts > 1) return undefined;
        filename = name;
        return `${folder}/upload`;
      },
    });
    const unexpected = Object.keys(body.fields).filter((f) => f !== 'fileUpload');
    if (unexpected.length > 0 || parts > 1) throw badRequest(`Only one \`fileUpload\` file part is accepted (unexpected: ${[...unexpected, ...(parts > 1 ? ['fileUpload'] : [])].join(', ')})`, unexpected[0] ?? 'fileUpload');
    const uri = body.files[0]?.uri;
    if (!uri) throw badRequest('The file to import is missing: send it as the `fileUpload` part', 'fileUpload');
    if (filename.toLowerCase().endsWith('.zip')) return await unzipSources(deps, await storage.stream(uri) as AsyncIterable<Buffer>);
    const data = await storage.get(uri);
    if (data.length > deps.maxBodyBytes) throw badRequest(limitError('apiMaxBodyBytes', `the YAML file '${filename}'`, deps.limits).message, 'fileUpload');
    const docs = splitDocuments(data.toString('utf8'));
    checkBulkCount(deps, docs.length, 'flows', 'fileUpload');
    return docs.map((source, i) => ({ name: String(i), source }));
  } finally {
    await storage.deleteTree(folder).catch(() => 0);
  }
}

/** Adds the bulk flow routes to `r` (mounted under /api/v1). */
export function registerFlowBulkRoutes(r: Router, deps: ApiDeps): void {
  const { flows } = deps.stores;

  const deleteAll = async (ctx: RouterContext, records: FlowRecord[]): Promise<void> => {
    let count = 0;
    for (const rec of records) if (await flows.delete(rec.namespace, rec.id)) count++;
    ctx.body = { count };
  };
  r.delete('/flows/delete/by-ids', async (ctx) => deleteAll(ctx, await byIds(deps, await readIds(ctx, deps))));
  r.delete('/flows/delete/by-query', async (ctx) => deleteAll(ctx, await byQuery(ctx, deps)));

  for (const [verb, disabled] of [['disable', true], ['enable', false]] as const) {
    r.post(`/flows/${verb}/by-ids`, async (ctx) => { ctx.body = { count: await setDisabled(deps, await byIds(deps, await readIds(ctx, deps)), disabled) }; });
    r.post(`/flows/${verb}/by-query`, async (ctx) => { ctx.body = { count: await setDisabled(deps, await byQuery(ctx, deps), disabled) }; });
  }

  // Kestra names the entries differently per route: `<namespace>.<id>.yaml` by ids, `<namespace>-<id>.yml` by query.
  r.post('/flows/export/by-ids', async (ctx) => sendZip(ctx, zipOf(await byIds(deps, await readIds(ctx, deps)), (f) => `${f.namespace}.${f.id}.yaml`)));
  r.get('/flows/export/by-query', async (ctx) => sendZip(ctx, zipOf(await byQuery(ctx, deps), (f) => `${f.namespace}-${f.id}.yml`)));

  // Kestra's answer: the names of the entries (zip) or the indexes (YAML) that could not be imported.
  r.post('/flows/import', async (ctx) => {
    const failOnError = queryBool(ctx, 'failOnError');
    const wrong: string[] = [];
    const valid: { flow: Flow; source: string }[] = [];
    for (const { name, source } of await importSources(ctx, deps)) {
      const p = await parseOne(deps, source);
      if ('error' in p) wrong.push(name);
      else valid.push(p);
    }
    if (failOnError && wrong.length > 0) throw badRequest(`Following invalid flows were not imported: ${wrong.join(', ')}`, 'fileUpload');
    for (const { flow, source } of valid) await flows.save(flow, source);
    ctx.body = wrong;
  });

  r.post('/flows/bulk', async (ctx) => {
    const sources = splitDocuments(await readText(ctx, deps.maxBodyBytes));
    const saved = await replaceFlows(deps, sources, queryOne(ctx, 'namespace'), queryFlag(ctx, 'delete', true), queryBool(ctx, 'allowNamespaceChild'));
    ctx.body = saved.map((rec) => flowJson(rec, true));
  });

  r.post('/flows/:namespace', async (ctx) => {
    const sources = splitDocuments(await readText(ctx, deps.maxBodyBytes));
    const saved = await replaceFlows(deps, sources, ctx.params.namespace!, queryFlag(ctx, 'delete', true), false);
    ctx.body = saved.map((rec) => flowJson(rec, true));
  });

  r.get('/flows/:namespace/:id/tasks/:taskId', async (ctx) => {
    const json = flowJson(await getRecord(deps, ctx));
    const found = locateAllTasks(json as unknown as Record<string, unknown>).find((l) => l.task.id === ctx.params.taskId);
    if (!found) throw notFound(`Task '${ctx.params.taskId}' not found in flow '${json.namespace}.${json.id}'`);
    ctx.body = found.task;
  });
}

/** A boolean query parameter with a default when absent (`delete` defaults to true in Kestra). */
function queryFlag(ctx: RouterContext, name: string, fallback: boolean): boolean {
  return queryOne(ctx, name) === undefined ? fallback : queryBool(ctx, name);
}
