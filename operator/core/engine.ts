// The engine: step(flow, execution, event) → new execution + actions. Pure: time, ids, randomness and rendering are
// injected; no I/O. Event handlers update the record, then `advance` resolves what runs next until nothing changes.
import type { Action, EngineDeps, EngineEvent, StepContext } from './engine-types.js';
import { kindOf, taskRunOverflow } from './budget.js';
import { FLOWABLE, FOR_EACH_ITEM_BATCH, indexFlow, isFlowableType } from './flow-index.js';
import { finishRoot, resolveRoot } from './finish.js';
import { exitExecution, killExecution } from './kill.js';
import { RESOLVERS } from './flowables.js';
import { restartFailed, restartFlowable } from './restart.js';
import { childrenOf, completeRun, createRun, endAttempt, failAttempt, infraFailAttempt, log, retryAfter, retryDelayOf, roomToCreate, startAttempt, successState, taskOf } from './runs.js';
import { setRunOutputs } from './context.js';
import { copyData, freezeData, sameData } from './keyed.js';
import { adoptIndex, frozenGoingCount, frozenGoingIn, indexRuns, knownIndex, replaceRun, snapshotIndex, type RunIndex } from './run-index.js';
import { copyShared, ownShared, stepIndex, type SharedRuns } from './shared-runs.js';
import { type ChildSlot, childSlots, endSlot, endSubflowAttempt, slotFor } from './subflow.js';
import { newState, transition } from './state.js';
import { mergeLabels, metadataOf } from './execution.js';
import type { Execution, Flow, TaskRun, TaskRunState } from './types.js';
import { isTerminal } from './types.js';

export interface StepResult { execution: Execution; actions: Action[] }

type Handler<T extends EngineEvent['type']> = (ctx: StepContext, event: Extract<EngineEvent, { type: T }>) => void;

export function step(flow: Flow, execution: Execution, event: EngineEvent, deps: EngineDeps): StepResult {
  return stepMany(flow, execution, [event], deps);
}

/**
 * Applies several events, then resolves what runs next once: the same outcome as one `step` per event (resolution
 * is level-based), with one copy of the record instead of one per event (a 1,000-branch loop reports 1,000 results).
 */
/** Events that act on an ended execution too (the others are late news then, and dropped). */
export const actsOnEnded = (e: EngineEvent): boolean => e.type === 'restart' || e.type === 'set-labels' || e.type === 'change-state';

export function stepMany(flow: Flow, execution: Execution, events: EngineEvent[], deps: EngineDeps): StepResult {
  const live = events.filter((e) => !isTerminal(execution.state.current) || actsOnEnded(e));
  if (live.length === 0) return { execution, actions: [] };
  if (live.every(sharesRuns)) {
    // Results only: the runs still going are shared and copied on first change (shared-runs.ts). A change to a shared
    // run elsewhere throws (it is frozen) and nothing of the given record was changed: stepped again the usual way.
    try {
      const { exec, copied, shared, index } = copyShared(execution, flow);
      const result = stepOn(flow, exec, index, events, deps, shared);
      settleRuns(execution, exec, [...copied, ...shared.owned]);
      return result;
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
    }
  }
  const full = live.some(touchesEnded);
  const { exec, copied, index } = copyRecord(execution, full);
  const result = stepOn(flow, exec, index, events, deps);
  settleRuns(execution, exec, full ? undefined : copied);
  return result;
}

/**
 * Events a step takes on shared runs (copy on first change): task results, which change their own run only, and a
 * tick (a `continue`), which changes flowables only (copied by copyShared).
 */
const sharesRuns = (e: EngineEvent): boolean => e.type === 'task-result' || e.type === 'tick';

/** Handed-back runs up to which `stepOwned` thaws them in place; past it, it steps on shared runs (a fan-out's). */
const THAW_MAX = 64;

