// Kestra's bulk execution routes: kill, delete, restart, resume, replay, labels and change-status of a list of
// executions, given by ids (a JSON list) or by query (the search route's filters). Every execution is checked first:
// when one is refused, nothing is done and the answer is Kestra's BulkErrorResponse (400, `{message, invalids}`);
// else Kestra's BulkResponse `{count}`. At most API_BULK_MAX_ITEMS executions per request.
import type { Router, RouterContext } from '@koa/router';
import { replayExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { isSystemLabel, isTerminal } from '../../operator/core/types.js';
import type { Execution, Label } from '../../operator/core/types.js';
import { readJson } from '../body.js';
import { checkBulkCount, type ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';
import { clientGone } from '../launch.js';
import { parseLabelList, queryBool } from '../query.js';
import { InputValidationError } from '../../operator/model/index.js';
import { RESTARTABLE, labelsFor, resumeInputs, terminalStateParam } from './execution-actions.js';
import { deleteExecution, deleteOptions, executionQuery, killAndWait } from './executions.js';

/** One bulk action: why an execution is refused (Kestra's message), and what is done to each accepted one. */
interface BulkAction<P> {
  /** Kestra's `invalid bulk <verb>` message. */
  verb: string;
  /** The request's parameters, read (and checked) before any execution is looked at. */
  params(ctx: RouterContext, deps: ApiDeps, body: unknown): P | Promise<P>;
  refuse(e: Execution, p: P): string | undefined | Promise<string | undefined>;
  /** Runs once with every accepted execution (after all were checked). */
  apply(deps: ApiDeps, executions: Execution[], p: P, ctx: RouterContext): Promise<void>;
}

const each = <P>(fn: (deps: ApiDeps, e: Execution, p: P) => Promise<unknown>) =>
  async (deps: ApiDeps, executions: Execution[], p: P): Promise<void> => {
    for (const e of executions) await fn(deps, e, p);
  };

const notTerminated = (e: Execution): string | undefined => (isTerminal(e.state.current) ? undefined : 'execution is not terminated');

const kill: BulkAction<null> = {
  verb: 'kill',
  params: () => null,
  refuse: (e) => (isTerminal(e.state.current) ? 'execution already finished' : undefined),
  apply: each((deps, e) => deps.stores.executions.addCommand(e.id, { type: 'kill' })),
};

const remove: BulkAction<ReturnType<typeof deleteOptions> & { includeNonTerminated: boolean }> = {
  verb: 'delete',
  params: (ctx) => ({ ...deleteOptions(ctx), includeNonTerminated: queryBool(ctx, 'includeNonTerminated') }),
  refuse: (e, p) => (isTerminal(e.state.current) || p.includeNonTerminated ? undefined : 'execution is not terminated'),
  async apply(deps, executions, p, ctx) {
    await killAndWait(deps, executions.map((e) => e.id), clientGone(ctx));
    for (const e of executions) await deleteExecution(deps, e, p);
  },
};

const restart: BulkAction<null> = {
  verb: 'restart',
  params: () => null,
  refuse: (e) => (RESTARTABLE.has(e.state.current) ? undefined : `execution not in state ${[...RESTARTABLE].join(', ')}`),
  apply: each((deps, e) => deps.stores.executions.addCommand(e.id, { type: 'restart' })),
};

/**
 * Resume sends no values: each execution's `onResume` inputs are resolved from none, as the single resume route does
 * (defaults applied; a required one without a default refuses that execution with the reason).
 */
const resume: BulkAction<{ deps: ApiDeps; inputs: Map<string, Record<string, unknown>> }> = {
  verb: 'resume',
  params: (_ctx, deps) => ({ deps, inputs: new Map() }),
  async refuse(e, p) {
    if (e.state.current !== 'PAUSED') return 'execution not in state PAUSED';
    try {
      p.inputs.set(e.id, await resumeInputs(p.deps, e, { values: {}, files: [] }));
      return undefined;
    } catch (err) {
      if (err instanceof InputValidationError) return err.message;
      throw err;
    }
  },
  apply: each((deps, e, p) => {
    const inputs = p.inputs.get(e.id) ?? {};
    return deps.stores.executions.addCommand(e.id, Object.keys(inputs).length ? { type: 'resume', inputs } : { type: 'resume' });
  }),
};

const replay: BulkAction<{ latestRevision: boolean }> = {
  verb: 'replay',
  params: (ctx) => ({ latestRevision: queryBool(ctx, 'latestRevision') }),
  refuse: notTerminated,
  apply: each(async (deps, original, p) => {
    const copy = replayExecution({ original, id: newId(), now: new Date() });
    if (p.latestRevision) {
      const latest = await deps.stores.flows.get(original.namespace, original.flowId);
      if (latest) copy.flowRevision = latest.revision;
    }
    await deps.stores.executions.create(copy);
  }),
};

const labels: BulkAction<Label[]> = {
  verb: 'set labels',
  params(_ctx, _deps, body) {
    const added = body as Label[];
    const system = added.find((l) => isSystemLabel(l.key));
    if (system) throw badRequest(`System labels can only be set by the service itself, offending label: ${system.key}=${system.value}`, 'executionLabels');
    return added;
  },
  refuse: notTerminated,
  // Kestra adds the given labels to each execution's own (the given ones win on the same key).
  apply: each((deps, e, added) => deps.stores.executions.addCommand(e.id, { type: 'set-labels', labels: labelsFor(e, [...e.labels, ...added]) })),
};

const changeStatus: BulkAction<ReturnType<typeof terminalStateParam>> = {
  verb: 'change executions state',
  params: (ctx) => terminalStateParam(ctx, 'newStatus'),
  refuse: (e) => (isTerminal(e.state.current) ? undefined : 'execution not in a terminated state'),
  apply: each((deps, e, state) => deps.stores.executions.addCommand(e.id, { type: 'change-state', state })),
};

/** The JSON list of execution ids of a by-ids body (`field` names it in errors). */
function idList(deps: ApiDeps, value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) {
    throw badRequest(`\`${field}\` must be a list of execution ids`, field);
  }
  checkBulkCount(deps, value.length, 'executions', field);
  return [...new Set(value as string[])];
}

/** Ids of the executions the search filters of the request match (the search route's parsing); bounded. */
async function idsByQuery(ctx: RouterContext, deps: ApiDeps): Promise<string[]> {
  const query = { ...executionQuery(ctx, deps), offset: 0, limit: deps.limits.apiBulkMaxItems + 1 };
  const page = await deps.stores.executions.search(query);
  checkBulkCount(deps, Math.max(page.total, page.results.length), 'executions', 'query');
  return page.results.map((e) => e.id);
}

async function runBulk<P>(ctx: RouterContext, deps: ApiDeps, action: BulkAction<P>, ids: string[], p: P): Promise<void> {
  const accepted: Execution[] = [];
  const invalids: { message: string; invalidValue: string; propertyPath: string }[] = [];
  for (const id of ids) {
    const execution = (await deps.stores.executions.get(id))?.execution;
    const reason = execution ? await action.refuse(execution, p) : 'execution not found';
    if (reason) invalids.push({ message: reason, invalidValue: id, propertyPath: 'execution' });
    else accepted.push(execution!);
  }
  if (invalids.length > 0) {
    ctx.status = 400;
    ctx.body = { message: `invalid bulk ${action.verb}`, invalids };
    return;
  }
  await action.apply(deps, accepted, p, ctx);
  ctx.body = { count: accepted.length };
}

/** Adds `<path>/by-ids` and `<path>/by-query` of one action. */
function register<P>(
  r: Router, deps: ApiDeps, method: 'post' | 'delete', path: string, action: BulkAction<P>,
  body: { byIds: (deps: ApiDeps, raw: unknown) => { ids: string[]; input?: unknown }; byQuery?: (raw: unknown) => unknown },
): void {
  r[method](`/executions/${path}/by-ids`, async (ctx) => {
    const { ids, input } = body.byIds(deps, await readJson(ctx, deps.maxBodyBytes));
    const p = await action.params(ctx, deps, input);
    await runBulk(ctx, deps, action, ids, p);
  });
  r[method](`/executions/${path}/by-query`, async (ctx) => {
    const input = body.byQuery ? body.byQuery(await readJson(ctx, deps.maxBodyBytes)) : undefined;
    const p = await action.params(ctx, deps, input);
    await runBulk(ctx, deps, action, await idsByQuery(ctx, deps), p);
  });
}

const plainIds = (deps: ApiDeps, raw: unknown): { ids: string[] } => ({ ids: idList(deps, raw, 'executionsId') });

/** Kestra's SetLabelsByIdsRequest: `{executionsId: [...], executionLabels: [{key, value}]}`. */
function labelsByIds(deps: ApiDeps, raw: unknown): { ids: string[]; input: Label[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw badRequest('The body must be {executionsId: [...], executionLabels: [{key, value}]}', 'body');
  }
  const o = raw as { executionsId?: unknown; executionLabels?: unknown };
  return { ids: idList(deps, o.executionsId, 'executionsId'), input: parseLabelList(o.executionLabels ?? [], 'executionLabels') };
}

/** Adds the bulk routes to `r` (mounted under /api/v1). */
export function registerExecutionBulkRoutes(r: Router, deps: ApiDeps): void {
  register(r, deps, 'delete', 'kill', kill, { byIds: plainIds });
  register(r, deps, 'post', 'restart', restart, { byIds: plainIds });
  register(r, deps, 'post', 'resume', resume, { byIds: plainIds });
  register(r, deps, 'post', 'replay', replay, { byIds: plainIds });
  register(r, deps, 'post', 'change-status', changeStatus, { byIds: plainIds });
  register(r, deps, 'post', 'labels', labels, { byIds: labelsByIds, byQuery: (raw) => parseLabelList(raw ?? [], 'labels') });
  // Kestra's bulk delete is DELETE /executions/by-ids (no verb segment).
  r.delete('/executions/by-ids', async (ctx) => {
    const ids = idList(deps, await readJson(ctx, deps.maxBodyBytes), 'executionsId');
    await runBulk(ctx, deps, remove, ids, await remove.params(ctx, deps, undefined));
  });
  r.delete('/executions/by-query', async (ctx) => {
    const p = await remove.params(ctx, deps, undefined);
    await runBulk(ctx, deps, remove, await idsByQuery(ctx, deps), p);
  });
}
