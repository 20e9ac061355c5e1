// /api/v1/executions/{id}/kill|restart|resume|replay: the API only queues commands for the controller (kill,
// restart, resume) or creates a new execution (replay); a command that does not fit the current state is a 409.
import type { Router } from '@koa/router';
import { replayExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { isTerminal } from '../../operator/core/types.js';
import type { ExecutionState } from '../../operator/core/types.js';
import type { ApiDeps } from '../deps.js';
import { conflict, HttpError } from '../errors.js';
import { readInputs } from '../launch.js';
import { queryOne } from '../query.js';
import { executionJson } from '../execution-json.js';
import { getExecution } from './executions.js';

const RESTARTABLE: ReadonlySet<ExecutionState> = new Set<ExecutionState>(['FAILED', 'KILLED', 'CANCELLED']);

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
    ctx.body = executionJson((await executions.create(replay)).execution);
  });
}
