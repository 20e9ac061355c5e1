// The Flow trigger component (`core.trigger.Flow`): watches executions reach a state a Flow trigger listens to
// (terminal states by default), evaluates every live flow's Flow triggers (conditions, preconditions) and starts
// the listening flows with `inputs` rendered against the finished execution (`trigger.outputs.*`...).
// Exactly once per transition and trigger, also across restarts: the started execution's id is derived from
// (flow, trigger, transition key) so re-creating it is a no-op, and a durable done-mark per transition is written
// once every flow was handled. A checkpoint (last time everything was handled, oldest active execution then) lets a
// restarted service find the executions that ended while it was down and were never marked.
import type { Execution, Flow } from '../core/types.js';
import type { FlowRecord } from '../store/types.js';
import { backoff } from '../faults.js';
import { createConditionEvaluator } from './conditions/evaluator.js';
import { startTriggeredExecution, triggerActive } from './create.js';
import {
  flowTriggerVariables, isFlowTrigger, mayReact, preconditionsCondition, transitionDate, transitionKey, triggerStates,
} from './flow-trigger-match.js';
import type { ConditionEvaluator, TriggerComponent, TriggerServiceDeps } from './types.js';

export const MARK_SCOPE = 'flow-trigger';
/** Where the checkpoint lives in the trigger state store (not a valid namespace: never a user flow). */
export const CHECKPOINT_KEY = { namespace: '_system', flowId: '_flow-trigger', triggerId: 'checkpoint' } as const;

export interface FlowTriggerOptions {
  /** Condition evaluator (default: one built from the service deps). */
  conditions?: ConditionEvaluator;
  /** Minimum time between two checkpoint writes (default 10 s); one is always written on stop. */
  checkpointEveryMs?: number;
  /** Transitions up to this long before the checkpoint are looked at again on start (default 5 min). */
  slackMs?: number;
  /**
   * Done-marks are kept this long past the restart scan's reach, then purged (default 1 day; one mark per finished
   * execution would otherwise grow forever: a ConfigMap each in cluster mode). Older transitions are ignored.
   */
  markRetentionMs?: number;
  /** Marks removed per purge request (default 1000); a purge repeats until nothing old is left. */
  purgeBatch?: number;
}

interface Checkpoint { at: string; oldestActiveStart?: string }

const SCAN_PAGE = 200;
const SEEN_MAX = 10_000;
const MAX_ATTEMPTS = 5;
/** Purges run at most this often, in batches until nothing old is left (so they keep up with any rate). */
const PURGE_EVERY_MS = 10 * 60_000;

