// Test harness for the pure engine: a flow, an execution, an injected clock and ids, and a driver that answers each
// `launch` action with a scripted task outcome. No I/O: this is how the state-machine tables exercise `step`.
import { createRenderer } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { step } from './engine.js';
import type { Action, EngineDeps, EngineEvent, TaskOutcome } from './engine-types.js';
import { newExecution } from './execution.js';
import type { Limits } from './limits.js';
import type { Execution, Flow, TaskRun } from './types.js';
import { pendingWork } from './work.js';

export type Script = Record<string, TaskOutcome | TaskOutcome[] | ((run: TaskRun, attempt: number) => TaskOutcome)>;

export class EngineHarness {
  flow: Flow;
  exec: Execution;
  actions: Action[] = [];
  now = new Date('2026-01-01T00:00:00.000Z');
  /** Limits handed to the engine (none: the engine's defaults). */
  limits?: Limits;
  private ids = 0;
  private renderer = createRenderer({ secret: (n) => (n === 'TOKEN' ? 's3cr3t' : undefined) });

  constructor(yaml: string, inputs: Record<string, unknown> = {}) {
    this.flow = { ...parseFlow(yaml), revision: 1 };
    this.exec = newExecution({ id: 'exec1', flow: this.flow, inputs, now: this.now });
  }

  get deps(): EngineDeps {
    return { now: this.now, newId: () => `run${++this.ids}`, random: () => 0.5, renderer: this.renderer, ...(this.limits ? { limits: this.limits } : {}) };
  }

  send(event: EngineEvent): Action[] {
    const r = step(this.flow, this.exec, event, this.deps);
    this.exec = r.execution;
    this.actions.push(...r.actions);
    return r.actions;
  }

  advanceClock(ms: number): void { this.now = new Date(this.now.getTime() + ms); }

  /** Starts the execution and answers launches from `script` (default SUCCESS with no outputs) until nothing is left. */
  drive(script: Script = {}, start = true): this {
    this.answer(script, start ? this.send({ type: 'start', runningCount: 0 }) : []);
    return this;
  }

  /** Answers the launches among `pending`, and those their results cause, from `script`. */
  private answer(script: Script, pending: Action[]): void {
    for (let guard = 0; guard < 10_000; guard++) {
      const launch = pending.find((a) => a.type === 'launch') as Extract<Action, { type: 'launch' }> | undefined;
      if (!launch) {
        // A step that created as many runs as a step may: the next creates the rest (the controller sends a tick).
        const more = pending.findIndex((a) => a.type === 'continue');
        if (more < 0) break;
        pending.splice(more, 1);
        pending.push(...this.send({ type: 'tick' }));
        continue;
      }
      pending = pending.filter((a) => a !== launch);
      const run = this.run(launch.taskRunId);
      pending.push(...this.send({ type: 'task-result', taskRunId: run.id, attempt: launch.attempt, outcome: outcomeFor(script, run, launch.attempt) }));
    }
  }

  /**
   * Like `drive`, and fires retry timers too: whenever a run waits RETRYING, the clock moves to its next attempt date
   * and the timer is sent (its launches answered from `script`). Returns the waits seen, in ms.
   */
  driveRetries(script: Script = {}): number[] {
    const waits: number[] = [];
    this.drive(script);
    for (let guard = 0; guard < 1_000; guard++) {
      const run = this.exec.taskRunList.find((r) => r.state.current === 'RETRYING' && r.nextAttemptDate);
      if (!run) break;
      const wait = Date.parse(run.nextAttemptDate!) - this.now.getTime();
      waits.push(wait);
      this.advanceClock(wait);
      this.answer(script, this.send({ type: 'timer', kind: 'retry', taskRunId: run.id }));
    }
    return waits;
  }

  /** Answers, from `script`, every attempt now running (and the launches their results cause). */
  settle(script: Script = {}): this {
    const running = this.exec.taskRunList.flatMap((r) => {
      const att = r.attempts[r.attempts.length - 1];
      return att && att.state.current === 'RUNNING' ? [{ type: 'launch' as const, taskRunId: r.id, attempt: r.attempts.length }] : [];
    });
    this.answer(script, running);
    return this;
  }

  /**
   * Like `drive`, then fires the timers the record implies (work.ts: retries, pause expiries, loop intervals), earliest
   * first, moving the clock to each, until none is left. Returns the waits seen, in ms.
   */
  driveTimers(script: Script = {}, start = true): number[] {
    const waits: number[] = [];
    this.drive(script, start);
    for (let guard = 0; guard < 10_000; guard++) {
      const timers = pendingWork(this.flow, this.exec).timers.filter((t) => t.event.type === 'timer');
      if (timers.length === 0) break;
      const next = timers.reduce((a, b) => (Date.parse(a.at) <= Date.parse(b.at) ? a : b));
      const wait = Math.max(0, Date.parse(next.at) - this.now.getTime());
      waits.push(wait);
      this.advanceClock(wait);
      this.answer(script, this.send(next.event as EngineEvent));
    }
    return waits;
  }

  run(id: string): TaskRun {
    const r = this.exec.taskRunList.find((x) => x.id === id);
    if (!r) throw new Error(`no run ${id}`);
    return r;
  }

  runsOf(taskId: string): TaskRun[] { return this.exec.taskRunList.filter((r) => r.taskId === taskId); }

  stateOf(taskId: string): string { return this.runsOf(taskId).map((r) => r.state.current).join(','); }

  get state(): string { return this.exec.state.current; }

  get histories(): string[] { return this.exec.state.histories.map((h) => h.state); }
}

function outcomeFor(script: Script, run: TaskRun, attempt: number): TaskOutcome {
  const s = script[run.taskId];
  if (!s) return { state: 'SUCCESS', outputs: { value: run.value ?? run.taskId } };
  if (typeof s === 'function') return s(run, attempt);
  if (Array.isArray(s)) return s[Math.min(attempt, s.length) - 1]!;
  return s;
}