/**
 * `stepMany` on a record the caller hands over: one an earlier step returned, of which it keeps no other use (not
 * written yet). It is changed in place instead of copied (the step's index of its runs goes on too). The in-process
 * fast path steps once per task of a chain (operator/controller/inline.ts): a copy of the growing record each time
 * would cost O(n²). Frozen runs are never changed (they may be the store's written versions): the record's runs still
 * going that its step handed back frozen (unchanged, see `settleRuns`) are swapped for copies first (once: later rounds
 * find them changeable); `handBackUnchanged` hands back those left unchanged once the rounds are over. Ended frozen
 * runs change only under `touchesEnded` events, which step a copy (as does a record no step made). A record with many
 * runs handed back (a fan-out's running children) is stepped by `stepMany` on shared runs instead of thawing them all.
 */
export function stepOwned(flow: Flow, execution: Execution, events: EngineEvent[], deps: EngineDeps): StepResult {
  if (!events.some((e) => !isTerminal(execution.state.current) || actsOnEnded(e))) return { execution, actions: [] };
  const shared = handedBack.get(execution);
  if (shared === undefined || events.some(touchesEnded)) return stepMany(flow, execution, events, deps);
  const runs = snapshotIndex(execution);
  if (shared) {
    const positions = frozenGoing(execution, THAW_MAX);
    if (!positions) return stepMany(flow, execution, events, deps);
    thawed.set(execution, [...(thawed.get(execution) ?? []), ...thawRuns(execution, runs, positions)]);
    handedBack.set(execution, false);
  }
  return stepOn(flow, execution, runs, events, deps);
}

/**
 * Whether `stepOwned` would step this record in place: false when a step handed back more than THAW_MAX runs still
 * going (a fan-out's running children), for which it steps a copy (O(record) per round). The in-process fast path
 * (operator/controller/inline.ts) does not run attempts inline on such a record: their results come as events.
 */
export function stepsInPlace(exec: Execution): boolean {
  if (handedBack.get(exec) !== true) return true;
  const known = knownIndex(exec);
  return known ? frozenGoingCount(known, exec.taskRunList) <= THAW_MAX : frozenGoing(exec, THAW_MAX) !== undefined;
}

/**
 * Positions of the frozen runs still going (those a step handed back), or undefined when there are more than `max`:
 * from the counts of the record's index when it has one (run-index.ts frozenGoingIn), else a walk.
 */
function frozenGoing(exec: Execution, max: number): number[] | undefined {
  const known = knownIndex(exec);
  if (known) return frozenGoingIn(known, exec.taskRunList, max);
  const out: number[] = [];
  for (let i = 0; i < exec.taskRunList.length; i++) {
    const run = exec.taskRunList[i]!;
    if (!Object.isFrozen(run) || isTerminal(run.state.current)) continue;
    if (out.push(i) > max) return undefined;
  }
  return out;
}

/**
 * After the in-place rounds of a batch (stepOwned), before the record is written: the runs they thawed and left as they
 * were are replaced by the original (written) objects again, so that the store does not write them. One comparison per
 * thawed run per batch, not per round (a fan-out of 10,000 running children would pay 10,000 per round).
 */
export function handBackUnchanged(exec: Execution): void {
  const list = thawed.get(exec);
  if (!list) return;
  thawed.delete(exec);
  const runs = exec.taskRunList;
  const index = snapshotIndex(exec);
  let again = handedBack.get(exec) === true;
  for (const { at, original } of list) {
    if (runs[at]?.id === original.id && sameData(runs[at], original)) { runs[at] = original; replaceRun(index, original); again = true; }
  }
  handedBack.set(exec, again);
}

