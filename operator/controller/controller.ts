// The embedded controller: watches the store, feeds events to the pure engine one execution at a time, writes the
// new record once per batch, then applies the engine's actions (launch, kill, subflows, logs) idempotently.
// Faults: a transient error retries the batch after a backoff (nothing is dropped; the retry re-derives the record's
// work); a permanent one ends that execution FAILED with the reason. A periodic resync re-derives the work of every
// active execution from the store, so a lost wake-up only delays; recovery after a restart is the same resync.
// Partitioned (several operator replicas): `owns` says which executions this controller acts on; the others' events,
// commands, resyncs and reports are dropped, and news that crosses partitions (a child ended, a concurrency slot freed)
// reaches the owner through the store's watch feed. Start decisions of a flow with a concurrency limit are made by one
// controller (`startsFlow`) whoever owns the execution, so the limit holds across replicas; the owner then takes over.
// Eager start (`admit`): an execution created through the API takes its first step here before it is stored, and is
// stored once, as that step left it (one create instead of a create and an update).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { actsOnEnded, handBackUnchanged, stepMany, stepOwned, stepsInPlace, type StepResult } from '../core/engine.js';
import type { Action, EngineEvent } from '../core/engine-types.js';
import { bindToRevision } from '../core/execution.js';
import { newId } from '../core/ids.js';
import { limitsFromEnv, type Limits } from '../core/limits.js';
import { runById } from '../core/run-index.js';
import { pendingWork } from '../core/work.js';
import { WeightedLru } from '../core/weighted-lru.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, ExecutionState, Flow, LogLevel, TaskRun } from '../core/types.js';
import { isTerminal } from '../core/types.js';
import { isTransient, PermanentError, reasonOf, retryTransient, TransientError } from '../faults.js';
import { resolveInputs } from '../model/index.js';
import type { ExecutionSummary, PendingCommand, StoredExecution, Stores } from '../store/types.js';
import { fileCallerOf, fileReadDenied } from '../tenancy/files.js';
import { namespaceGrantsFromEnv, type NamespaceGrants } from '../tenancy/namespaces.js';
import { scopedKv } from '../tenancy/scoped-kv.js';
import { scopedStorage } from '../tenancy/scoped-storage.js';
import { storedForm } from '../secrets/masked-stores.js';
import { Children } from './children.js';
import { failedRecord } from './fail.js';
import { mayReadInStep, readsInStep, stepInline } from './inline.js';
import { LocalLauncher, type Launcher, type Report } from './launcher.js';
import { NamespaceResolver } from './namespaces.js';
import { KeyedQueue } from './queue.js';
import { Resync } from './resync.js';
import { lazy } from './run-context.js';
import { createSecretRenderer, type SecretRenderer } from './secrets.js';
import { EngineReads, StepReadsMissed } from './step-reads.js';
import { Timers } from './timers.js';

/** Work items of one execution's queue: engine events, and the controller's own (start, resync, fail). */
type QueueItem =
  | { event: EngineEvent; ack?: number }
  | { event: { type: 'start-due' } }
  /** Re-derive the record's work (recovery, periodic resync, the retry of a batch after a transient failure). */
  | { event: { type: 'resync' } }
  /** A permanent error: end the execution FAILED with `reason`, acknowledging the commands of the batch that hit it. */
  | { event: { type: 'fail'; reason: string }; acks: number[] }
  /** A new execution not stored yet (`admit`): its first step, then one create. */
  | { event: { type: 'admit' } };

const CONTROL = new Set(['start-due', 'resync', 'fail', 'admit']);
/** States of an execution waiting for its start decision. */
const WAITING = new Set<ExecutionState>(['CREATED', 'QUEUED']);
const RESYNC: QueueItem = { event: { type: 'resync' } };
const ADMIT: QueueItem = { event: { type: 'admit' } };

/** Actions applied between two yields to the event loop. */
const APPLY_CHUNK = 500;
/**
 * Events of one execution taken in one batch at most: a step and its write cost what their events change, so a cap
 * bounds the longest block of the event loop (the results of a 100,000-child fan-out pile up while its children are
 * launched: ~100,000 results were one step and one write). Steps cost the runs they change, not the record
 * (run-index.ts `placed`, shared-runs.ts, work.ts), so more, smaller batches cost about as much in all: a
 * 100,000-item loop took as long in batches of 500 as of 2,000, with blocks of ~40 ms instead of ~100
 * (docs/performance.md, "Batches of 500").
 */
