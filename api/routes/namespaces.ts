// /api/v1/namespaces (Kestra's Namespace: get, search, create, update, delete, inherited variables and plugin
// defaults, ids, autocomplete) and the namespace lists of other resources: /flows/distinct-namespaces, /executions/namespaces and
// /executions/namespaces/{namespace}/flows. A namespace exists when it is stored or when a live flow is in it or below it.
import type { Router, RouterContext } from '@koa/router';
import { LIMIT_SETTINGS } from '../../operator/core/limits.js';
import type { Flow, Task } from '../../operator/core/types.js';
import { formatIssue, isNamespaceId, namespaceContextOf, namespaceTree, validateNamespace } from '../../operator/model/index.js';
import type { FlowRecord, NamespaceRecord, NamespaceSpec } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { HttpError, badRequest, notFound } from '../errors.js';
import { paging, queryBool, queryList, queryOne } from '../query.js';

/** Kestra's Namespace JSON: what is stored, or the bare namespace (no variables, no defaults) when nothing is. */
export function namespaceJson(id: string, rec?: NamespaceRecord): Record<string, unknown> {
  return {
    id, deleted: false, description: rec?.description ?? null, variables: rec?.variables ?? {},
    pluginDefaults: rec?.pluginDefaults ?? [], allowedNamespaces: [],
  };
}

function pathId(ctx: RouterContext): string {
  const id = (ctx.params as { id: string }).id;
  if (!isNamespaceId(id)) throw badRequest(`Invalid namespace '${id}'`, 'id');
  return id;
}

/** Live (latest, not deleted) flows. */
const liveFlows = async (deps: ApiDeps): Promise<FlowRecord[]> => (await deps.stores.flows.all()).filter((r) => !r.deleted);

const sortedUnique = (ids: Iterable<string>): string[] => [...new Set(ids)].sort();

/** Reads, checks and bounds (NAMESPACE_MAX_BYTES) a namespace body. */
async function readNamespace(ctx: RouterContext, deps: ApiDeps, id?: string): Promise<NamespaceSpec> {
  const result = validateNamespace(await readJson(ctx, deps.maxBodyBytes), id);
  if ('issues' in result) {
    const [first] = result.issues;
    throw new HttpError(422, `Invalid namespace: ${formatIssue(first!)}`, result.issues);
  }
  const { spec } = result;
  const size = Buffer.byteLength(JSON.stringify({ description: spec.description, variables: spec.variables, pluginDefaults: spec.pluginDefaults }));
  const max = deps.limits.namespaceMaxBytes;
  if (size > max) {
    const s = LIMIT_SETTINGS.namespaceMaxBytes;
    throw new HttpError(413, `Namespace '${spec.id}' is ${size} bytes: over the limit of ${max} (${s.doc}; setting ${s.env})`);
  }
  return spec;
}

/** Kestra's TaskForExecution: id and type, and the tasks inside a flowable. */
function taskForExecution(task: Task): Record<string, unknown> {
  const out: Record<string, unknown> = { id: task.id, type: task.type };
  if (Array.isArray(task.tasks)) out.tasks = (task.tasks as Task[]).map(taskForExecution);
  return out;
}

/** Kestra's FlowForExecution: what the UI needs to start an execution of the flow (no source). */
function flowForExecution(rec: FlowRecord): Record<string, unknown> {
  const f: Flow = rec.flow;
  return {
    id: f.id, namespace: f.namespace, revision: rec.revision, inputs: f.inputs ?? [],
    tasks: f.tasks.map(taskForExecution), errors: (f.errors ?? []).map(taskForExecution), finally: (f.finally ?? []).map(taskForExecution),
    afterExecution: (f.afterExecution ?? []).map(taskForExecution),
    triggers: (f.triggers ?? []).map((t) => ({ id: t.id, type: t.type })), disabled: f.disabled === true, deleted: false,
  };
}