function stepOn(flow: Flow, exec: Execution, runs: RunIndex, events: EngineEvent[], deps: EngineDeps, shared?: SharedRuns): StepResult {
  const ctx: StepContext = { flow, exec, deps, actions: [], runs, index: indexFlow(flow), shared, created: 0, more: false };
  for (const event of events) {
    if (isTerminal(exec.state.current) && !actsOnEnded(event)) continue;
    (HANDLERS[event.type] as Handler<typeof event.type>)(ctx, event as never);
    if (event.type === 'restart' || event.type === 'start') advance(ctx);
  }
  advance(ctx);
  if (ctx.more && ACTIVE.has(exec.state.current)) ctx.actions.push({ type: 'continue' });
  keepFlowables(ctx);
  adoptIndex(exec, ctx.runs);
  return { execution: exec, actions: ctx.actions };
}

/**
 * After a step: a copied run the step left as it was is replaced by the original, in the run list and the index (so
 * the store sees an unchanged run by identity and does not write it again), and ended runs are frozen (nothing changes
 * them but `touchesEnded` events): the next steps share them. Only the runs copied or created are looked at, unless
 * the whole record was copied (`copied` undefined). Records whether runs still going were handed back frozen (the
 * step shared them, or swapped them back), for `stepOwned`: from the index's counts (run-index.ts), not a walk.
 */
function settleRuns(before: Execution, exec: Execution, copied: number[] | undefined): void {
  const runs = exec.taskRunList;
  const index = snapshotIndex(exec);
  if (!copied) {
    handedBack.set(exec, false);
    for (const run of runs) if (isTerminal(run.state.current)) freezeData(run);
    return;
  }
  if (runs.length < before.taskRunList.length) { handedBack.set(exec, true); return; } // cannot happen without a full copy
  for (const i of copied) {
    const original = before.taskRunList[i]!;
    if (Object.isFrozen(original) && runs[i]!.id === original.id && sameData(runs[i], original)) {
      runs[i] = original;
      replaceRun(index, original);
    } else if (isTerminal(runs[i]!.state.current)) freezeData(runs[i]);
  }
  for (let i = before.taskRunList.length; i < runs.length; i++) if (isTerminal(runs[i]!.state.current)) freezeData(runs[i]);
  // Runs still going shared all along (copyShared) or swapped back: stepOwned looks for them (frozenGoing).
  handedBack.set(exec, frozenGoingCount(index, runs) > 0);
}

/**
 * Records a step made (stepMany, stepOwned), and whether it may hold runs still going that it handed back frozen and
 * unchanged (the objects of the record it started from): `stepOwned` steps such a record in place after swapping those
 * for copies (`thawRuns`). A record not in here is stepped on a copy.
 */
const handedBack = new WeakMap<Execution, boolean>();
/** Runs `stepOwned` thawed in a record (their positions and written originals), for `handBackUnchanged`. */
const thawed = new WeakMap<Execution, { at: number; original: TaskRun }[]>();

/** Puts changeable copies of the frozen runs at `positions` into the run list and the index; returns the originals. */
function thawRuns(exec: Execution, index: RunIndex, positions: readonly number[]): { at: number; original: TaskRun }[] {
  const thawed: { at: number; original: TaskRun }[] = [];
  for (const at of positions) {
    const original = exec.taskRunList[at];
    if (!original || !Object.isFrozen(original) || isTerminal(original.state.current)) continue;
    const copy = copyData(original, true);
    exec.taskRunList[at] = copy;
    replaceRun(index, copy);
    thawed.push({ at, original });
  }
  return thawed;
}

/** Events that may change runs that have ended (a restart, a retry), so their step copies the whole record. */
const touchesEnded = (e: EngineEvent): boolean =>
  e.type === 'restart' || (e.type === 'timer' && (e.kind === 'flow-retry' || e.kind === 'retry'));

/**
 * The step's own copy of the record: ended runs that are frozen (written, or ended by an earlier step) are shared with
 * the record given, since nothing changes them; the rest is copied. So a step costs the runs still going, not the whole
 * record (a sequential loop of n iterations: linear, not quadratic), and the store writes only the runs that differ by
 * identity. `full`: everything is copied (and indexed afresh).
 */
