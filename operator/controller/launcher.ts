// Launchers run attempts of runnable tasks and report outcomes as engine events. The embedded one runs them in this
// process (scripts spawn their own child processes); the cluster one (operator/kube) creates a Job per attempt.
// Both are idempotent per (task run, attempt): launching a running attempt again does nothing, and launching a finished
// one whose outcome the engine has not recorded yet reports that outcome again instead of running the task twice.
import type { TaskOutcome } from '../core/engine-types.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import type { RunnablePlugin } from '../plugins/types.js';
import { taskForRun } from '../core/runs.js';
import { getRunnable } from '../plugins/index.js';
import { runAttempt, type AttemptDeps } from './attempt.js';
import { sharedWorkingDirOf } from './working-directory.js';

export type Report = (executionId: string, taskRunId: string, attempt: number, outcome: TaskOutcome) => void;

export interface Launcher {
  /** Starts the attempt unless it is already running (or, in cluster mode, already has a Job). */
  launch(flow: Flow, exec: Execution, run: TaskRun, attempt: number): void;
  /**
   * Optional: attempts a step just started (new ones: no earlier run of them can exist), told before the step's record
   * is written. A launcher may do meanwhile what does not depend on that write (cluster: the attempt's input file);
   * `launch` with the same record object then needs no look-up for earlier work. A record that is not written (a
   * conflict) only leaves that work unused: its step is decided again, and launched through the checked path.
   */
  prepare?(flow: Flow, exec: Execution, attempts: { run: TaskRun; attempt: number }[]): void;
  /** Stops the attempt; its outcome (KILLED) is reported through `report`. */
  kill(taskRunId: string, attempt: number): void;
  /** Controller shutdown: embedded attempts are aborted; cluster Jobs keep running. */
  killAll(): void;
  /** The engine durably recorded this attempt's outcome: the launcher may forget it. */
  recorded(taskRunId: string, attempt: number): void;
  /** The execution ended: forget every outcome kept for it. */
  forgetExecution(executionId: string): void;
  /**
   * The outcome of an attempt of a pure task run at once in this process (operator/controller/inline.ts), or undefined
   * when the attempt must be launched. Absent: every attempt is launched (cluster Jobs).
   */
  runInline?(flow: Flow, exec: Execution, run: TaskRun, attempt: number): Promise<TaskOutcome> | undefined;
}

/** Inline attempts are never aborted: they end within their batch, and a controller stopping waits for its batches. */
const NEVER = new AbortController().signal;

export class LocalLauncher implements Launcher {
  private inFlight = new Map<string, AbortController>();
  /** Finished attempts whose outcome the engine has not recorded yet, by `taskRunId:attempt`. */
  private finished = new Map<string, { executionId: string; outcome: TaskOutcome }>();
  private extra = new Map<string, RunnablePlugin>();
  /** What every attempt is run with (one object, not a copy per attempt). */
  private readonly deps: AttemptDeps;

  constructor(private readonly a: Omit<AttemptDeps, 'extra'> & { report: Report }) {
    this.deps = { ...a, extra: this.extra };
  }

  register(plugin: RunnablePlugin): void { this.extra.set(plugin.type, plugin); }

  isRunning(taskRunId: string, attempt: number): boolean { return this.inFlight.has(`${taskRunId}:${attempt}`); }

  get running(): number { return this.inFlight.size; }

  /** Outcomes finished but not yet recorded by the engine (tests, metrics). */
  get unrecorded(): number { return this.finished.size; }

  launch(flow: Flow, exec: Execution, run: TaskRun, attempt: number): void {
    const key = `${run.id}:${attempt}`;
    if (this.inFlight.has(key)) return;
    const done = this.finished.get(key);
    if (done) { this.a.report(done.executionId, run.id, attempt, done.outcome); return; }
    const ac = new AbortController();
    this.inFlight.set(key, ac);
    void runAttempt(this.deps, flow, exec, run, attempt, ac.signal).then((outcome) => {
      this.inFlight.delete(key);
      this.finished.set(key, { executionId: exec.id, outcome });
      this.a.report(exec.id, run.id, attempt, outcome);
    }).catch((err: unknown) => console.error(`[launcher] reporting task run ${run.id} attempt ${attempt} failed:`, err));
  }

  runInline(flow: Flow, exec: Execution, run: TaskRun, attempt: number): Promise<TaskOutcome> | undefined {
    const key = `${run.id}:${attempt}`;
    if (this.inFlight.has(key) || this.finished.has(key)) return undefined;
    const type = taskForRun(flow, exec, run).type;
    if (this.extra.has(type) || !getRunnable(type)?.inline) return undefined;
    // A WorkingDirectory child works in the shared directory, seeded from files before it runs: launched.
    if (sharedWorkingDirOf(flow, exec, run, this.a.workRoot)) return undefined;
    return runAttempt(this.deps, flow, exec, run, attempt, NEVER);
  }

  recorded(taskRunId: string, attempt: number): void { this.finished.delete(`${taskRunId}:${attempt}`); }

  forgetExecution(executionId: string): void {
    for (const [key, f] of this.finished) if (f.executionId === executionId) this.finished.delete(key);
  }

  kill(taskRunId: string, attempt: number): void {
    this.inFlight.get(`${taskRunId}:${attempt}`)?.abort(new Error('Task killed'));
  }

  killAll(): void { for (const ac of this.inFlight.values()) ac.abort(new Error('Controller stopping')); }
}
