// /api/v1/executions/{id}/kill|restart|resume|replay|labels|change-status: the API queues commands for the controller
// (kill, restart, resume), creates a new execution (replay), or amends a terminated execution, which the controller no
// longer writes (labels, change-status: a conditional update, retried on a conflict). A command that does not fit the
// current state is a 409, except labels on a running execution: Kestra's 400.
import type { Router, RouterContext } from '@koa/router';
import { replaceLabels, replayExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { transition } from '../../operator/core/state.js';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import type { Execution, ExecutionState, Label } from '../../operator/core/types.js';
import { ConflictError } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, HttpError } from '../errors.js';
import { readInputs } from '../launch.js';
import { parseLabelList, queryOne } from '../query.js';
import { getExecution } from './executions.js';

export const RESTARTABLE: ReadonlySet<ExecutionState> = new Set<ExecutionState>(['FAILED', 'KILLED', 'CANCELLED']);

/** Conditional writes of one amendment before giving up with a 409 (the record keeps changing). */
const AMEND_TRIES = 5;

/**
 * Applies `change` to a terminated execution through a conditional update, re-reading it on a conflict. `refuse`
 * says why the current record cannot take the change (an HttpError to throw).
 */
export async function amendTerminated(
  deps: ApiDeps, id: string, change: (e: Execution) => Execution, refuse: (e: Execution) => HttpError | undefined,
): Promise<Execution> {
  for (let i = 0; i < AMEND_TRIES; i++) {
    const stored = await getExecution(deps, id);
    const refusal = refuse(stored.execution);
    if (refusal) throw refusal;
    if (stored.resourceVersion === 0) {
      throw conflict(`Execution '${id}' is archived (read-only history); it can no longer be changed`);
    }
    try {
      return (await deps.stores.executions.update(change(structuredClone(stored.execution)), stored.resourceVersion)).execution;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  throw conflict(`Execution '${id}' kept changing; try again`);
}

const notTerminated = (status: number) => (e: Execution): HttpError | undefined =>
  isTerminal(e.state.current) ? undefined : new HttpError(status, `Execution '${e.id}' is ${e.state.current}; it is not terminated`);

/** The body of `POST /executions/{id}/labels` applied to `e` (Kestra's rule, operator/core replaceLabels). */
export function withLabels(e: Execution, requested: Label[]): Execution {
  const result = replaceLabels(e.labels, requested);
  if ('offending' in result) {
    throw badRequest(`System labels can only be set by the service itself, offending label: ${result.offending.key}=${result.offending.value}`, 'labels');
  }
  e.labels = result.labels;
  return e;
}

/** A terminal state named by query parameter `name` (change-status). */
export function terminalStateParam(ctx: RouterContext, name: string): ExecutionState {
  const v = queryOne(ctx, name);
  if (v === undefined) throw badRequest(`Missing query parameter '${name}'`, name);
  if (!(ExecutionStates as readonly string[]).includes(v) || !isTerminal(v as ExecutionState)) {
    throw badRequest(`Invalid '${name}' '${v}': an execution can only be changed to a terminal state (${ExecutionStates.filter(isTerminal).join(', ')})`, name);
  }
  return v as ExecutionState;
}

export function withState(e: Execution, state: ExecutionState): Execution {
  transition(e.state, state, new Date());
  return e;
}

/** Adds the execution action routes to `r` (mounted under /api/v1). */
export function registerExecutionActionRoutes(r: Router, deps: ApiDeps): void {
  const { executions } = deps.stores;

  r.delete('/executions/:id/kill', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (isTerminal(execution.state.current)) {
      throw conflict(`Execution '${execution.id}' is already ${execution.state.current}`);
    }
    await executions.addCommand(execution.id, { type: 'kill' });
    ctx.status = 202;
  });

  r.post('/executions/:id/restart', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (!RESTARTABLE.has(execution.state.current)) {
      throw conflict(`Execution '${execution.id}' is ${execution.state.current}; only FAILED, KILLED or CANCELLED executions can be restarted`);
    }
    await executions.addCommand(execution.id, { type: 'restart' });
    ctx.status = 202;
    ctx.body = execution;
  });

  r.post('/executions/:id/resume', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (execution.state.current !== 'PAUSED') {
      throw conflict(`Execution '${execution.id}' is ${execution.state.current}; only a PAUSED execution can be resumed`);
    }
    const provided = await readInputs(ctx, deps, execution);
    const inputs = provided.values;
    await executions.addCommand(execution.id, Object.keys(inputs).length ? { type: 'resume', inputs } : { type: 'resume' });
    ctx.status = 204;
  });

  r.post('/executions/:id/replay', async (ctx) => {
    const { execution: original } = await getExecution(deps, ctx.params.id!);
    if (!isTerminal(original.state.current)) {
      throw conflict(`Execution '${original.id}' is ${original.state.current}; only a terminated execution can be replayed`);
    }
    const taskRunId = queryOne(ctx, 'taskRunId');
    if (taskRunId && !original.taskRunList.some((t) => t.id === taskRunId)) {
      throw new HttpError(422, `Task run '${taskRunId}' does not exist in execution '${original.id}'`, [
        { path: 'taskRunId', message: 'unknown task run' },
      ]);
    }
    const replay = replayExecution({ original, id: newId(), taskRunId, now: new Date() });
    ctx.body = (await executions.create(replay)).execution;
  });

  // Kestra: the labels of a terminated execution (400 while it runs); the list replaces the caller's labels.
  r.post('/executions/:id/labels', async (ctx) => {
    const labels = parseLabelList(await readJson(ctx, deps.maxBodyBytes), 'labels');
    ctx.body = await amendTerminated(deps, ctx.params.id!, (e) => withLabels(e, labels), notTerminated(400));
  });

  // Kestra: a terminated execution moved to another terminal state (its task runs unchanged).
  r.post('/executions/:id/change-status', async (ctx) => {
    const state = terminalStateParam(ctx, 'status');
    ctx.body = await amendTerminated(deps, ctx.params.id!, (e) => withState(e, state), notTerminated(409));
  });
}
