// The embedded controller: watches the store, feeds events to the pure engine one execution at a time, writes the
// new record once per batch, then applies the engine's actions (launch, kill, subflows, logs) idempotently.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { step, stepMany } from '../core/engine.js';
import type { Action, EngineEvent, SubflowRequest } from '../core/engine-types.js';
import { bindToRevision, childDepth, newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import { limitsFromEnv, type Limits } from '../core/limits.js';
import { runById } from '../core/run-index.js';
import { pendingWork } from '../core/work.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, ExecutionState, Flow, TaskRun } from '../core/types.js';
import { isTerminal } from '../core/types.js';
import { resolveInputs } from '../model/index.js';
import { ConflictError, type PendingCommand, type StoredExecution, type Stores } from '../store/types.js';
import { LocalLauncher, type Launcher, type Report } from './launcher.js';
import { KeyedQueue } from './queue.js';
import { createSecretRenderer, type SecretRenderer } from './secrets.js';
import { Timers } from './timers.js';

type QueueItem = { event: EngineEvent; ack?: number } | { event: { type: 'start-due' } };

/** Actions applied between two yields to the event loop. */
const APPLY_CHUNK = 500;

/** States that hold a concurrency slot of their flow. */
const SLOT_STATES: ExecutionState[] = ['RUNNING', 'PAUSED', 'KILLING', 'RETRYING', 'RESTARTED'];

export interface ControllerOptions {
  /** Working directories of tasks live under `<dataDir>/work`. */
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  clock?: () => Date;
  random?: () => number;
  onError?: (err: unknown) => void;
  /** Where attempts run (default: this process). Cluster mode passes a factory for its Job launcher. */
  launcher?: (report: Report) => Launcher;
  /** Called after each batch of events of one execution with its duration (metrics). */
  observe?: (ms: number, ok: boolean) => void;
  /** Source of `secret('NAME')` values (default: `SECRET_<NAME>` in `env`). */
  secrets?: (name: string) => string | undefined;
}

export class Controller {
  readonly launcher: Launcher;
  private readonly renderer: SecretRenderer;
  private readonly queue: KeyedQueue<QueueItem>;
  private readonly flowQueue: KeyedQueue<() => Promise<void>>;
  private readonly timers: Timers;
  private readonly cache = new Map<string, StoredExecution>();
  private readonly flows = new Map<string, Flow>();
  private readonly workRoot: string;
  private readonly clock: () => Date;
  private readonly limits: Limits;
  private unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly stores: Stores, private readonly opts: ControllerOptions = {}) {
    this.clock = opts.clock ?? (() => new Date());
    this.limits = limitsFromEnv(opts.env ?? process.env);
    this.workRoot = join(opts.dataDir ?? join(tmpdir(), `flowpilot-${process.pid}`), 'work');
    this.renderer = createSecretRenderer(stores, opts.env ?? process.env, opts.secrets);
    const onError = (key: string, err: unknown) => (opts.onError ?? ((e) => console.error(`[controller] ${key}:`, e)))(err);
    const observe = opts.observe;
    this.queue = new KeyedQueue(observe ? async (id, items) => {
      const t0 = performance.now();
      let ok = false;
      try { await this.process(id, items); ok = true; } finally { observe(performance.now() - t0, ok); }
    } : (id, items) => this.process(id, items), onError);
    this.flowQueue = new KeyedQueue(async (_k, jobs) => { for (const j of jobs) await j(); }, onError);
    this.timers = new Timers((id, event) => this.queue.push(id, { event: event as EngineEvent }), this.clock);
    const report: Report = (id, taskRunId, attempt, outcome) => this.queue.push(id, { event: { type: 'task-result', taskRunId, attempt, outcome } });
    this.launcher = opts.launcher?.(report) ?? new LocalLauncher({ stores, renderer: this.renderer, workRoot: this.workRoot, report });
  }

  async start(): Promise<void> {
    this.unsubscribe.push(this.stores.executions.watch((e) => {
      if (e.type === 'ADDED' && !this.stopped) this.onNew(e.execution);
    }));
    this.unsubscribe.push(this.stores.executions.onCommand((c) => this.onCommand(c)));
    await this.recover();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe) u();
    this.timers.stop();
    this.launcher.killAll();
    await this.queue.whenIdle();
  }

  /** Type of the task of a run, when the execution's flow revision is cached (metrics). */
  taskType(exec: Execution, run: TaskRun): string | undefined {
    const flow = this.flows.get(`${exec.namespace}/${exec.flowId}/${exec.flowRevision}`);
    if (!flow) return undefined;
    try { return taskForRun(flow, exec, run).type; } catch { return undefined; }
  }

  /** Executions with queued or running work (metrics). */
  get queueDepth(): number { return this.queue.size; }

  /** Resolves when no execution has queued work (tests). */
  whenIdle(): Promise<void> { return this.queue.whenIdle(); }

  private onNew(exec: Execution): void {
    if (exec.state.current === 'CREATED') this.queue.push(exec.id, { event: { type: 'start-due' } });
    else if (isTerminal(exec.state.current)) this.queue.push(exec.id, { event: { type: 'tick' } });
  }

  private onCommand(c: PendingCommand): void {
    this.queue.push(c.executionId, { event: c.command as EngineEvent, ack: c.seq });
  }

  /** After a restart: every active execution resumes from its record; pending commands are replayed. */
  private async recover(): Promise<void> {
    for (const stored of await this.stores.executions.listActive()) {
      const exec = stored.execution;
      if (exec.state.current === 'CREATED' || exec.state.current === 'QUEUED') { this.queue.push(exec.id, { event: { type: 'start-due' } }); continue; }
      this.cache.set(exec.id, stored);
      const flow = await this.flow(exec);
      this.reconcile(flow, exec, true);
      this.queue.push(exec.id, { event: { type: 'tick' } });
    }
    for (const c of await this.stores.executions.pendingCommands()) this.onCommand(c);
  }

  private async flow(exec: Execution): Promise<Flow> {
    const key = `${exec.namespace}/${exec.flowId}/${exec.flowRevision}`;
    let flow = this.flows.get(key);
    if (!flow) {
      const rec = await this.stores.flows.get(exec.namespace, exec.flowId, exec.flowRevision);
      if (!rec) throw new Error(`Flow ${key} not found for execution ${exec.id}`);
      flow = rec.flow;
      this.flows.set(key, flow);
    }
    return flow;
  }

  private async load(id: string): Promise<StoredExecution | undefined> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const stored = await this.stores.executions.get(id);
    if (stored && !isTerminal(stored.execution.state.current)) this.cache.set(id, stored);
    return stored;
  }

  /** One batch of events for one execution: step through all of them, write once, then act. */
  private async process(id: string, items: QueueItem[]): Promise<void> {
    if (this.stopped) return;
    if (items.some((i) => i.event.type === 'start-due')) {
      await this.startViaFlowQueue(id);
      items = items.filter((i) => i.event.type !== 'start-due');
      if (!items.length) return;
    }
    const stored = await this.load(id);
    if (!stored) return;
    const flow = await this.flow(stored.execution);
    const deps = { now: this.clock(), newId, random: this.opts.random ?? Math.random, renderer: this.renderer, limits: this.limits };
    const { execution: exec, actions } = stepMany(flow, stored.execution, items.map((i) => i.event as EngineEvent), deps);
    const acks = items.flatMap((i) => ('ack' in i && i.ack !== undefined ? [i.ack] : []));
    if (exec !== stored.execution || acks.length) {
      try {
        await this.write(exec, stored.resourceVersion, acks);
      } catch (err) {
        // Someone else wrote the record: drop this result and replay the same events on the fresh record.
        if (err instanceof ConflictError) { for (const item of items) this.queue.push(id, item); return; }
        throw err;
      }
    }
    await this.apply(flow, exec, actions);
    this.reconcile(flow, exec, false);
  }

  private async write(exec: Execution, version: number, acks: number[]): Promise<void> {
    try {
      const saved = await this.stores.executions.update(exec, version, acks);
      if (isTerminal(exec.state.current)) this.cache.delete(exec.id); else this.cache.set(exec.id, saved);
    } catch (err) {
      this.cache.delete(exec.id);
      throw err;
    }
  }

  /** Start decisions of one flow are serialized so that concurrency limits hold under any load. */
  private startViaFlowQueue(id: string): Promise<void> {
    return new Promise((resolveStart, reject) => {
      void (async () => {
        const stored = await this.load(id);
        if (!stored) return resolveStart();
        const key = `${stored.execution.namespace}/${stored.execution.flowId}`;
        this.flowQueue.push(key, async () => {
          try { await this.startNow(id); resolveStart(); } catch (e) { reject(e); }
        });
      })().catch(reject);
    });
  }

  private async startNow(id: string): Promise<void> {
    const stored = await this.load(id);
    if (!stored) return;
    let exec0 = stored.execution;
    if (exec0.state.current !== 'CREATED' && exec0.state.current !== 'QUEUED') return;
    if (!exec0.flowRevision) {
      // Created without a revision (kubectl): bind it to the latest one, resolving its inputs there.
      const rec = await this.stores.flows.get(exec0.namespace, exec0.flowId);
      let resolved: { inputs: Record<string, unknown> } | { error: string };
      try { resolved = { inputs: rec ? resolveInputs(rec.flow.inputs, exec0.inputs ?? {}) : {} }; } catch (err) { resolved = { error: (err as Error).message }; }
      exec0 = bindToRevision(exec0, rec && { ...rec.flow, revision: rec.revision }, resolved, this.clock());
      await this.write(exec0, stored.resourceVersion, []);
      if (isTerminal(exec0.state.current)) { await this.onEnded(exec0); return; }
      return this.startNow(id);
    }
    const flow = await this.flow(exec0);
    const running = flow.concurrency ? await this.stores.executions.count(exec0.namespace, exec0.flowId, SLOT_STATES) : 0;
    const deps = { now: this.clock(), newId, random: this.opts.random ?? Math.random, renderer: this.renderer, limits: this.limits };
    const r = step(flow, exec0, { type: 'start', runningCount: running }, deps);
    if (r.execution !== exec0) await this.write(r.execution, stored.resourceVersion, []);
    await this.apply(flow, r.execution, r.actions);
    this.reconcile(flow, r.execution, false);
  }

  private async apply(flow: Flow, exec: Execution, actions: Action[]): Promise<void> {
    let applied = 0;
    for (const a of actions) {
      // A fan-out starts thousands of attempts: let other work (HTTP, other executions) in between every few hundred.
      if (++applied % APPLY_CHUNK === 0) {
        await new Promise((r) => setImmediate(r));
        if (this.stopped) return;
      }
      switch (a.type) {
        case 'launch': {
          const run = runById(exec, a.taskRunId);
          if (run) this.launcher.launch(flow, exec, run, a.attempt);
          break;
        }
        case 'kill-task': this.launcher.kill(a.taskRunId, a.attempt); break;
        case 'create-subflow': await this.createSubflow(exec, a.request); break;
        case 'kill-execution': await this.stores.executions.addCommand(a.executionId, { type: 'kill' }); break;
        case 'create-execution': await this.stores.executions.create(a.execution); break;
        case 'log':
          this.stores.logs.append([{
            executionId: exec.id, namespace: exec.namespace, flowId: exec.flowId, level: a.level, message: a.message,
            timestamp: this.clock().toISOString(),
            ...(a.taskRunId ? { taskRunId: a.taskRunId, taskId: runById(exec, a.taskRunId)?.taskId } : {}),
          }]);
          break;
        case 'ended': await this.onEnded(exec); break;
      }
    }
    if (isTerminal(exec.state.current) && !actions.some((a) => a.type === 'ended')) await this.onEnded(exec);
  }

  /** Arms timers and (on recovery) relaunches attempts and re-checks child executions implied by the record. */
  private reconcile(flow: Flow, exec: Execution, recovering: boolean): void {
    const work = pendingWork(flow, exec);
    for (const t of work.timers) {
      const event = t.event.type === 'start-due' ? { type: 'start-due' } : t.event;
      this.timers.arm(exec.id, t.at, event);
    }
    if (!recovering) return;
    for (const w of work.running) {
      const run = runById(exec, w.taskRunId)!;
      if (w.killing) this.queue.push(exec.id, { event: { type: 'task-result', taskRunId: w.taskRunId, attempt: w.attempt, outcome: { state: 'KILLED' } } });
      else this.launcher.launch(flow, exec, run, w.attempt);
    }
    for (const run of work.subflows) void this.checkChild(exec, run);
  }

  /** Recovery of a Subflow/ForEachItem run: create its child if the crash came before, else report what it did. */
  private async checkChild(parent: Execution, run: TaskRun): Promise<void> {
    const taskRunId = run.id;
    const childId = run.subflowExecutionId!;
    const child = await this.stores.executions.get(childId);
    if (!child) {
      const request = run.flowableState?.request as SubflowRequest | undefined;
      if (request) await this.createSubflow(parent, request);
      else this.queue.push(parent.id, { event: { type: 'subflow-error', taskRunId, error: `Subflow execution ${childId} was lost` } });
      return;
    }
    this.queue.push(parent.id, { event: { type: 'subflow-created', taskRunId, executionId: childId } });
    const c = child.execution;
    if (isTerminal(c.state.current)) {
      this.queue.push(parent.id, { event: { type: 'subflow-ended', taskRunId, child: { id: c.id, state: c.state.current, ...(c.outputs ? { outputs: c.outputs } : {}) } } });
    }
  }

  private async createSubflow(parent: Execution, req: SubflowRequest): Promise<void> {
    const push = (event: EngineEvent) => this.queue.push(parent.id, { event });
    try {
      const rec = await this.stores.flows.get(req.namespace, req.flowId, req.revision);
      if (!rec) { push({ type: 'subflow-error', taskRunId: req.taskRunId, error: `Subflow ${req.namespace}.${req.flowId}${req.revision ? ` revision ${req.revision}` : ''} not found` }); return; }
      const inputs = resolveInputs(rec.flow.inputs, req.inputs);
      const child = newExecution({
        id: req.executionId, flow: rec.flow, inputs, labels: req.labels, now: this.clock(), depth: childDepth(parent),
        parent: { executionId: parent.id, taskRunId: req.taskRunId, namespace: parent.namespace, flowId: parent.flowId },
        trigger: { id: 'subflow', type: 'ai.service.plugin.core.flow.Subflow', variables: { executionId: parent.id, namespace: parent.namespace, flowId: parent.flowId, flowRevision: parent.flowRevision } },
      });
      const stored = await this.stores.executions.create(child);
      push({ type: 'subflow-created', taskRunId: req.taskRunId, executionId: child.id });
      const c = stored.execution;
      if (isTerminal(c.state.current)) {
        push({ type: 'subflow-ended', taskRunId: req.taskRunId, child: { id: c.id, state: c.state.current, ...(c.outputs ? { outputs: c.outputs } : {}) } });
      }
    } catch (err) {
      push({ type: 'subflow-error', taskRunId: req.taskRunId, error: (err as Error).message });
    }
  }

  private async onEnded(exec: Execution): Promise<void> {
    this.timers.clear(exec.id);
    this.cache.delete(exec.id);
    rmSync(join(this.workRoot, exec.id), { recursive: true, force: true });
    if (exec.parent) {
      this.queue.push(exec.parent.executionId, {
        event: { type: 'subflow-ended', taskRunId: exec.parent.taskRunId, child: { id: exec.id, state: exec.state.current, ...(exec.outputs ? { outputs: exec.outputs } : {}) } },
      });
    }
    const flow = await this.flow(exec).catch(() => undefined);
    if (flow?.concurrency) await this.dequeue(exec.namespace, exec.flowId);
  }

  /** A slot freed: start the oldest QUEUED execution of the flow. */
  private async dequeue(namespace: string, flowId: string): Promise<void> {
    const page = await this.stores.executions.search({ namespace, flowId, state: ['QUEUED'], limit: 1000 });
    const oldest = page.results.filter((e) => e.namespace === namespace).sort((a, b) => a.state.startDate.localeCompare(b.state.startDate))[0];
    if (oldest) this.queue.push(oldest.id, { event: { type: 'start-due' } });
  }
}

export async function startController(stores: Stores, opts: ControllerOptions = {}): Promise<Controller> {
  const c = new Controller(stores, opts);
  await c.start();
  return c;
}