export function createFlowTriggerComponent(opts: FlowTriggerOptions = {}): TriggerComponent {
  let deps: TriggerServiceDeps | undefined;
  let evaluate: ConditionEvaluator;
  const flows = new Map<string, Flow>();
  const seen = new Set<string>();
  const unsubscribe: (() => void)[] = [];
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  let lastCheckpoint = 0;
  let running = false;
  let retrying = 0;
  const timers = new Map<ReturnType<typeof setTimeout>, Execution>();
  /** End date of the oldest transition given up on: checkpoints stay before it. */
  let floor: number | undefined;
  const checkpointEvery = opts.checkpointEveryMs ?? 10_000;
  const slack = opts.slackMs ?? 5 * 60_000;
  const retention = opts.markRetentionMs ?? 24 * 3_600_000;
  const purgeBatch = opts.purgeBatch ?? 1000;
  let lastPurge = 0;
  /** Transitions before this may have lost their mark: never handled (a finished execution updated much later). */
  const horizon = () => Date.now() - slack - retention;

  const flowKey = (ns: string, id: string) => `${ns}\u0000${id}`;
  let statesCache: Set<string> | undefined;
  const setFlow = (r: FlowRecord) => {
    const prev = flows.get(flowKey(r.namespace, r.id));
    if (!prev || (prev.revision ?? 0) <= r.revision) flows.set(flowKey(r.namespace, r.id), { ...r.flow, revision: r.revision });
    statesCache = undefined;
  };
  /** Every state some Flow trigger listens to (executions in other states are not looked at). */
  const listenedStates = (): Set<string> => {
    if (statesCache) return statesCache;
    const states = new Set<string>();
    for (const f of flows.values()) for (const t of f.triggers ?? []) if (isFlowTrigger(t)) triggerStates(t).forEach((s) => states.add(s));
    statesCache = states;
    return states;
  };

  function remember(key: string): void {
    seen.add(key);
    if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value as string);
  }

  /** Every Flow trigger of every live flow, for one transition; then the done-mark. */
  async function handle(d: TriggerServiceDeps, exec: Execution): Promise<void> {
    const key = transitionKey(exec);
    if (seen.has(key)) return;
    if (Date.parse(transitionDate(exec)) < horizon()) { remember(key); return; }
    if (await d.stores.triggers.isMarked(MARK_SCOPE, key)) { remember(key); return; }
    for (const flow of [...flows.values()]) {
      for (const trigger of flow.triggers ?? []) {
        if (!isFlowTrigger(trigger) || !mayReact(flow, trigger, exec)) continue;
        const state = await d.stores.triggers.get(flow.namespace, flow.id, trigger.id);
        if (!triggerActive(flow, trigger, state?.disabled)) continue;
        const pre = preconditionsCondition(trigger.preconditions);
        const conditions = [...(Array.isArray(trigger.conditions) ? trigger.conditions : []), ...(pre ? [pre] : [])];
        const variables = flowTriggerVariables(exec);
        const ok = await evaluate(conditions, { flow, trigger, execution: exec, variables: { trigger: variables } });
        if (!ok) continue;
        try {
          await startTriggeredExecution(d.stores, { flow, trigger, variables, dedupeKey: key, now: d.clock() }, d.renderer, d.grants);
        } catch (err) {
          // Invalid inputs: no execution is created (contract: invalid input creates nothing); reported once.
          d.onError(err, `Flow trigger ${flow.namespace}.${flow.id}.${trigger.id} on execution ${exec.id}`);
        }
      }
    }
    await d.stores.triggers.mark(MARK_SCOPE, key);
    remember(key);
  }

  /**
   * Queues one transition. A failure (store unavailable...) is retried with backoff while running; a transition
   * that still fails keeps the checkpoint before it, so the next start looks at it again.
   */
  function enqueue(d: TriggerServiceDeps, exec: Execution, attempt = 0): void {
    pending++;
    chain = chain
      .then(() => handle(d, exec))
      .catch((err) => {
        d.onError(err, `Flow triggers for execution ${exec.id} (attempt ${attempt + 1})`);
        if (running && attempt + 1 < MAX_ATTEMPTS) {
          retrying++;
          const timer = setTimeout(() => { timers.delete(timer); retrying--; if (running) enqueue(d, exec, attempt + 1); else keepBefore(exec); }, backoff(attempt));
          timers.set(timer, exec);
        } else keepBefore(exec);
      })
      .finally(() => {
        pending--;
        if (pending === 0 && retrying === 0 && running && Date.now() - lastCheckpoint >= checkpointEvery) void writeCheckpoint(d);
      });
  }

  function keepBefore(exec: Execution): void {
    const t = Date.parse(transitionDate(exec));
    if (Number.isFinite(t) && (floor === undefined || t < floor)) floor = t;
  }

  async function readCheckpoint(d: TriggerServiceDeps): Promise<{ cp?: Checkpoint; version: number }> {
    const rec = await d.stores.triggers.get(CHECKPOINT_KEY.namespace, CHECKPOINT_KEY.flowId, CHECKPOINT_KEY.triggerId);
    return { cp: rec?.state as Checkpoint | undefined, version: rec?.version ?? 0 };
  }

  /** Written only when nothing is queued: every transition before `at` has been handled. */
  async function writeCheckpoint(d: TriggerServiceDeps): Promise<void> {
    lastCheckpoint = Date.now();
    try {
      // Compared with end dates written by the controller: wall-clock time, kept before any transition given up on.
      const at = new Date(Math.min(Date.now(), floor ?? Infinity)).toISOString();
      const active = await d.stores.executions.listActiveSummaries();
      const oldest = active.map((a) => a.startDate).sort()[0];
      const state: Checkpoint = { at, ...(oldest ? { oldestActiveStart: oldest } : {}) };
      for (let attempt = 0; attempt < 5; attempt++) {
        const { version } = await readCheckpoint(d);
        try {
          await d.stores.triggers.put({ ...CHECKPOINT_KEY, state: { ...state } }, version);
          void purgeMarks(d, at);
          return;
        } catch { /* concurrent write: read again */ }
      }
    } catch (err) {
      d.onError(err, 'Flow trigger checkpoint');
    }
  }

  /** Marks older than any restart scan can reach (from checkpoint `at`) plus the retention: bounded, not too often. */
  async function purgeMarks(d: TriggerServiceDeps, at: string): Promise<void> {
    if (Date.now() - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = Date.now();
    const before = new Date(Math.min(Date.parse(at), Date.now()) - slack - retention).toISOString();
    try {
      while (running && (await d.stores.triggers.purgeMarks(MARK_SCOPE, before, purgeBatch)) === purgeBatch) { /* next batch */ }
    } catch (err) {
      d.onError(err, 'Flow trigger done-mark purge');
    }
  }

  /** Transitions since the checkpoint that were never marked (ended while the service was down, or a crash). */
  async function catchUp(d: TriggerServiceDeps, cp: Checkpoint): Promise<void> {
    const since = Date.parse(cp.at) - slack;
    const starts = [cp.at, cp.oldestActiveStart].filter((s): s is string => !!s).sort();
    const startBound = new Date(Date.parse(starts[0]!) - slack).toISOString();
    const states = [...listenedStates()] as Execution['state']['current'][];
    if (states.length === 0) return;
    for (let offset = 0; ; offset += SCAN_PAGE) {
      const page = await d.stores.executions.search({ state: states, startDate: startBound, limit: SCAN_PAGE, offset });
      for (const exec of page.results) if (Date.parse(transitionDate(exec)) >= since) enqueue(d, exec);
      if (page.results.length < SCAN_PAGE) break;
    }
  }

  return {
    name: 'flow-trigger',
    async start(d) {
      deps = d;
      running = true;
      evaluate = opts.conditions ?? createConditionEvaluator(d);
      unsubscribe.push(d.stores.flows.watch((ev) => {
        if (ev.type === 'SAVED') setFlow(ev.record);
        else { flows.delete(flowKey(ev.namespace, ev.id)); statesCache = undefined; }
      }));
      for (const r of await d.stores.flows.all()) if (!r.deleted) setFlow(r);
      unsubscribe.push(d.stores.executions.watch((ev) => {
        if (!running) return;
        const exec = ev.execution;
        if (!listenedStates().has(exec.state.current) || seen.has(transitionKey(exec))) return;
        enqueue(d, exec);
      }));
      const { cp } = await readCheckpoint(d);
      if (cp?.at) await catchUp(d, cp);
      await chain;
      await writeCheckpoint(d);
    },
    async stop() {
      if (!deps) return;
      const d = deps;
      running = false;
      for (const off of unsubscribe.splice(0)) off();
      for (const [t, exec] of timers) { clearTimeout(t); keepBefore(exec); }
      timers.clear();
      retrying = 0;
      await chain; // handle what was queued: the checkpoint below must not skip it
      await writeCheckpoint(d);
      deps = undefined;
      flows.clear();
    },
  };
}