function copyRecord(execution: Execution, full: boolean): { exec: Execution; copied: number[]; index: RunIndex } {
  if (full) { const exec = copyData(execution); return { exec, copied: [], index: indexRuns(exec.taskRunList) }; }
  const { taskRunList, ...header } = execution;
  const index = stepIndex(execution);
  const runs = taskRunList.slice();
  const copied: number[] = [];
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    if (Object.isFrozen(run) && isTerminal(run.state.current)) continue;
    runs[i] = copyData(run, true);
    replaceRun(index, runs[i]!);
    copied.push(i);
  }
  return { exec: { ...copyData(header), taskRunList: runs }, copied, index };
}

const ACTIVE = new Set(['RUNNING', 'PAUSED', 'KILLING']);

const HANDLERS: { [K in EngineEvent['type']]: Handler<K> } = {
  start(ctx, e) {
    const { exec, flow, deps } = ctx;
    if (exec.state.current !== 'CREATED' && exec.state.current !== 'QUEUED') return;
    if (exec.scheduleDate && Date.parse(exec.scheduleDate) > deps.now.getTime()) return;
    delete exec.scheduleDate;
    const limit = flow.concurrency?.limit;
    if (limit !== undefined && e.runningCount >= limit) {
      const behavior = flow.concurrency?.behavior ?? 'QUEUE';
      if (behavior === 'QUEUE') { transition(exec.state, 'QUEUED', deps.now); return; }
      exec.error = `Concurrency limit of ${limit} reached (behavior ${behavior})`;
      log(ctx, 'WARN', exec.error);
      transition(exec.state, behavior === 'CANCEL' ? 'CANCELLED' : 'FAILED', deps.now);
      ctx.actions.push({ type: 'ended', state: exec.state.current });
      return;
    }
    transition(exec.state, 'RUNNING', deps.now);
  },

  'set-labels'(ctx, e) {
    ctx.exec.labels = e.labels.map((l) => ({ key: l.key, value: l.value }));
  },

  'change-state'(ctx, e) {
    if (isTerminal(ctx.exec.state.current) && isTerminal(e.state)) transition(ctx.exec.state, e.state, ctx.deps.now);
  },

  'task-result'(ctx, e) {
    const found = ctx.runs.byId.get(e.taskRunId);
    if (!found || isTerminal(found.state.current)) return;
    const run = ownShared(ctx, found);
    const { outcome } = e;
    const attemptState = outcome.state === 'KILLED' || run.state.current === 'KILLING' ? 'KILLED' : outcome.state;
    if (!endAttempt(ctx, run, e.attempt, attemptState)) return;
    const att = run.attempts[e.attempt - 1]!;
    if (outcome.metrics?.length) att.metrics = outcome.metrics;
    if (outcome.executionLabels?.length) ctx.exec.labels = mergeLabels(ctx.exec.labels, outcome.executionLabels);
    if (outcome.outputs) setRunOutputs(ctx.runs, run, outcome.outputs);
    if (attemptState === 'KILLED') { completeRun(ctx, run, 'KILLED'); return; }
    if (attemptState === 'FAILED' && outcome.infrastructure === true) { att.infrastructure = true; infraFailAttempt(ctx, run, outcome.error ?? 'The task runner failed'); return; }
    if (attemptState === 'FAILED') { failAttempt(ctx, run, outcome.error ?? 'Task failed'); return; }
    completeRun(ctx, run, successState(ctx, run, attemptState === 'WARNING' ? 'WARNING' : 'SUCCESS'));
  },

  timer(ctx, e) {
    const { exec, deps } = ctx;
    if (e.kind === 'flow-retry') { onFlowRetryTimer(ctx); return; }
    const run = e.taskRunId ? ctx.runs.byId.get(e.taskRunId) : undefined;
    if (!run || isTerminal(run.state.current)) return;
    if (e.kind === 'retry') {
      if (run.state.current !== 'RETRYING' || !run.nextAttemptDate || Date.parse(run.nextAttemptDate) > deps.now.getTime()) return;
      if (exec.state.current === 'KILLING') { completeRun(ctx, run, 'KILLED'); return; }
      // A runnable keeps the error of its last attempt while the next one runs; a flowable starts afresh.
      if (isFlowableType(taskOf(ctx, run).type)) restartFlowable(ctx, run, 'retry'); else startAttempt(ctx, run);
    } else if (e.kind === 'timeout') {
      if (run.state.current !== 'RUNNING' || e.attempt !== run.attempts.length) return;
      const task = taskOf(ctx, run);
      if (!endAttempt(ctx, run, e.attempt, 'FAILED')) return;
      ctx.actions.push({ type: 'kill-task', taskRunId: run.id, attempt: e.attempt });
      failAttempt(ctx, run, `Task '${run.taskId}' timed out after ${task.timeout}`);
    } else if (e.kind === 'loop') {
      // LoopUntil's interval elapsed: its resolver (run by advance) compares the clock with its resumeDate.
    } else if (e.kind === 'pause') {
      const fs = run.flowableState;
      if (fs?.status !== 'PAUSED' || !run.resumeDate || Date.parse(run.resumeDate) > deps.now.getTime()) return;
      fs.status = fs.onExpiry ?? 'EXPIRED';
    }
  },

  kill(ctx) {
    killExecution(ctx);
  },

  resume(ctx, e) {
    const { exec, deps } = ctx;
    if (exec.state.current !== 'PAUSED') return;
    for (const run of exec.taskRunList) {
      if (run.flowableState?.status !== 'PAUSED') continue;
      run.flowableState.status = 'RESUMED';
      if (e.inputs && Object.keys(e.inputs).length) run.flowableState.onResume = e.inputs;
      log(ctx, 'INFO', 'Resumed', run);
    }
    transition(exec.state, 'RUNNING', deps.now);
  },

  restart(ctx) {
    const { exec, deps } = ctx;
    if (exec.state.current !== 'FAILED' && exec.state.current !== 'KILLED') return;
    transition(exec.state, 'RESTARTED', deps.now);
    restartFailed(ctx, 'restart');
    delete exec.error;
    delete exec.outputs;
    transition(exec.state, 'RUNNING', deps.now);
  },

  'subflow-created'(ctx, e) {
    const run = ctx.runs.byId.get(e.taskRunId);
    const slot = run && run.flowableState ? slotFor(run, e.executionId, e.iteration) : undefined;
    if (slot) slot.created = true;
  },

  'subflow-error'(ctx, e) {
    const run = ctx.runs.byId.get(e.taskRunId);
    if (!run || isTerminal(run.state.current)) return;
    if (e.iteration === undefined) (run.flowableState ??= {}).error = e.error;
    else {
      const slot = (run.flowableState?.batches as ChildSlot[] | undefined)?.[e.iteration];
      if (slot?.requested && !slot.ended) slot.error = e.error;
    }
  },

  'subflow-ended'(ctx, e) {
    const run = ctx.runs.byId.get(e.taskRunId);
    if (!run || isTerminal(run.state.current)) return;
    const slot = slotFor(run, e.child.id, e.iteration);
    if (slot) endSlot(slot, e.child);
  },

  tick() { /* advance only */ },
};

