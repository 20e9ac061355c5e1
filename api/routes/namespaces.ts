// /api/v1/namespaces (Kestra's Namespace: get, search, create, update, delete, inherited variables and plugin
// defaults) and the namespace lists of other resources: /flows/distinct-namespaces, /executions/namespaces and
// /executions/namespaces/{namespace}/flows. A namespace exists when it is stored or when a live flow is in it or below it.
import type { Router, RouterContext } from '@koa/router';
import { LIMIT_SETTINGS } from '../../operator/core/limits.js';
import type { Flow, Task } from '../../operator/core/types.js';
import { formatIssue, namespaceContextOf, namespaceTree, validateNamespace } from '../../operator/model/index.js';
import type { FlowRecord, NamespaceRecord, NamespaceSpec } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { HttpError, badRequest, notFound } from '../errors.js';
import { paging, queryBool, queryList, queryOne } from '../query.js';

const ID = /^[a-z0-9][a-z0-9._-]*$/;

/** Kestra's Namespace JSON: what is stored, or the bare namespace (no variables, no defaults) when nothing is. */
export function namespaceJson(id: string, rec?: NamespaceRecord): Record<string, unknown> {
  return {
    id, deleted: false, description: rec?.description ?? null, variables: rec?.variables ?? {},
    pluginDefaults: rec?.pluginDefaults ?? [], allowedNamespaces: [],
  };
}

function pathId(ctx: RouterContext): string {
  const id = (ctx.params as { id: string }).id;
  if (!ID.test(id) || id.length > 150) throw badRequest(`Invalid namespace '${id}'`, 'id');
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
    triggers: (f.triggers ?? []).map((t) => ({ id: t.id, type: t.type })), disabled: f.disabled === true, deleted: false,
  };
}

/** Adds the namespace routes to `r` (mounted under /api/v1). */
export function registerNamespaceRoutes(r: Router, deps: ApiDeps): void {
  const { namespaces } = deps.stores;

  r.get('/namespaces/search', async (ctx) => {
    const q = queryOne(ctx, 'q')?.toLowerCase();
    const desc = queryList(ctx, 'sort').some((s) => /:desc$/i.test(s));
    const stored = await namespaces.list();
    const byId = new Map(stored.map((n) => [n.id, n]));
    // Kestra: the namespaces of flows and all their parents (`a.b.c` implies `a` and `a.b`); `existing` keeps the stored ones.
    const fromFlows = queryBool(ctx, 'existing') ? [] : (await liveFlows(deps)).flatMap((rec) => namespaceTree(rec.namespace));
    const ids = sortedUnique([...byId.keys(), ...fromFlows]).filter((id) => !q || id.toLowerCase().includes(q));
    if (desc) ids.reverse();
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
