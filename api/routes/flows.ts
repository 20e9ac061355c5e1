// /api/v1/flows: create and update flows from YAML (new revision only when the source changes), read them and
// their revisions, delete, search, list a namespace, and validate several YAML documents at once (Kestra shapes).
import type { Router, RouterContext } from '@koa/router';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import type { Flow, Label, PluginDefault } from '../../operator/core/types.js';
import { flowWarnings, isNamespaceId, namespaceContextOf, parseFlow, withWrittenTypes } from '../../operator/model/index.js';
import { flowLabels } from '../../operator/core/execution.js';
import type { FlowQuery, FlowRecord } from '../../operator/store/types.js';
import { readText } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound, toResponse } from '../errors.js';
import { legacyFilters, searchFilters } from '../filters.js';
import { labelsQuery, paging, queryBool, queryInt, queryOne } from '../query.js';

export type FlowJson = Omit<Flow, 'labels'> & {
  revision: number; source?: string; updated?: string; labels?: Label[]; disabled: boolean; deleted: boolean;
};

/**
 * Kestra's Flow JSON: plugin types as written in the source, labels as a list of `{key, value}` (a map is accepted on
 * input), `disabled` and `deleted` always present.
 */
export function flowJson(record: FlowRecord, withSource = false): FlowJson {
  const flow = withWrittenTypes(record.flow, record.source, `${record.namespace}\u0000${record.id}\u0000${record.revision}`);
  const { labels: _labels, ...rest } = flow;
  const json: FlowJson = {
    ...rest, revision: record.revision, updated: record.updated, disabled: !!flow.disabled, deleted: !!record.deleted,
  };
  if (flow.labels !== undefined) json.labels = flowLabels(flow);
  if (withSource) json.source = record.source;
  return json;
}

/** 400 for text that is not YAML at all (structure problems are the model's 422). */
export function assertYaml(source: string): void {
  if (source.trim() === '') throw badRequest('The flow source is empty', 'body');
  for (const doc of parseAllDocuments(source)) {
    const err = 'errors' in doc ? doc.errors[0] : undefined;
    if (err) throw badRequest(`Malformed YAML: ${err.message}`, 'body');
    try {
      doc.toJS(); // alias bombs and the like throw here
    } catch (e) {
      throw badRequest(`Malformed YAML: ${(e as Error).message}`, 'body');
    }
  }
}

/** The plugin defaults a flow of `namespace` inherits (its namespace, then the parents): values it may rely on. */
export async function inheritedDefaults(deps: ApiDeps, namespace: string | undefined): Promise<PluginDefault[][]> {
  if (!isNamespaceId(namespace)) return []; // an invalid one fails validation anyway; bounded walk up the tree
  return namespaceContextOf(await deps.stores.namespaces.chain(namespace))?.pluginDefaults ?? [];
}

/** Reads and validates a YAML flow body (400 when it is not YAML, 422 with the fields when it is not a valid flow). */
export async function readFlowSource(ctx: RouterContext, deps: ApiDeps): Promise<{ flow: Flow; source: string }> {
  const source = await readText(ctx, deps.maxBodyBytes);
  assertYaml(source);
  return { flow: parseFlow(source, await inheritedDefaults(deps, looseIdentity(source).namespace)), source };
}

/** Splits a multi-document YAML text on `---` lines, dropping empty documents. */
export function splitDocuments(text: string): string[] {
  return text.split(/^---[ \t]*$/m).filter((d) => d.replace(/^\s*#.*$/gm, '').trim() !== '');
}

interface ValidateResult {
  index: number; flow?: string; namespace?: string; constraints?: string;
  /** Kestra's: paths of deprecated properties, and warnings on settings that have no effect (absent when none). */
  deprecationPaths?: string[]; warnings?: string[];
}

export function looseIdentity(source: string): { flow?: string; namespace?: string } {
  try {
    const raw = parseYaml(source) as { id?: unknown; namespace?: unknown } | null;
    return {
      flow: typeof raw?.id === 'string' ? raw.id : undefined,
      namespace: typeof raw?.namespace === 'string' ? raw.namespace : undefined,
    };
  } catch {
    return {};
  }
}

export function validateOne(source: string, index: number, inherited: PluginDefault[][] = []): ValidateResult {
  try {
    assertYaml(source);
    const flow = parseFlow(source, inherited);
    const { deprecationPaths, warnings } = flowWarnings(flow);
    return {
      index, flow: flow.id, namespace: flow.namespace,
      ...(deprecationPaths.length ? { deprecationPaths } : {}), ...(warnings.length ? { warnings } : {}),
    };
  } catch (err) {
    const mapped = toResponse(err);
    if (!mapped) throw err;
    const lines = mapped.body.errors?.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message));
    return { index, ...looseIdentity(source), constraints: lines?.length ? lines.join('\n') : mapped.body.message };
  }
}

