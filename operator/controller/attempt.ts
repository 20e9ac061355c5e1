// One attempt of a runnable task, wherever it runs: the embedded launcher calls it in this process, the runner program
// calls it inside a task Pod. Renders nothing itself: the plugin renders its properties through the run context.
import { FOR_EACH_ITEM_MERGE, FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import type { TaskOutcome } from '../core/engine-types.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { applyFlowDefaults } from '../model/index.js';
import { getRunnable } from '../plugins/index.js';
import type { RunnablePlugin } from '../plugins/types.js';
import type { Stores } from '../store/types.js';
import { limitsFromEnv, type Limits } from '../core/limits.js';
import { buildRunContext, callsErrorLogs, readErrorLogs } from './run-context.js';
import type { SecretRenderer } from './secrets.js';
import { mergePlugin, splitPlugin } from './split.js';
import { seedSharedWorkingDir, sharedWorkingDirOf } from './working-directory.js';
import type { NamespaceGrants } from '../tenancy/namespaces.js';

export interface AttemptDeps {
  stores: Stores;
  renderer: SecretRenderer;
  /** Task working directories live under `<workRoot>/<executionId>/...`. */
  workRoot: string;
  /** Plugins beyond the registry (ForEachItem's split and merge tasks are always there). */
  extra?: Map<string, RunnablePlugin>;
  /** Namespaces executions may reach beyond their own (ALLOWED_NAMESPACES); default none. */
  grants?: NamespaceGrants;
  /** The safety limits (NAMESPACE_FILES_MAX_COUNT...); default: from the environment. */
  limits?: Limits;
}

const BUILTIN_EXTRA = new Map<string, RunnablePlugin>([[FOR_EACH_ITEM_SPLIT, splitPlugin], [FOR_EACH_ITEM_MERGE, mergePlugin]]);

/** Runs one attempt to its outcome; never throws. Secret values are masked where the outcome is stored (the stores' layer). */
export async function runAttempt(deps: AttemptDeps, flow: Flow, exec: Execution, run: TaskRun, attempt: number, signal: AbortSignal): Promise<TaskOutcome> {
  try {
    const task = applyFlowDefaults(taskForRun(flow, exec, run), flow);
    const plugin = deps.extra?.get(task.type) ?? BUILTIN_EXTRA.get(task.type) ?? getRunnable(task.type);
    if (!plugin) return { state: 'FAILED', error: `Unknown task type '${task.type}'` };
    // errorLogs() renders synchronously: the lines are read before the attempt, when its templates call it.
    const errorLogs = callsErrorLogs(flow, task) ? await readErrorLogs(deps.stores, exec, deps.limits ?? limitsFromEnv(process.env)) : undefined;
    const ctx = buildRunContext({
      flow, exec, run, task, attempt, stores: deps.stores, renderer: deps.renderer, workRoot: deps.workRoot, signal,
      ...(deps.grants ? { grants: deps.grants } : {}), ...(deps.limits ? { limits: deps.limits } : {}), ...(errorLogs ? { errorLogs } : {}),
    });
    // A WorkingDirectory child: the shared directory gets its namespace files and input files before the first child.
    const shared = sharedWorkingDirOf(flow, exec, run, deps.workRoot);
    if (shared) await seedSharedWorkingDir(ctx, { ...shared, task: applyFlowDefaults(shared.task, flow) });
    const result = await plugin.run(ctx);
    if (signal.aborted) return { state: 'KILLED', error: 'Task killed' };
    const outcome: TaskOutcome = { state: result.state };
    if (result.outputs) outcome.outputs = result.outputs;
    if (result.metrics) outcome.metrics = result.metrics;
    if (result.executionLabels) outcome.executionLabels = result.executionLabels;
    if (result.error) outcome.error = result.error;
    return outcome;
  } catch (err) {
    if (signal.aborted) return { state: 'KILLED', error: 'Task killed' };
    return { state: 'FAILED', error: (err as Error)?.message ?? String(err) };
  }
}