function onFlowRetryTimer(ctx: StepContext): void {
  const { exec, deps, flow } = ctx;
  if (exec.state.current !== 'RETRYING' || !exec.scheduleDate || Date.parse(exec.scheduleDate) > deps.now.getTime()) return;
  delete exec.scheduleDate;
  if ((flow.retry?.behavior ?? 'RETRY_FAILED_TASK') === 'RETRY_FAILED_TASK') {
    const meta = metadataOf(exec);
    exec.metadata = { ...meta, attemptNumber: meta.attemptNumber + 1 };
    restartFailed(ctx, 'retry');
    transition(exec.state, 'RUNNING', deps.now);
  }
}

/**
 * Resolves flowables and the root until nothing changes; keeps PAUSED/RUNNING in line with waiting Pause tasks. The
 * flowable runs still going are found once per call, not per pass (a fan-out's 100,000 running children are runnables:
 * one look each); runs a pass creates are looked at from the next pass, as before.
 */
export function advance(ctx: StepContext): void {
  const { exec, deps } = ctx;
  const flowables = flowableRuns(ctx);
  for (let pass = 0; pass < 10_000; pass++) {
    if (!ACTIVE.has(exec.state.current)) return;
    let changed = false;
    const runs = flowables();
    for (let k = runs.length - 1; k >= 0; k--) {
      const run = exec.taskRunList[runs[k]!]!;
      // A RETRYING flowable (Fail, Subflow) waits for its retry timer.
      if (isTerminal(run.state.current) || run.state.current === 'RETRYING') continue;
      if (resolveFlowable(ctx, run, taskOf(ctx, run))) changed = true;
    }
    if (!ACTIVE.has(exec.state.current)) return; // an Exit ended the execution
    if (exec.state.current === 'KILLING') {
      if (exec.taskRunList.every((r) => isTerminal(r.state.current))) {
        transition(exec.state, 'KILLED', deps.now);
        ctx.actions.push({ type: 'ended', state: 'KILLED' });
        return;
      }
      if (!changed) return;
      continue;
    }
    const root = resolveRoot(ctx);
    if (root.created) changed = true;
    if (root.state) {
      if (finishRoot(ctx, root.state)) return;
      changed = true; // its afterExecution tasks and listeners start
    }
    if (!changed) break;
  }
  const waiting = flowables().some((at) => { const r = exec.taskRunList[at]!; return r.flowableState?.status === 'PAUSED' && !isTerminal(r.state.current); });
  if (waiting && exec.state.current === 'RUNNING') transition(exec.state, 'PAUSED', deps.now);
  if (!waiting && exec.state.current === 'PAUSED') transition(exec.state, 'RUNNING', deps.now);
}