/** The flow search of a request (`namespace`, `q`, `labels`, `scope` and `filters[...]`), paged. */
export function flowQuery(ctx: RouterContext, deps: ApiDeps): FlowQuery {
  const p = paging(ctx);
  const labels = labelsQuery(ctx);
  const filters = [
    ...legacyFilters(ctx, ['scope'], deps.limits),
    ...(labels.length ? [{ kind: 'labels', op: 'EQUALS', labels } as const] : []),
    ...searchFilters(ctx, 'flows', deps.limits),
  ];
  return { namespace: queryOne(ctx, 'namespace'), q: queryOne(ctx, 'q'), filters, limit: p.limit, offset: p.offset };
}

export async function getRecord(deps: ApiDeps, ctx: RouterContext): Promise<FlowRecord> {
  const { namespace, id } = ctx.params as { namespace: string; id: string };
  const revision = queryInt(ctx, 'revision', 1);
  const record = await deps.stores.flows.get(namespace, id, revision);
  if (!record) throw notFound(`Flow '${namespace}.${id}'${revision ? ` revision ${revision}` : ''} not found`);
  return record;
}

/** Adds the flow routes to `r` (mounted under /api/v1). */
export function registerFlowRoutes(r: Router, deps: ApiDeps): void {
  const { flows } = deps.stores;

  r.post('/flows/validate', async (ctx) => {
    const text = await readText(ctx, deps.maxBodyBytes);
    const docs = splitDocuments(text);
    const inherited = await Promise.all(docs.map((doc) => inheritedDefaults(deps, looseIdentity(doc).namespace)));
    ctx.body = docs.map((doc, i) => validateOne(doc, i, inherited[i]));
  });

  r.post('/flows', async (ctx) => {
    const { flow, source } = await readFlowSource(ctx, deps);
    const { record } = await flows.save(flow, source);
    ctx.status = 200;
    ctx.body = flowJson(record, true);
  });

  r.get('/flows/search', async (ctx) => {
    const page = await flows.search(flowQuery(ctx, deps));
    ctx.body = { results: page.results.map((rec) => flowJson(rec)), total: page.total };
  });

  r.get('/flows/:namespace', async (ctx) => {
    const all = await flows.all();
    ctx.body = all.filter((rec) => rec.namespace === ctx.params.namespace && !rec.deleted).map((rec) => flowJson(rec));
  });

  r.get('/flows/:namespace/:id', async (ctx) => {
    const record = await getRecord(deps, ctx);
    ctx.body = flowJson(record, queryBool(ctx, 'source'));
  });

  r.get('/flows/:namespace/:id/revisions', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    const list = await flows.revisions(namespace, id);
    if (list.length === 0) throw notFound(`Flow '${namespace}.${id}' not found`);
    ctx.body = list.map((rec) => flowJson(rec, true));
  });

  r.put('/flows/:namespace/:id', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    const existing = await flows.get(namespace, id);
    const { flow, source } = await readFlowSource(ctx, deps);
    if (flow.namespace !== namespace) {
      throw badRequest(`The namespace cannot be changed: path has '${namespace}', body has '${flow.namespace}'`, 'namespace');
    }
    if (flow.id !== id) throw badRequest(`The flow id in the body ('${flow.id}') must match the path ('${id}')`, 'id');
    if (!existing || existing.deleted) throw notFound(`Flow '${namespace}.${id}' not found`);
    const { record } = await flows.save(flow, source);
    ctx.body = flowJson(record, true);
  });

  r.delete('/flows/:namespace/:id', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    if (!(await flows.delete(namespace, id))) throw notFound(`Flow '${namespace}.${id}' not found`);
    ctx.status = 204;
  });
}
