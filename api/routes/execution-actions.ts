// /api/v1/executions/{id}/kill|restart|resume|replay|labels|change-status: the API queues commands for the controller
// (kill, restart, resume, and for an ended execution set-labels and change-state, whose application it waits for) or
// creates a new execution (replay). A command that does not fit the current state is a 409, except labels on a
// running execution: Kestra's 400.
import type { Router, RouterContext } from '@koa/router';
import { replaceLabels, replayExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import type { Execution, ExecutionState, Label } from '../../operator/core/types.js';
import type { ExecutionCommand } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, HttpError } from '../errors.js';
import { clientGone, loadFlow, type ProvidedInputs, readInputs } from '../launch.js';
import { onResumeInputs } from '../../operator/core/flowables.js';
import { resolveInputs } from '../../operator/model/index.js';
import { parseLabelList, queryOne } from '../query.js';
import { executionJson } from '../execution-json.js';
import { getExecution } from './executions.js';

export const RESTARTABLE: ReadonlySet<ExecutionState> = new Set<ExecutionState>(['FAILED', 'KILLED', 'CANCELLED']);

/**
 * Queues `command` for an ended execution and waits (at most the `?wait=true` timeout) until the controller has
 * applied it: answers the execution then, or 202 with the record as it is when the wait ends first. Only the
 * controller writes an execution (in the cluster the API may not write its status).
 */
async function commandEnded(
  ctx: RouterContext, deps: ApiDeps, id: string, refuse: (e: Execution) => HttpError | undefined, command: (e: Execution) => ExecutionCommand,
): Promise<void> {
  const { execution } = await getExecution(deps, id);
  const refusal = refuse(execution);
  if (refusal) throw refusal;
  const pending = await deps.stores.executions.addCommand(id, command(execution));
  const applied = await waitForCommand(deps, id, pending.seq, clientGone(ctx));
  if (applied) { ctx.body = applied; return; }
  ctx.status = 202;
  ctx.body = (await getExecution(deps, id)).execution;
}

/** The execution once command `seq` is consumed (the write that applied it acknowledged it); undefined on timeout. */
async function waitForCommand(deps: ApiDeps, id: string, seq: number, signal: AbortSignal): Promise<Execution | undefined> {
  const { executions } = deps.stores;
  const consumed = async (): Promise<Execution | undefined> => {
    if ((await executions.pendingCommands(id)).some((c) => c.seq === seq)) return undefined;
    return (await executions.get(id))?.execution;
  };
  let unsubscribe = (): void => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<Execution | undefined>((resolve) => {
      const check = (): void => { consumed().then((e) => { if (e) resolve(e); }, () => undefined); };
      unsubscribe = executions.watch((ev) => { if (ev.execution.id === id) check(); });
      timer = setTimeout(() => resolve(undefined), deps.waitTimeoutMs);
      signal.addEventListener('abort', () => resolve(undefined), { once: true });
      check();
    });
  } finally {
    unsubscribe();
    if (timer) clearTimeout(timer);
  }
}

export const notTerminated = (status: number) => (e: Execution): HttpError | undefined =>
  isTerminal(e.state.current) ? undefined : new HttpError(status, `Execution '${e.id}' is ${e.state.current}; it is not terminated`);

/** The labels `e` gets from a caller's list (Kestra's rule, operator/core replaceLabels); 400 for a new system label. */
export function labelsFor(e: Execution, requested: Label[]): Label[] {
  const result = replaceLabels(e.labels, requested);
  if ('offending' in result) {
    throw badRequest(`System labels can only be set by the service itself, offending label: ${result.offending.key}=${result.offending.value}`, 'labels');
  }
  return result.labels;
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


/**
 * A resume's values checked against the `onResume` inputs of the Pause tasks it resumes (typed, defaults applied,
 * a 422 naming each bad one, as Kestra does); without declared inputs, the values as given.
 */
export async function resumeInputs(deps: ApiDeps, execution: Execution, provided: ProvidedInputs): Promise<Record<string, unknown>> {
  let flow;
  try {
    flow = await loadFlow(deps.stores, execution.namespace, execution.flowId, execution.flowRevision);
  } catch (err) {
    if ((err as { status?: unknown }).status === 404) return provided.values; // the revision is gone: nothing to check against
    throw err;
  }
  const defs = onResumeInputs(flow, execution);
  if (defs.length === 0) return provided.values;
  const uploaded = new Set(provided.files.map((f) => f.uri));
  return resolveInputs(defs, provided.values, { fileUri: (uri) => (uploaded.has(uri) ? undefined : 'only a file uploaded with this request is accepted') });
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
    ctx.body = executionJson(execution);
  });

  r.post('/executions/:id/resume', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.id!);
    if (execution.state.current !== 'PAUSED') {
      throw conflict(`Execution '${execution.id}' is ${execution.state.current}; only a PAUSED execution can be resumed`);
    }
    const provided = await readInputs(ctx, deps, execution);
    const inputs = await resumeInputs(deps, execution, provided);
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
    ctx.body = executionJson((await executions.create(replay)).execution);
  });

  // Kestra: the labels of a terminated execution (400 while it runs); the list replaces the caller's labels.
  r.post('/executions/:id/labels', async (ctx) => {
    const labels = parseLabelList(await readJson(ctx, deps.maxBodyBytes), 'labels');
    await commandEnded(ctx, deps, ctx.params.id!, notTerminated(400), (e) => ({ type: 'set-labels', labels: labelsFor(e, labels) }));
  });

  // Kestra: a terminated execution moved to another terminal state (its task runs unchanged).
  r.post('/executions/:id/change-status', async (ctx) => {
    const state = terminalStateParam(ctx, 'status');
    await commandEnded(ctx, deps, ctx.params.id!, notTerminated(409), () => ({ type: 'change-state', state }));
  });
}