/**
 * Positions of the flowable runs of the record that were going when first seen, in list order: each call adds the runs
 * appended since (a new run list, after a restart, is looked at afresh). Runs that ended since are still listed.
 * A step starts from the list the previous step left in the index and looks at the runs appended since only, not at
 * the whole record: only the steps that build a new index (a full copy, a restart), which holds no list, bring an
 * ended run back; the others (results and ticks on shared runs, in-place rounds, kills, resumes, timers) only append
 * runs or end them. An in-place round carried none before: each round of a sequential loop walked every run.
 */
function flowableRuns(ctx: StepContext): () => readonly number[] {
  const carried = ctx.runs.flowables?.flow === ctx.flow ? ctx.runs.flowables : undefined;
  let list: TaskRun[] | undefined = carried && ctx.exec.taskRunList;
  let seen = carried?.seen ?? 0;
  let positions: number[] = carried ? carried.positions.slice() : [];
  return () => {
    const runs = ctx.exec.taskRunList;
    if (runs !== list) { list = runs; seen = 0; positions = []; }
    for (; seen < runs.length; seen++) {
      const run = runs[seen]!;
      if (!isTerminal(run.state.current) && isFlowableType(taskOf(ctx, run).type)) positions.push(seen);
    }
    ctx.runs.flowables = { flow: ctx.flow, seen, positions };
    return positions;
  };
}

/** The flowable list a step leaves in its index for the next (flowableRuns), without the ended runs. */
function keepFlowables(ctx: StepContext): void {
  const kept = ctx.runs.flowables;
  if (!kept) return;
  const runs = ctx.exec.taskRunList;
  ctx.runs.flowables = { flow: kept.flow, seen: kept.seen, positions: kept.positions.filter((at) => !isTerminal(runs[at]!.state.current)) };
}