export const EVENTS_PER_BATCH = 500;

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
  /** Resync period (default: RESYNC_INTERVAL_MS from `env`, see core/limits.ts). */
  resyncIntervalMs?: number;
  /**
   * Whether this controller acts on an execution (default: all). It may change at any time: an execution no longer
   * owned is dropped at its next batch; one newly owned is picked up by `recover()`.
   */
  owns?: (executionId: string) => boolean;
  /** Whether this controller decides the starts of a flow with a concurrency limit (default: all; one per flow when partitioned). */
  startsFlow?: (namespace: string, flowId: string) => boolean;
  /** Bound of the inline work of one batch (default: INLINE_MAX_ATTEMPTS attempts, INLINE_BUDGET_MS ms; inline.ts). */
  inlineBudget?: { attempts: number; ms: number };
}

/** Ended executions whose cross-partition news were forwarded (bounded; a resync covers anything forgotten). */
const FORWARDED_MAX = 10_000;
/** Admitted executions whose ADDED event is still to come (bounded: an event never heard of costs one entry for a while). */
const ADMITTED_MAX = 10_000;

/** An execution handed to `admit`, waiting for its turn in its queue. */
interface Admission { execution: Execution; resolve: (created: Execution) => void; reject: (err: unknown) => void }

export class Controller {
  readonly launcher: Launcher;
  private readonly renderer: SecretRenderer;
  private readonly reads: EngineReads;
  private readonly queue: KeyedQueue<QueueItem>;
  private readonly flowQueue: KeyedQueue<() => Promise<void>>;
  private readonly timers: Timers;
  private readonly children: Children;
  /**
   * Records of active executions between their batches, their task runs together within EXECUTION_CACHE_MAX_TASK_RUNS:
   * a record let go is read back from the store at its execution's next event (`load`).
   */
  private readonly cache: WeightedLru<StoredExecution>;
  private readonly flows = new Map<string, Flow>();
  private readonly namespaces: NamespaceResolver;
  private readonly workRoot: string;
  private readonly clock: () => Date;
  private readonly resync: Resync;
  /** Task runs per execution, subflow depth (operator/core/limits.ts), passed to the engine. */
  private readonly limits: Limits;
  /** Namespaces flows may reach beyond their own (ALLOWED_NAMESPACES). */
  private readonly grants: NamespaceGrants;
  private readonly stopping = new AbortController();
  private readonly owns: (executionId: string) => boolean;
  private readonly startsFlow: (namespace: string, flowId: string) => boolean;
  private readonly forwarded = new Set<string>();
  /**
   * Executions whose working directory may exist (an attempt was launched, or the execution was resumed from its record
   * after a restart): removed when they end. The others (every attempt ran inline) have none: no lookup on disk.
   */
  private readonly mayHaveFiles = new Set<string>();
  /** Executions owned here whose start another controller decides (their flow has a concurrency limit). */
  private readonly awaitingStart = new Set<string>();
  /** Executions handed to `admit` whose batch has not begun (`stop` rejects them). */
  private readonly admissions = new Map<string, Admission>();
  /** Executions being admitted or admitted: their ADDED event is skipped, their first step is taken already. */
  private readonly admitted = new Set<string>();
  private unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly stores: Stores, private readonly opts: ControllerOptions = {}) {
    const env = opts.env ?? process.env;
    this.clock = opts.clock ?? (() => new Date());
    this.owns = opts.owns ?? (() => true);
    this.startsFlow = opts.startsFlow ?? (() => true);
    this.limits = limitsFromEnv(env);
    this.cache = new WeightedLru((s) => s.execution.taskRunList.length, { maxWeight: this.limits.executionCacheMaxTaskRuns });
    this.workRoot = join(opts.dataDir ?? join(tmpdir(), `flowpilot-${process.pid}`), 'work');
    this.renderer = createSecretRenderer(stores, env, opts.secrets);
    this.reads = new EngineReads(stores, env, opts.secrets);
    this.grants = namespaceGrantsFromEnv(env);
    const onError = (key: string, err: unknown) => (opts.onError ?? ((e) => console.error(`[controller] ${key}:`, e)))(err);
    const observe = opts.observe;
    this.queue = new KeyedQueue(observe ? async (id, items) => {
      const t0 = performance.now();
      let ok = false;
      try { await this.process(id, items); ok = true; } finally { observe(performance.now() - t0, ok); }
    } : (id, items) => this.process(id, items), (id, err, items) => this.onPermanent(id, err, items), {
      // A batch retried after a transient failure also re-derives the record's work: the failure may have come after
      // the write (or a write may have landed although it reported a failure), so actions of that step may be undone.
      retryWith: (_id, items) => (items.some((i) => i.event.type === 'resync') ? items : [...items, RESYNC]),
      maxBatch: EVENTS_PER_BATCH,
    });
    this.flowQueue = new KeyedQueue(async (_k, jobs) => { for (const j of jobs) await j(); }, onError);
    this.timers = new Timers((id, event) => this.queue.push(id, { event: event as EngineEvent }), this.clock);
    const report: Report = (id, taskRunId, attempt, reported) => {
      // Credentials a task declared in its own process (a task Pod): masked, and sealed in inputs, from now on.
      const { secrets, ...outcome } = reported;
      if (secrets?.length) this.stores.secrets?.learnSealed(id, secrets);
      this.queue.push(id, { event: { type: 'task-result', taskRunId, attempt, outcome } });
    };
    this.launcher = opts.launcher?.(report) ?? new LocalLauncher({ stores, renderer: this.renderer, workRoot: this.workRoot, report, grants: this.grants, limits: this.limits });
    this.namespaces = new NamespaceResolver(stores.namespaces);
    this.children = new Children(stores, this.clock, (id, event) => this.queue.push(id, { event }), this.grants, (exec) => this.flow(exec));
    this.resync = new Resync(stores, opts.resyncIntervalMs ?? this.limits.resyncIntervalMs, {
      busy: (id) => this.queue.has(id),
      resync: (s) => {
        if (this.owns(s.id)) this.queue.push(s.id, RESYNC);
        else if (this.mayStart(s)) this.queue.push(s.id, { event: { type: 'start-due' } });
      },
      command: (c) => this.onCommand(c),
    });
  }

  /** Subscribes to the store, then recovers: every active execution resumes from its record, pending commands replay. */
  async start(): Promise<void> {
    this.unsubscribe.push(this.stores.executions.watch((e) => {
      if (this.stopped) return;
      const exec = e.execution;
      if (!this.owns(exec.id)) {
        if (this.mayStart(exec)) this.queue.push(exec.id, { event: { type: 'start-due' } });
        if (e.type === 'MODIFIED') this.onModified(exec);
      } else if (e.type === 'ADDED') this.onNew(exec, e.resourceVersion);
      else if (this.awaitingStart.has(exec.id) && !WAITING.has(exec.state.current)) {
        // Started by the controller deciding its flow's starts: take it over from its record.
        this.awaitingStart.delete(exec.id);
        this.queue.push(exec.id, RESYNC);
      }
    }));
    this.unsubscribe.push(this.stores.executions.onCommand((c) => this.onCommand(c)));
    await this.resync.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    // Not stored, and not to be: the API answers 503 (transient) and the caller tries again. A batch already under way
    // finishes (closing the queue waits for it), so an execution whose create committed is answered as created.
    for (const [id, a] of this.admissions) {
      this.admitted.delete(id);
      a.reject(stoppingError());
    }
    this.admissions.clear();
    for (const u of this.unsubscribe) u();
    this.resync.stop();
    this.timers.stop();
    this.launcher.killAll();
    await this.queue.close();
    await this.flowQueue.close();
  }

  /**
   * Takes over executions newly owned (a partition acquired): each active one among `only` resumes from its record and
   * its pending commands replay, as at start. Resolves false when the store could not be listed (the resync retries).
   */
  recover(only: (executionId: string) => boolean): Promise<boolean> {
    return this.resync.run(true, (id) => only(id) && this.owns(id));
  }

  /** Takes over the start decisions of flows newly given to this controller (`only`): their waiting executions are started or queued. */
  async recoverStarts(only: (namespace: string, flowId: string) => boolean): Promise<void> {
    for (const s of await this.stores.executions.listActiveSummaries()) {
      if (!this.owns(s.id) && only(s.namespace, s.flowId) && this.mayStart(s)) this.queue.push(s.id, { event: { type: 'start-due' } });
    }
  }

  /** Type of the task of a run, when the execution's flow revision is cached (metrics). */
  taskType(exec: Execution, run: TaskRun): string | undefined {
    const flow = this.flows.get(`${exec.namespace}/${exec.flowId}/${exec.flowRevision}`);
    if (!flow) return undefined;
    try { return taskForRun(flow, exec, run).type; } catch { return undefined; }
  }

  /**
   * Eager start of a new execution (state CREATED, not stored yet; the API's creations): its first step is taken in its
   * queue, as any other, and the execution is stored with one create holding the state that step left it in (a 3-task
   * Return flow is created SUCCESS). Resolves once that create committed, with the execution as created, in the form
   * the store keeps (inputs sealed, secrets masked): what a plain create resolves with, and what Kestra answers.
   * Rejects with a transient error when the controller stops first, or with the create's error (nothing stored then).
   * A first step that throws falls back to a plain create (its batch then runs as usual). Not owned here, of a flow with
   * a concurrency limit (its starts are serialized), or not CREATED: a plain create.
   */
  admit(execution: Execution): Promise<Execution> {
    if (this.stopped) return Promise.reject(stoppingError());
    const id = execution.id;
    if (execution.state.current !== 'CREATED' || !execution.flowRevision || !this.owns(id) || this.admitted.has(id)) {
      return this.stores.executions.create(execution).then((s) => s.execution);
    }
    return new Promise((resolve, reject) => {
      this.admissions.set(id, { execution, resolve, reject });
      this.admitted.add(id);
      if (this.admitted.size > ADMITTED_MAX) this.admitted.delete(this.admitted.values().next().value!);
      this.queue.push(id, ADMIT);
    });
  }

  /** Task runs of the records kept between batches (tests, metrics). */
  get cachedTaskRuns(): number { return this.cache.weight; }

  /** Executions with queued or running work (metrics). */
  get queueDepth(): number { return this.queue.size; }

  /** Resolves when no execution has queued work (tests). */
  whenIdle(): Promise<void> { return this.queue.whenIdle(); }

  private onNew(exec: Execution, resourceVersion: number): void {
    if (this.admitted.delete(exec.id)) return; // admitted: its first step is in the record already, its batch acted on it
    if (exec.state.current === 'CREATED') {
      // The committed record as the store would read it back (the feed's copy, which nobody changes: the engine copies).
      if (!this.cache.has(exec.id)) this.cache.set(exec.id, { execution: exec, resourceVersion });
      this.queue.push(exec.id, { event: { type: 'start-due' } });
    }
    else if (isTerminal(exec.state.current)) this.queue.push(exec.id, { event: { type: 'tick' } });
  }

  private onCommand(c: PendingCommand): void {
    if (this.owns(c.executionId)) this.queue.push(c.executionId, { event: c.command as EngineEvent, ack: c.seq });
  }

  /**
   * An execution owned elsewhere ended: its owner told its parent and its flow's queue only if it owns them too, so the
   * owners of those hear it here (once per execution; the periodic resync re-checks children in any case).
   */
  private onModified(exec: Execution): void {
    if (!isTerminal(exec.state.current) || this.forwarded.has(exec.id)) return;
    const parent = exec.parent?.executionId;
    const wakeParent = parent !== undefined && this.owns(parent);
    this.forwarded.add(exec.id);
    if (this.forwarded.size > FORWARDED_MAX) this.forwarded.delete(this.forwarded.values().next().value!);
    if (wakeParent) this.children.ended(exec);
    void this.flow(exec).then(async (flow) => {
      if (flow.concurrency) await this.dequeue(exec.namespace, exec.flowId);
    }).catch((err: unknown) => { if (isTransient(err)) this.forwarded.delete(exec.id); });
  }

  /** A batch failed for good: the execution ends FAILED with the reason (that write itself retried while transient). */
  private onPermanent(id: string, err: unknown, items: QueueItem[]): void {
    if (this.stopped) return;
    const reason = reasonOf(err);
    if (items.some((i) => i.event.type === 'fail')) {
      console.error(`[controller] execution ${id} could not be marked FAILED (${reason}); the next resync tries again`);
      return;
    }
    (this.opts.onError ?? (() => console.error(`[controller] execution ${id} fails: ${reason}`)))(err);
    this.queue.push(id, { event: { type: 'fail', reason }, acks: acksOf(items) });
  }

  private async flow(exec: Execution): Promise<Flow> {
    const key = `${exec.namespace}/${exec.flowId}/${exec.flowRevision}`;
    let flow = this.flows.get(key);
    if (!flow) {
      const rec = await this.stores.flows.get(exec.namespace, exec.flowId, exec.flowRevision);
      if (!rec) throw new PermanentError(`Flow ${exec.namespace}.${exec.flowId} revision ${exec.flowRevision} not found`);
      flow = rec.flow;
      this.flows.set(key, flow);
    }
    return this.namespaces.resolve(flow);
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
    const admission = this.admissions.get(id);
    if (admission && items.some((i) => i.event.type === 'admit')) {
      this.admissions.delete(id);
      await this.admitNow(admission);
      if (items.every((i) => i.event.type === 'admit')) return;
    }
    const startDue = items.some((i) => i.event.type === 'start-due');
    if (!this.owns(id)) {
      if (startDue) await this.startForFlow(id);
      this.disown(id);
      return;
    }
    const fail = items.find((i): i is Extract<QueueItem, { acks: number[] }> => i.event.type === 'fail');
    if (fail) return this.failNow(id, fail.event.reason, fail.acks);
    let resync = items.some((i) => i.event.type === 'resync');
    if (resync) { this.cache.delete(id); this.mayHaveFiles.add(id); }
    if (startDue || resync) {
      const state = (await this.load(id))?.execution.state.current;
      if (state === 'CREATED' || state === 'QUEUED') await this.startViaFlowQueue(id);
      else if (startDue && !resync && state && this.opts.startsFlow) {
        // Already started (or ended) by the controller deciding its flow's starts: take it over from its record.
        resync = true;
        this.cache.delete(id);
      }
    }
    const events = items.filter((i) => !CONTROL.has(i.event.type)).map((i) => i.event as EngineEvent);
    if (!events.length && !resync) { this.resync.processed(id); return; }
    const stored = await this.load(id);
    if (!stored) { this.resync.forget(id); this.launcher.forgetExecution(id); this.mayHaveFiles.delete(id); return; }
    const acks = acksOf(items);
    if (isTerminal(stored.execution.state.current) && !events.some(actsOnEnded)) {
      // Nothing left to decide (late reports, a record created terminal): consume commands, make sure its end is known.
      if (acks.length) await this.write(stored.execution, stored.resourceVersion, acks);
      this.settled(stored.execution, events);
      await this.onEnded(stored.execution);
      return;
    }
    const flow = await this.flow(stored.execution);
    const { execution: exec, actions } = await this.decideInline(flow, stored.execution, resync ? [...events, { type: 'tick' }] : events);
    this.prepare(flow, exec, actions);
    if (changed(stored.execution, exec, events.length > 0) || acks.length) await this.write(exec, stored.resourceVersion, acks);
    await this.apply(flow, exec, actions);
    // Results and ticks only (a wide loop's batches): the timers of the runs they did not change are armed already
    // (work.ts `since`), and neither consumes a timer. Other events (a timer that fired, a kill...) derive them all.
    await this.reconcile(flow, exec, resync, !resync && events.every((e) => e.type === 'task-result' || e.type === 'tick') ? stored.execution : undefined);
    this.settled(exec, events);
    if (!isTerminal(exec.state.current)) this.resync.processed(id);
  }

  /**
   * The batch of an admission: the start step of the execution (inline tasks run), one create of the record it made,
   * the admission resolved, then the step's actions applied as `startNow` does. Whatever makes the step impossible or
   * throw (ownership moved, a concurrency limit, an unknown revision, a failing render) ends in a plain create of the
   * execution as it came, which its ADDED event then starts the usual way: an accepted execution is never lost.
   */
  private async admitNow(a: Admission): Promise<void> {
    const id = a.execution.id;
    const first = await this.firstStep(a.execution).catch((err: unknown) => {
      if (!this.stopped) console.warn(`[controller] ${id}: first step before its creation failed (${reasonOf(err)}); created as it came`);
      return undefined;
    });
    if (!first) return this.createPlain(a);
    const { flow, sealed, step } = first;
    this.prepare(flow, step.execution, step.actions);
    let saved: StoredExecution;
    try {
      saved = await this.stores.executions.create(step.execution);
    } catch (err) {
      this.admitted.delete(id);
      a.reject(err); // not stored: the API answers the error (503 when transient), the caller may try again
      await this.dropLogsOf(id);
      return;
    }
    if (isTerminal(saved.execution.state.current)) this.cache.delete(id); else this.cache.set(id, saved);
    a.resolve(this.stores.secrets ? storedForm(this.stores.secrets, sealed, flow.inputs) : sealed);
    await this.apply(flow, step.execution, step.actions);
    await this.reconcile(flow, step.execution, false);
    if (!isTerminal(step.execution.state.current)) this.resync.processed(id);
  }

  /** The start step of a new execution not stored yet; undefined when it must be created as it came (see admitNow). */
  private async firstStep(exec: Execution): Promise<{ flow: Flow; sealed: Execution; step: StepResult } | undefined> {
    const flow = await this.flow(exec);
    if (!this.owns(exec.id) || flow.concurrency) return undefined;
    // The record as the store would read it back (SECRET inputs sealed, learnt for masking): the step opens its inputs
    // as it opens those of a stored record, so the logs and outputs of its inline tasks are masked the same way.
    const sealed = this.stores.secrets ? this.stores.secrets.sealInputs(exec, flow.inputs) : exec;
    return { flow, sealed, step: await this.decideInline(flow, sealed, [{ type: 'start', runningCount: 0 }]) };
  }

  /**
   * The log lines the first step's inline tasks wrote for an execution whose create failed: the execution does not
   * exist, so neither do they (a caller who tries again gets a new id). Flushed first, so no buffered line comes after.
   */
  private async dropLogsOf(id: string): Promise<void> {
    try {
      await this.stores.logs.flush();
      await this.stores.logs.deleteExecution(id);
    } catch (err) {
      console.warn(`[controller] ${id}: not created, and the log lines of its first step could not be removed (${reasonOf(err)})`);
    }
  }

  /** An admission stored as it came (CREATED): its ADDED event starts it as any other new execution. */
  private async createPlain(a: Admission): Promise<void> {
    this.admitted.delete(a.execution.id);
    try { a.resolve((await this.stores.executions.create(a.execution)).execution); } catch (err) { a.reject(err); }
  }

  /** Whether this controller (not the execution's owner) may decide the start of this waiting execution (if its flow has a concurrency limit). */
  private mayStart(exec: Execution | ExecutionSummary): boolean {
    const state = typeof exec.state === 'string' ? exec.state : exec.state.current;
    return WAITING.has(state) && Boolean(exec.flowRevision) && !this.owns(exec.id) && this.startsFlow(exec.namespace, exec.flowId);
  }

  /** The start of an execution owned elsewhere whose flow's starts are decided here (concurrency limits hold across replicas). */
  private async startForFlow(id: string): Promise<void> {
    this.cache.delete(id);
    const e = (await this.stores.executions.get(id))?.execution;
    if (!e || !WAITING.has(e.state.current) || !e.flowRevision || !this.startsFlow(e.namespace, e.flowId)) return;
    if (!(await this.flow(e)).concurrency) return;
    await this.startViaFlowQueue(id);
  }

  /** An execution of a partition this controller lost (or never held): forget what it kept, its new owner acts. */
  private disown(id: string): void {
    this.awaitingStart.delete(id);
    this.cache.delete(id);
    this.mayHaveFiles.delete(id);
    this.timers.clear(id);
    this.resync.forget(id);
  }

  /** Runs the engine with the step renderer: `kv()`/`read()` values fetched beforehand, the injected clock. */
  private decide(flow: Flow, exec: Execution, events: EngineEvent[], inPlace = false): Promise<StepResult> {
    const now = this.clock();
    const deps = { now, newId, random: this.opts.random ?? Math.random, renderer: this.reads.renderer, openSecret: this.stores.secrets?.openInput, limits: this.limits };
    // kv() and read() of flowable properties reach what this execution may reach (operator/tenancy).
    const kv = lazy(() => scopedKv(this.stores.kv, exec.namespace, this.grants));
    const storage = lazy(() => scopedStorage(this.stores.storage, fileCallerOf(exec, flow), this.grants));
    const views = { get kv() { return kv(); }, get storage() { return storage(); } };
    // In place (a record an earlier step of this batch made, engine.ts stepOwned): the step must not run twice.
    return inPlace ? this.reads.run(now, () => stepOwned(flow, exec, events, deps), views, { once: true })
      : this.reads.run(now, () => stepMany(flow, exec, events, deps), views);
  }

  /** `decide`, then the attempts of pure tasks it launches run at once and their outcomes join the step (inline.ts). */
  private async decideInline(flow: Flow, exec: Execution, events: EngineEvent[]): Promise<StepResult> {
    const first = await this.decide(flow, exec, events);
    const runInline = this.launcher.runInline?.bind(this.launcher);
    // A wide record (a fan-out's running children) is not stepped in place: each inline round would cost the record.
    if (!runInline || !stepsInPlace(first.execution)) return first;
    // Every later round steps a record an earlier round made: in place, when its steps never fetch values.
    const inPlace = !mayReadInStep(flow);
    try {
      const last = await stepInline(flow, first, runInline, (e, evs) => this.decide(flow, e, evs, inPlace), this.opts.inlineBudget);
      handBackUnchanged(last.execution); // runs the in-place rounds left as written are not written again
      return last;
    } catch (err) {
      if (!(err instanceof StepReadsMissed)) throw err;
      // It did fetch (a name built at run time): the batch again from its stored record, on copies (rare; its inline
      // attempts run again, their results are recorded once).
      readsInStep(flow);
      return this.decideInline(flow, exec, events);
    }
  }

  private async write(exec: Execution, version: number, acks: number[]): Promise<StoredExecution> {
    try {
      const saved = await this.stores.executions.update(exec, version, acks);
      if (isTerminal(exec.state.current)) this.cache.delete(exec.id); else this.cache.set(exec.id, saved);
      return saved;
    } catch (err) {
      this.cache.delete(exec.id);
      throw err;
    }
  }

  /** Attempts whose outcome the record now holds (or no longer waits for): the launcher may forget them. */
  private settled(exec: Execution, events: EngineEvent[]): void {
    for (const e of events) {
      if (e.type !== 'task-result') continue;
      const att = runById(exec, e.taskRunId)?.attempts[e.attempt - 1];
      if (!att || isTerminal(att.state.current) || isTerminal(exec.state.current)) this.launcher.recorded(e.taskRunId, e.attempt);
    }
  }

  /** A permanent error: the execution ends FAILED with the reason, its running attempts are stopped. */
  private async failNow(id: string, reason: string, acks: number[]): Promise<void> {
    this.cache.delete(id);
    const stored = await this.stores.executions.get(id);
    if (!stored) return;
    if (isTerminal(stored.execution.state.current)) {
      if (acks.length) await this.write(stored.execution, stored.resourceVersion, acks);
      return;
    }
    const { execution, stopped } = failedRecord(stored.execution, reason, this.clock());
    await this.write(execution, stored.resourceVersion, acks);
    for (const s of stopped) this.launcher.kill(s.taskRunId, s.attempt);
    this.log(execution, 'ERROR', `Execution failed: ${reason}`);
    await this.onEnded(execution);
  }

  /** Start decisions of one flow are serialized so that concurrency limits hold under any load. */
  private startViaFlowQueue(id: string): Promise<void> {
    return new Promise((resolveStart, reject) => {
      void (async () => {
        const stored = await this.load(id);
        if (!stored) return resolveStart();
        // Without a concurrency limit there is nothing to serialize: started at once.
        const flow = stored.execution.flowRevision ? await this.flow(stored.execution) : undefined;
        if (flow && !flow.concurrency) {
          await this.startNow(id, flow);
          return resolveStart();
        }
        const key = `${stored.execution.namespace}/${stored.execution.flowId}`;
        this.flowQueue.push(key, async () => {
          try { await this.startNow(id); resolveStart(); } catch (e) { reject(e); }
        });
      })().catch(reject);
    });
  }

  /** `known`: the execution's flow as this batch resolved it already. */
  private async startNow(id: string, known?: Flow): Promise<void> {
    const stored = await this.load(id);
    if (!stored) return;
    let exec0 = stored.execution;
    if (exec0.state.current !== 'CREATED' && exec0.state.current !== 'QUEUED') return;
    if (!exec0.flowRevision) {
      // Created without a revision (kubectl): bind it to the latest one, resolving its inputs there.
      const rec = await this.stores.flows.get(exec0.namespace, exec0.flowId);
      let resolved: { inputs: Record<string, unknown> } | { error: string };
      // FILE inputs of an Execution created directly (kubectl): execution files of its namespace only.
      const fileUri = (uri: string) => fileReadDenied({ namespace: exec0.namespace, related: () => [] }, uri, this.grants);
      try { resolved = { inputs: rec ? resolveInputs(rec.flow.inputs, exec0.inputs ?? {}, { fileUri }) : {} }; } catch (err) { resolved = { error: reasonOf(err) }; }
      exec0 = bindToRevision(exec0, rec && { ...rec.flow, revision: rec.revision }, resolved, this.clock());
      await this.write(exec0, stored.resourceVersion, []);
      if (isTerminal(exec0.state.current)) { await this.onEnded(exec0); return; }
      return this.startNow(id);
    }
    const flow = known ?? await this.flow(exec0);
    // Another controller decides the starts of this flow (partitioned operators): it starts or queues this one.
    if (flow.concurrency && !this.startsFlow(exec0.namespace, exec0.flowId)) {
      if (!this.owns(id)) return;
      this.awaitingStart.add(id);
      // It may have been started while this decision was on its way (the watch event came before the line above).
      const now = (await this.stores.executions.get(id))?.execution.state.current;
      if (now && !WAITING.has(now) && this.awaitingStart.delete(id)) this.queue.push(id, RESYNC);
      return;
    }
    const running = flow.concurrency ? await this.stores.executions.count(exec0.namespace, exec0.flowId, SLOT_STATES) : 0;
    const start: EngineEvent[] = [{ type: 'start', runningCount: running }];
    // Started for its flow's limit only (not owned here): its owner runs its tasks.
    const r = this.owns(id) ? await this.decideInline(flow, exec0, start) : await this.decide(flow, exec0, start);
    if (this.owns(id)) this.prepare(flow, r.execution, r.actions);
    if (changed(exec0, r.execution, false)) await this.write(r.execution, stored.resourceVersion, []);
    if (!this.owns(id)) {
      // Started for its flow's limit only: its owner carries out the rest from the record (launches, children, timers).
      for (const a of r.actions) if (a.type === 'log') this.log(r.execution, a.level, a.message, a.taskRunId);
      return;
    }
    await this.apply(flow, r.execution, r.actions);
    await this.reconcile(flow, r.execution, false);
  }

  /** The attempts a step starts, told to the launcher before the record is written (it may get ready meanwhile). */
  private prepare(flow: Flow, exec: Execution, actions: Action[]): void {
    if (!this.launcher.prepare) return;
    const attempts: { run: TaskRun; attempt: number }[] = [];
    for (const a of actions) {
      const run = a.type === 'launch' ? runById(exec, a.taskRunId) : undefined;
      if (run) attempts.push({ run, attempt: (a as Extract<Action, { type: 'launch' }>).attempt });
    }
    if (attempts.length) this.launcher.prepare(flow, exec, attempts);
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
          if (run) { this.mayHaveFiles.add(exec.id); this.launcher.launch(flow, exec, run, a.attempt); }
          break;
        }
        case 'kill-task': this.launcher.kill(a.taskRunId, a.attempt); break;
        case 'create-subflow': await this.effect(exec, 'Creating the subflow execution', () => this.children.create(exec, a.request)); break;
        case 'kill-execution': await this.effect(exec, `Killing execution ${a.executionId}`, () => this.stores.executions.addCommand(a.executionId, { type: 'kill' })); break;
        case 'create-execution': await this.effect(exec, 'Creating the retry execution', () => this.stores.executions.create(a.execution)); break;
        case 'log': this.log(exec, a.level, a.message, a.taskRunId); break;
        case 'ended': await this.onEnded(exec, flow); break;
        case 'continue': this.queue.push(exec.id, { event: { type: 'tick' } }); break;
      }
    }
    if (isTerminal(exec.state.current) && !actions.some((a) => a.type === 'ended')) await this.onEnded(exec, flow);
  }

  /**
   * An effect of a step already recorded (its events are consumed, so it cannot be replayed): transient failures are
   * retried here with a capped backoff; a permanent one is logged on the execution.
   */
  private async effect(exec: Execution, what: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await retryTransient(fn, {
        baseMs: 50, maxMs: 10_000, signal: this.stopping.signal,
        onRetry: (err, n) => { if (n === 0 || n % 10 === 0) console.warn(`[controller] ${exec.id}: ${what}: ${reasonOf(err)} (try ${n + 1}, retrying)`); },
      });
    } catch (err) {
      if (this.stopped) return;
      const message = `${what} failed: ${reasonOf(err)}`;
      console.error(`[controller] ${exec.id}: ${message}`);
      this.log(exec, 'ERROR', message);
    }
  }

  private log(exec: Execution, level: LogLevel, message: string, taskRunId?: string): void {
    this.stores.logs.append([{
      executionId: exec.id, namespace: exec.namespace, flowId: exec.flowId, level, message, timestamp: this.clock().toISOString(),
      ...(taskRunId ? { taskRunId, taskId: runById(exec, taskRunId)?.taskId } : {}),
    }]);
  }

  /**
   * Arms timers and (on recovery, resync or retry) relaunches attempts and re-checks child executions implied by the
   * record. `since`: the record it was stepped from, whose timers are armed: only the runs that changed are looked at.
   */
  private async reconcile(flow: Flow, exec: Execution, recovering: boolean, since?: Execution): Promise<void> {
    const work = pendingWork(flow, exec, recovering ? undefined : since);
    for (const t of work.timers) {
      const event = t.event.type === 'start-due' ? { type: 'start-due' } : t.event;
      this.timers.arm(exec.id, t.at, event);
    }
    if (!recovering) return;
    for (const w of work.running) {
      const run = runById(exec, w.taskRunId)!;
      if (w.killing) this.queue.push(exec.id, { event: { type: 'task-result', taskRunId: w.taskRunId, attempt: w.attempt, outcome: { state: 'KILLED' } } });
      else { this.mayHaveFiles.add(exec.id); this.launcher.launch(flow, exec, run, w.attempt); }
    }
    for (const run of work.subflows) await this.effect(exec, `Checking the child execution of '${run.taskId}'`, () => this.children.check(exec, run));
  }

  /** `known`: the execution's flow as this batch resolved it already. */
  private async onEnded(exec: Execution, known?: Flow): Promise<void> {
    this.timers.clear(exec.id);
    this.cache.delete(exec.id);
    this.resync.forget(exec.id);
    this.launcher.forgetExecution(exec.id);
    try {
      if (this.mayHaveFiles.delete(exec.id)) rmSync(join(this.workRoot, exec.id), { recursive: true, force: true });
    } catch (err) {
      console.error(`[controller] ${exec.id}: could not remove its working directory: ${reasonOf(err)}`);
    }
    this.children.ended(exec);
    await this.effect(exec, 'Starting the next queued execution', async () => {
      const flow = known ?? await this.flow(exec).catch((err: unknown) => { if (isTransient(err)) throw err; return undefined; });
      if (flow?.concurrency) await this.dequeue(exec.namespace, exec.flowId);
    });
  }

  /** A slot freed: start the oldest QUEUED execution of the flow (its owner does: others drop the push). */
  private async dequeue(namespace: string, flowId: string): Promise<void> {
    const page = await this.stores.executions.search({ namespace, flowId, state: ['QUEUED'], limit: 1000 });
    const oldest = page.results.filter((e) => e.namespace === namespace).sort((a, b) => a.state.startDate.localeCompare(b.state.startDate))[0];
    if (oldest) this.queue.push(oldest.id, { event: { type: 'start-due' } });
  }
}

/**
 * Whether a step changed the record. The engine copies the record whenever it takes an event; without a real event
 * (a resync's tick, a start that stays QUEUED) the copy is compared, so an idle execution costs no write.
 */
function changed(before: Execution, after: Execution, realEvents: boolean): boolean {
  if (after === before) return false;
  // A start that started it, or a tick that added runs: no need to compare the whole records.
  if (realEvents || after.state.current !== before.state.current || after.taskRunList.length !== before.taskRunList.length) return true;
  return !isDeepStrictEqual(before, after);
}

function stoppingError(): TransientError {
  return new TransientError('The controller is stopping: the execution was not created; retry later');
}

function acksOf(items: QueueItem[]): number[] {
  return items.flatMap((i) => ('ack' in i && i.ack !== undefined ? [i.ack] : 'acks' in i ? i.acks : []));
}

export async function startController(stores: Stores, opts: ControllerOptions = {}): Promise<Controller> {
  const c = new Controller(stores, opts);
  await c.start();
  return c;
}
