// /api/v1/executions: create (and trigger) an execution of a flow with its inputs, optionally waiting for the end;
// read, search and delete executions.
import type { Router, RouterContext } from '@koa/router';
import { newId } from '../../operator/core/ids.js';
import { dictFrom } from '../../operator/core/keyed.js';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import type { Execution, ExecutionState } from '../../operator/core/types.js';
import type { ExecutionQuery, StoredExecution } from '../../operator/store/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { clientGone, launch, loadFlow, readInputs, waitForTerminal } from '../launch.js';
import { executionJson, executionsJson } from '../execution-json.js';
import { legacyFilters, searchFilters } from '../filters.js';
import { flowJson } from './flows.js';
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
  ctx.body = executionJson(execution, await deps.stores.flows.get(flow.namespace, flow.id, flow.revision));
}

/** Adds the execution routes to `r` (mounted under /api/v1). */
export function registerExecutionRoutes(r: Router, deps: ApiDeps): void {
  const { executions } = deps.stores;

  const search = async (ctx: RouterContext): Promise<void> => {
    const page = await executions.search(executionQuery(ctx, deps));
    ctx.body = { results: await executionsJson(deps.stores, page.results), total: page.total };
  };
  r.get('/executions/search', search);
  r.get('/executions', search);

  // Kestra's executions of one flow (newest first, paged), the search's other filters applying too.
  r.get('/executions/flows/:namespace/:flowId', async (ctx) => {
    const { namespace, flowId } = ctx.params as { namespace: string; flowId: string };
    const q = executionQuery(ctx, deps);
    q.filters = [
      ...(q.filters ?? []),
      { kind: 'text', field: 'namespace', op: 'EQUALS', values: [namespace] },
      { kind: 'text', field: 'flowId', op: 'EQUALS', values: [flowId] },
    ];
    const page = await executions.search(q);
    ctx.body = { results: await executionsJson(deps.stores, page.results), total: page.total };
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
    ctx.body = (await executionsJson(deps.stores, [(await getExecution(deps, ctx.params.id!)).execution]))[0];
  });

  r.delete('/executions/:id', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (!isTerminal(execution.state.current)) {
      throw conflict(`Execution '${execution.id}' is ${execution.state.current}; only a terminated execution can be deleted`);
    }
    await deps.stores.executions.delete(execution.id);
    await deps.stores.logs.deleteExecution(execution.id);
    ctx.status = 204;
  });
}
