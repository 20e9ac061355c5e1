// /api/v1/executions: create (and trigger) an execution of a flow with its inputs, optionally waiting for the end;
// read, search and delete executions (a running one is killed first; its logs and storage folder go with it).
import type { Router, RouterContext } from '@koa/router';
import { newId } from '../../operator/core/ids.js';
import { dictFrom } from '../../operator/core/keyed.js';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import type { ExecutionQuery, StoredExecution } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import { checkBulkCount, type ApiDeps } from '../deps.js';
import type { SearchFilter } from '../../operator/store/filters.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { clientGone, launch, loadFlow, readInputs, waitForTerminal, watchForEnd } from '../launch.js';
import { executionJson, executionsJson, type ExecutionJson } from '../execution-json.js';
import { sendJson, sendJsonBytes } from '../json-stream.js';
import { legacyFilters, searchFilters } from '../filters.js';
import { flowJson } from './flows.js';
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

/** Kestra's legacy plain parameters of the execution search read as filters (the others are read below). */
const LEGACY_FILTERS = ['q', 'scope', 'timeRange', 'triggerExecutionId', 'childFilter'] as const;

/** Search filters for the executions of one flow (exact namespace and id). */
function ofFlow(namespace: string, flowId: string): SearchFilter[] {
  return [
    { kind: 'text', field: 'namespace', op: 'EQUALS', values: [namespace] },
    { kind: 'text', field: 'flowId', op: 'EQUALS', values: [flowId] },
  ];
}

export function executionQuery(ctx: RouterContext, deps: ApiDeps): ExecutionQuery {
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
    filters: [...legacyFilters(ctx, LEGACY_FILTERS, deps.limits), ...searchFilters(ctx, 'executions', deps.limits)],
    limit: p.limit,
    offset: p.offset,
  };
  if (states.length) q.state = states as ExecutionState[];
  if (labels.length) q.labels = dictFrom(labels.map((l) => [l.key, l.value] as const));
  return q;
}

export async function createFromRequest(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const { namespace, flowId } = ctx.params as { namespace: string; flowId: string };
  const flow = await loadFlow(deps.stores, namespace, flowId, queryInt(ctx, 'revision', 1));
  const labels = labelsQuery(ctx);
  const id = newId();
  const declared = new Set((flow.inputs ?? []).map((i) => i.id));
  const provided = await readInputs(ctx, deps, { namespace, flowId, id }, declared);
  // `?wait=true`: the end is watched from before the creation, so no read of the record is needed to see it (a read of
  // a wide loop's record is one long block of the event loop); after the timeout, the record as it is then.
  const watch = queryBool(ctx, 'wait') ? watchForEnd(deps.stores, id) : undefined;
  let execution: Execution;
  try {
    execution = await launch(deps, { flow, id, provided, labels });
    if (watch && !isTerminal(execution.state.current)) {
      execution = (await watch.until(deps.waitTimeoutMs, clientGone(ctx))) ?? (await deps.stores.executions.get(id))?.execution ?? execution;
    }
  } finally {
    watch?.close();
  }
  // The flow revision gives a triggered execution's trigger type as written (executionJson); others need no read.
  sendJson(ctx, executionJson(execution, execution.trigger ? await deps.stores.flows.get(flow.namespace, flow.id, flow.revision) : undefined), 'taskRunList');
}

/**
 * Our addition for lists (the web UI's executions list): `summary=true` answers each execution without its
 * `taskRunList` and `outputs`, so a page of big executions is not sent whole to show their states and dates.
 */
function summarized(ctx: RouterContext, list: ExecutionJson[]): ExecutionJson[] | Omit<ExecutionJson, 'taskRunList' | 'outputs'>[] {
  const v = queryOne(ctx, 'summary');
  if (v === undefined || v === 'false') return list;
  if (v !== 'true') throw badRequest(`Invalid 'summary': expected true or false, got '${v}'`, 'summary');
  return list.map(({ taskRunList: _runs, outputs: _outputs, ...rest }) => rest);
}

/** Adds the execution routes to `r` (mounted under /api/v1). */
export function registerExecutionRoutes(r: Router, deps: ApiDeps): void {
  const { executions } = deps.stores;

  const search = async (ctx: RouterContext): Promise<void> => {
    const page = await executions.search(executionQuery(ctx, deps));
    ctx.body = { results: summarized(ctx, await executionsJson(deps.stores, page.results)), total: page.total };
  };
  r.get('/executions/search', search);
  r.get('/executions', search);

  // Kestra's executions of one flow (newest first, paged), the search's other filters applying too.
  r.get('/executions/flows/:namespace/:flowId', async (ctx) => {
    const { namespace, flowId } = ctx.params as { namespace: string; flowId: string };
    const q = executionQuery(ctx, deps);
    q.filters = [...(q.filters ?? []), ...ofFlow(namespace, flowId)];
    const page = await executions.search(q);
    ctx.body = { results: summarized(ctx, await executionsJson(deps.stores, page.results)), total: page.total };
  });

  // Kestra's LastExecutionResponse per flow of the body `[{namespace, id}]` that has an execution (the newest started).
  r.post('/executions/latest', async (ctx) => {
    const body = await readJson(ctx, deps.maxBodyBytes);
    const ok = Array.isArray(body) && body.every((f) => typeof f === 'object' && f !== null
      && typeof (f as { namespace?: unknown }).namespace === 'string' && typeof (f as { id?: unknown }).id === 'string');
    if (!ok) throw badRequest('The body must be a list of flows [{namespace, id}]', 'body');
    const flows = body as { namespace: string; id: string }[];
    checkBulkCount(deps, flows.length, 'flows', 'body');
    const latest = [];
    for (const { namespace, id } of flows) {
      const [e] = (await executions.search({ filters: ofFlow(namespace, id), limit: 1, offset: 0 })).results;
      if (e) latest.push({ id: e.id, namespace: e.namespace, flowId: e.flowId, startDate: e.state.startDate, status: e.state.current });
    }
    ctx.body = latest;
  });

  // The flow an execution ran: the revision it was created with.
  r.get('/executions/:id/flow', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    const record = await deps.stores.flows.get(execution.namespace, execution.flowId, execution.flowRevision);
    if (!record) throw notFound(`Flow '${execution.namespace}.${execution.flowId}' revision ${execution.flowRevision} of execution '${execution.id}' not found`);
    ctx.body = flowJson(record, queryBool(ctx, 'source'));
  });

  r.post('/executions/trigger/:namespace/:flowId', (ctx) => createFromRequest(ctx, deps));
  r.post('/executions/:namespace/:flowId', (ctx) => createFromRequest(ctx, deps));

  r.get('/executions/:id', async (ctx) => {
    // The task runs as the store holds them (JSON texts) where it can: an execution of 10,000 runs is ~8 MB of JSON that
    // would otherwise be parsed from the store only to be serialised again for the answer. Not read that way (another
    // store, runs too large to join): the record as `get` reads it, streamed.
    const read = await deps.stores.executions.getRunsJson?.(ctx.params.id!);
    if (read) {
      sendJsonBytes(ctx, (await executionsJson(deps.stores, [read.stored.execution]))[0]!, 'taskRunList', read.runs);
      return;
    }
    sendJson(ctx, (await executionsJson(deps.stores, [(await getExecution(deps, ctx.params.id!)).execution]))[0]!, 'taskRunList');
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