function resolveFlowable(ctx: StepContext, run: TaskRun, task: ReturnType<typeof taskOf>): boolean {
  if (run.state.current === 'KILLING') {
    if (childrenOf(ctx, run.id).every((c) => isTerminal(c.state.current))) { completeRun(ctx, run, 'KILLED'); return true; }
    return false;
  }
  const refused = run.flowableState?.refused;
  if (typeof refused === 'string') return failWhenChildrenEnd(ctx, run, refused);
  // Fail is evaluated here, yet is a task with attempts (as Kestra's runnable Fail): one per evaluation.
  if (task.type === FLOWABLE.Fail && !liveAttempt(run)) run.attempts.push({ state: newState<TaskRunState>('RUNNING', ctx.deps.now) });
  let res;
  try {
    res = RESOLVERS[task.type]!(ctx, run, task);
  } catch (err) {
    completeRun(ctx, run, 'FAILED', { error: `${run.taskId}: ${(err as Error).message}` });
    endSubflowAttempt(ctx, run);
    return true;
  }
  if (res.state === 'FAILED' && SELF_ATTEMPTED.has(task.type) && retryOwnAttempt(ctx, run, res.error ?? 'Task failed')) return true;
  if ((res.state === 'SUCCESS' || res.state === 'WARNING') && SELF_ATTEMPTED.has(task.type)) res = { ...res, state: successState(ctx, run, res.state) };
  if (res.create.length) {
    const over = taskRunOverflow(ctx, res.create.length, () => `${kindOf(task.type)} '${run.taskId}' cannot create ${res.create.length} more task run(s)`);
    // None of them is created; the flowable fails once the children it already has have ended.
    if (over) { (run.flowableState ??= {}).refused = over.message; return failWhenChildrenEnd(ctx, run, over.message); }
  }
  if (res.exit) { exitExecution(ctx, run, res.exit); return true; }
  // At most RUNS_PER_STEP new runs per step: the rest are created by the next steps (a `continue` action asks for one).
  const room = roomToCreate(ctx);
  const create = res.create.length > room ? res.create.slice(0, room) : res.create;
  if (create.length < res.create.length) ctx.more = true;
  for (const spec of create) createRun(ctx, spec, run);
  ctx.created += create.length;
  if (res.state) {
    completeRun(ctx, run, res.state, { ...(res.outputs ? { outputs: res.outputs } : {}), ...(res.error ? { error: res.error } : {}) });
    endSubflowAttempt(ctx, run);
    return true;
  }
  if (res.outputs) setRunOutputs(ctx.runs, run, res.outputs);
  return create.length > 0;
}

/** Flowables that make attempts of their own (each evaluation or child execution is one), retried by their policy. */
const SELF_ATTEMPTED: ReadonlySet<string> = new Set([FLOWABLE.Fail, FLOWABLE.Subflow, FOR_EACH_ITEM_BATCH]);

const liveAttempt = (run: TaskRun) => { const a = run.attempts[run.attempts.length - 1]; return a && !isTerminal(a.state.current) ? a : undefined; };

/** A failed attempt of a self-attempted flowable: RETRYING when its retry policy allows another (true), else false. */
function retryOwnAttempt(ctx: StepContext, run: TaskRun, error: string): boolean {
  const att = liveAttempt(run);
  if (!att) return false;
  const delay = retryDelayOf(ctx, run);
  if (delay === undefined) return false;
  transition(att.state, 'FAILED', ctx.deps.now);
  retryAfter(ctx, run, delay, `${error}; retrying (attempt ${run.attempts.length + 1}) in ${delay} ms`, error);
  return true;
}

function failWhenChildrenEnd(ctx: StepContext, run: TaskRun, error: string): boolean {
  if (!childrenOf(ctx, run.id).every((c) => isTerminal(c.state.current))) return false;
  completeRun(ctx, run, 'FAILED', { error });
  endSubflowAttempt(ctx, run);
  return true;
}
