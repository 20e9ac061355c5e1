// /api/v1/executions: create (and trigger) an execution of a flow with its inputs, optionally waiting for the end;
// read, search and delete executions (a running one is killed first; its logs and storage folder go with it).
import type { Router, RouterContext } from '@koa/router';
import { newId } from '../../operator/core/ids.js';
import { dictFrom } from '../../operator/core/keyed.js';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import type { ExecutionQuery, StoredExecution } from '../../operator/store/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { clientGone, launch, loadFlow, readInputs, waitForTerminal } from '../launch.js';
import { executionStoragePath } from '../../operator/storage/paths.js';
import { labelsQuery, paging, queryBool, queryInt, queryList, queryOne } from '../query.js';

export async function getExecution(deps: ApiDeps, id: string): Promise<StoredExecution> {
  const stored = await deps.stores.executions.get(id);
  if (!stored) throw notFound(`Execution '${id}' not found`);
  return stored;
}

function isoParam(ctx: RouterContext, name: string): string | undefined {
  const v = queryOne(ctx, name);
  if (v !== undefined && Number.isNaN(Date.parse(v))) throw badRequest(`Invalid '${name}': expected an ISO date-time`, name);
  return v;
}

export function executionQuery(ctx: RouterContext): ExecutionQuery {
  const states = queryList(ctx, 'state');
  for (const s of states) {
    if (!(ExecutionStates as readonly string[]).includes(s)) {
      throw badRequest(`Invalid 'state' '${s}': expected one of ${ExecutionStates.join(', ')}`, 'state');
    }
  }
  const labels = labelsQuery(ctx);
  const p = paging(ctx);
  const q: ExecutionQuery = {
    namespace: queryOne(ctx, 'namespace'),
    flowId: queryOne(ctx, 'flowId'),
    startDate: isoParam(ctx, 'startDate'),
    endDate: isoParam(ctx, 'endDate'),
    limit: p.limit,
    offset: p.offset,
  };
  if (states.length) q.state = states as ExecutionState[];
  if (labels.length) q.labels = dictFrom(labels.map((l) => [l.key, l.value] as const));
  return q;
}

async function createFromRequest(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const { namespace, flowId } = ctx.params as { namespace: string; flowId: string };
  const flow = await loadFlow(deps.stores, namespace, flowId, queryInt(ctx, 'revision', 1));
  const labels = labelsQuery(ctx);
  const id = newId();
  const declared = new Set((flow.inputs ?? []).map((i) => i.id));
  const provided = await readInputs(ctx, deps, { namespace, flowId, id }, declared);
  let execution: Execution = await launch(deps.stores, { flow, id, provided, labels }, deps.grants);
  if (queryBool(ctx, 'wait') && !isTerminal(execution.state.current)) {
    execution = (await waitForTerminal(deps.stores, id, deps.waitTimeoutMs, clientGone(ctx))) ?? execution;
  }
  ctx.body = execution;
}

/** Adds the execution routes to `r` (mounted under /api/v1). */
export function registerExecutionRoutes(r: Router, deps: ApiDeps): void {
  const { executions } = deps.stores;

  const search = async (ctx: RouterContext): Promise<void> => {
    const page = await executions.search(executionQuery(ctx));
    ctx.body = { results: page.results, total: page.total };
  };
  r.get('/executions/search', search);
  r.get('/executions', search);

  r.post('/executions/trigger/:namespace/:flowId', (ctx) => createFromRequest(ctx, deps));
  r.post('/executions/:namespace/:flowId', (ctx) => createFromRequest(ctx, deps));

  r.get('/executions/:id', async (ctx) => {
    ctx.body = (await getExecution(deps, ctx.params.id!)).execution;
  });

  // Kestra deletes an execution that is still running too: it is killed first (the kill waits for its end, at most
  // the `?wait=true` timeout), so no task keeps running for a record that is gone.
  r.delete('/executions/:id', async (ctx) => {
    const opts = deleteOptions(ctx);
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (!isTerminal(execution.state.current)) await killAndWait(deps, [execution.id], clientGone(ctx));
    await deleteExecution(deps, execution, opts);
    ctx.status = 204;
  });
}

/** What a deletion removes besides the record (Kestra's query parameters, each true unless given false). */
export interface DeleteOptions { deleteLogs: boolean; deleteStorage: boolean }

export function deleteOptions(ctx: RouterContext): DeleteOptions {
  const flag = (name: string): boolean => {
    const v = queryOne(ctx, name);
    if (v === undefined || v === 'true') return true;
    if (v === 'false') return false;
    throw badRequest(`Invalid '${name}': expected true or false, got '${v}'`, name);
  };
  // Metrics are part of the execution record here (its task runs' attempts): they cannot outlive it.
  if (!flag('deleteMetrics')) throw badRequest("'deleteMetrics=false' is not supported: metrics are stored in the execution record and are deleted with it", 'deleteMetrics');
  return { deleteLogs: flag('deleteLogs'), deleteStorage: flag('deleteStorage') };
}

/**
 * Queues a kill for each execution not yet terminated, then waits for them all, at most the `?wait=true` timeout in
 * total; 409 for one still running after it.
 */
export async function killAndWait(deps: ApiDeps, ids: string[], signal?: AbortSignal): Promise<void> {
  const running: string[] = [];
  for (const id of ids) {
    const stored = await deps.stores.executions.get(id);
    if (!stored || isTerminal(stored.execution.state.current)) continue;
    await deps.stores.executions.addCommand(id, { type: 'kill' });
    running.push(id);
  }
  const deadline = Date.now() + deps.waitTimeoutMs;
  for (const id of running) {
    const ended = await waitForTerminal(deps.stores, id, Math.max(0, deadline - Date.now()), signal);
    if (ended && !isTerminal(ended.state.current)) {
      throw conflict(`Execution '${id}' is still ${ended.state.current} after its kill; it was not deleted, try again`);
    }
  }
}

/** Deletes the record, and unless told otherwise its logs and its folder of the internal storage. */
export async function deleteExecution(deps: ApiDeps, execution: Execution, opts: DeleteOptions): Promise<void> {
  const { stores } = deps;
  await stores.executions.delete(execution.id);
  if (opts.deleteLogs) {
    await stores.logs.flush();
    await stores.logs.deleteExecution(execution.id);
  }
  if (opts.deleteStorage) {
    const folder = executionStoragePath(execution);
    const legacy = `${execution.namespace}/${execution.flowId}/executions/${execution.id}`; // earlier versions' uploads
    for (const path of folder === legacy ? [folder] : [folder, legacy]) await stores.storage.deleteTree(path);
  }
}
