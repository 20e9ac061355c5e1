// Embedded launcher: runs one attempt of a runnable task in this process (scripts spawn their own child processes),
// reports the outcome as an engine event, and aborts attempts on kill or timeout. Idempotent per (task run, attempt).
import { FOR_EACH_ITEM_SPLIT } from '../core/flow-index.js';
import type { TaskOutcome } from '../core/engine-types.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { applyPluginDefaults } from '../model/index.js';
import { getRunnable } from '../plugins/index.js';
import type { RunnablePlugin } from '../plugins/types.js';
import type { Stores } from '../store/types.js';
import { maskSecrets } from '../plugins/util.js';
import { buildRunContext, maskDeep } from './run-context.js';
import type { SecretRenderer } from './secrets.js';
import { splitPlugin } from './split.js';

export type Report = (executionId: string, taskRunId: string, attempt: number, outcome: TaskOutcome) => void;

export class LocalLauncher {
  private inFlight = new Map<string, AbortController>();
  private extra = new Map<string, RunnablePlugin>([[FOR_EACH_ITEM_SPLIT, splitPlugin]]);

  constructor(private readonly a: { stores: Stores; renderer: SecretRenderer; workRoot: string; report: Report }) {}

  register(plugin: RunnablePlugin): void { this.extra.set(plugin.type, plugin); }

  isRunning(taskRunId: string, attempt: number): boolean { return this.inFlight.has(`${taskRunId}:${attempt}`); }

  get running(): number { return this.inFlight.size; }

  launch(flow: Flow, exec: Execution, run: TaskRun, attempt: number): void {
    const key = `${run.id}:${attempt}`;
    if (this.inFlight.has(key)) return;
    const ac = new AbortController();
    this.inFlight.set(key, ac);
    void this.execute(flow, exec, run, attempt, ac).then((outcome) => {
      this.inFlight.delete(key);
      this.a.report(exec.id, run.id, attempt, outcome);
    });
  }

  kill(taskRunId: string, attempt: number): void {
    this.inFlight.get(`${taskRunId}:${attempt}`)?.abort(new Error('Task killed'));
  }

  killAll(): void { for (const ac of this.inFlight.values()) ac.abort(new Error('Controller stopping')); }

  private async execute(flow: Flow, exec: Execution, run: TaskRun, attempt: number, ac: AbortController): Promise<TaskOutcome> {
    let secrets = new Set<string>();
    try {
      const task = applyPluginDefaults(taskForRun(flow, exec, run), flow.pluginDefaults);
      const plugin = this.extra.get(task.type) ?? getRunnable(task.type);
      if (!plugin) return { state: 'FAILED', error: `Unknown task type '${task.type}'` };
      const ctx = buildRunContext({ flow, exec, run, task, attempt, stores: this.a.stores, renderer: this.a.renderer, workRoot: this.a.workRoot, signal: ac.signal });
      secrets = ctx.secrets;
      const result = await plugin.run(ctx);
      if (ac.signal.aborted) return { state: 'KILLED', error: 'Task killed' };
      const outcome: TaskOutcome = { state: result.state };
      if (result.outputs) outcome.outputs = maskDeep(result.outputs, secrets);
      if (result.metrics) outcome.metrics = result.metrics;
      if (result.executionLabels) outcome.executionLabels = result.executionLabels;
      if (result.error) outcome.error = maskSecrets(result.error, secrets);
      return outcome;
    } catch (err) {
      if (ac.signal.aborted) return { state: 'KILLED', error: 'Task killed' };
      return { state: 'FAILED', error: maskSecrets((err as Error)?.message ?? String(err), secrets) };
    }
  }
}
