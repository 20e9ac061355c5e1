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