/** Adds the namespace routes to `r` (mounted under /api/v1). */
export function registerNamespaceRoutes(r: Router, deps: ApiDeps): void {
  const { namespaces } = deps.stores;

  /** Kestra: the namespaces of flows and all their parents (`a.b.c` implies `a` and `a.b`), and the stored ones. */
  const known = async (existingOnly: boolean, q?: string): Promise<{ ids: string[]; byId: Map<string, NamespaceRecord> }> => {
    const byId = new Map((await namespaces.list()).map((n) => [n.id, n]));
    const fromFlows = existingOnly ? [] : (await liveFlows(deps)).flatMap((rec) => namespaceTree(rec.namespace));
    const needle = q?.toLowerCase();
    return { ids: sortedUnique([...byId.keys(), ...fromFlows]).filter((id) => !needle || id.toLowerCase().includes(needle)), byId };
  };

  r.get('/namespaces/ids', async (ctx) => {
    ctx.body = (await known(false)).ids;
  });

  // Kestra: at most 50 matches of `q`, plus the `ids` asked for that exist.
  r.post('/namespaces/autocomplete', async (ctx) => {
    const body = await readJson(ctx, deps.maxBodyBytes) as { q?: unknown; ids?: unknown; existingOnly?: unknown } | null;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be {q, ids, existingOnly}', 'body');
    if (body.q !== undefined && body.q !== null && typeof body.q !== 'string') throw badRequest('q must be a string', 'q');
    const ids = body.ids ?? [];
    if (!Array.isArray(ids) || ids.some((i) => typeof i !== 'string')) throw badRequest('ids must be a list of namespaces', 'ids');
    const all = (await known(body.existingOnly === true)).ids;
    const forced = all.filter((id) => (ids as string[]).includes(id));
    const matches = all.filter((id) => !forced.includes(id) && (typeof body.q !== 'string' || id.toLowerCase().includes(body.q.toLowerCase())));
    ctx.body = sortedUnique([...matches.slice(0, 50), ...forced]);
  });

  r.get('/namespaces/search', async (ctx) => {
    const { ids, byId } = await known(queryBool(ctx, 'existing'), queryOne(ctx, 'q'));
    if (queryList(ctx, 'sort').some((s) => /:desc$/i.test(s))) ids.reverse();
    const p = paging(ctx);
    ctx.body = {
      results: ids.slice(p.offset, p.offset + p.limit).map((id) => ({ ...namespaceJson(id, byId.get(id)), disabled: false })),
      total: ids.length,
    };
  });

  r.get('/namespaces/:id', async (ctx) => {
    const id = pathId(ctx);
    ctx.body = namespaceJson(id, await namespaces.get(id));
  });

  r.get('/namespaces/:id/inherited-variables', async (ctx) => {
    const parents = (await namespaces.chain(pathId(ctx))).filter((n) => n.id !== ctx.params.id);
    ctx.body = namespaceContextOf(parents)?.variables ?? {};
  });

  r.get('/namespaces/:id/inherited-plugindefaults', async (ctx) => {
    const parents = (await namespaces.chain(pathId(ctx))).filter((n) => n.id !== ctx.params.id);
    ctx.body = parents.flatMap((n) => n.pluginDefaults);
  });

  r.post('/namespaces', async (ctx) => {
    const spec = await readNamespace(ctx, deps);
    const rec = await namespaces.put(spec, { create: true });
    ctx.body = namespaceJson(rec.id, rec);
  });

  r.put('/namespaces/:id', async (ctx) => {
    const spec = await readNamespace(ctx, deps, pathId(ctx));
    const rec = await namespaces.put(spec);
    ctx.body = namespaceJson(rec.id, rec);
  });

  r.delete('/namespaces/:id', async (ctx) => {
    const id = pathId(ctx);
    if (!(await namespaces.delete(id))) throw notFound(`Namespace '${id}' not found`);
    ctx.status = 204;
  });

  r.get('/flows/distinct-namespaces', async (ctx) => {
    const q = queryOne(ctx, 'q')?.toLowerCase();
    ctx.body = sortedUnique((await liveFlows(deps)).map((rec) => rec.namespace)).filter((ns) => !q || ns.toLowerCase().includes(q));
  });

  // Kestra: the namespaces that have executable flows (live and enabled), and those flows.
  r.get('/executions/namespaces', async (ctx) => {
    ctx.body = sortedUnique((await liveFlows(deps)).filter((rec) => rec.flow.disabled !== true).map((rec) => rec.namespace));
  });

  r.get('/executions/namespaces/:namespace/flows', async (ctx) => {
    const { namespace } = ctx.params as { namespace: string };
    const flows = (await liveFlows(deps)).filter((rec) => rec.namespace === namespace && rec.flow.disabled !== true);
    ctx.body = flows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(flowForExecution);
  });
}
