// The Schedule trigger component: keeps the Schedule triggers of every live flow, evaluates them with the injected
// clock (./decide.ts), starts each due date's execution with a deterministic id (dedupe key = the date), then saves
// the trigger's state with compare-and-set. A crash between the two never runs a date twice: the retry recreates the
// same id. One timer is armed for the earliest due date (capped, so clock jumps and API changes are seen quickly);
// flow changes, API changes to a trigger's state and the end of a scheduled execution re-evaluate at once.
import { isTerminal, type ExecutionState, type Flow, type Trigger } from '../../core/types.js';
import { TRIGGER_TYPES } from '../../model/index.js';
import { ConflictError, type FlowEvent, type FlowRecord, type TriggerStateRecord } from '../../store/types.js';
import { createConditionEvaluator } from '../conditions/index.js';
import { startTriggeredExecution, triggerActive, triggerRenderVars } from '../create.js';
import type { ConditionEvaluator, TriggerComponent, TriggerServiceDeps } from '../types.js';
import { decideWithConditions, parsePolicy, started, type Candidate, type ScheduleState } from './decide.js';

export interface SchedulerOptions {
  /** Evaluates the trigger's `conditions` for each date (default: the service's condition evaluator). */
  conditions?: ConditionEvaluator;
  /** Longest sleep between two passes (default 1000 ms): bounds how late a clock jump or an API change is seen. */
  maxSleepMs?: number;
  /** How often a locked trigger re-checks its running execution when no end event arrives (default 5000 ms). */
  lockRecheckMs?: number;
}

export interface SchedulerComponent extends TriggerComponent {
  /** Runs one evaluation pass now and resolves when it is done (tests, after advancing their clock). */
  evaluateNow(): Promise<void>;
}

interface Entry {
  flow: Flow;
  trigger: Trigger;
  /** State version last read or written (a different version in the store means someone else wrote: re-evaluate). */
  version: number;
  /** Epoch ms of the next evaluation; undefined: only on events. */
  wakeAt?: number;
  recovered: boolean;
  /** Its execution ended while it was being evaluated: evaluate again (the evaluation's own wake-up must not win). */
  woken?: boolean;
}

const keyOf = (namespace: string, flowId: string, triggerId: string): string => `${namespace}\u0000${flowId}\u0000${triggerId}`;

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function createScheduler(opts: SchedulerOptions = {}): SchedulerComponent {
  const maxSleep = opts.maxSleepMs ?? 1000;
  const lockRecheck = opts.lockRecheckMs ?? 5000;
  const entries = new Map<string, Entry>();
  const unsubscribe: (() => void)[] = [];
  let deps: TriggerServiceDeps | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  let evaluator: ConditionEvaluator | undefined;

  function schedulesOf(record: FlowRecord): Trigger[] {
    if (record.deleted) return [];
    return (record.flow.triggers ?? []).filter((t) => t.type === TRIGGER_TYPES.schedule);
  }

  function setFlow(record: FlowRecord): string[] {
    const removed: string[] = [];
    const prefix = keyOf(record.namespace, record.id, '');
    const keep = new Set<string>();
    for (const trigger of schedulesOf(record)) {
      const key = keyOf(record.namespace, record.id, trigger.id);
      keep.add(key);
      const prev = entries.get(key);
      entries.set(key, { flow: record.flow, trigger, version: prev?.version ?? -1, recovered: prev?.recovered ?? false, wakeAt: 0 });
    }
    for (const key of [...entries.keys()]) if (key.startsWith(prefix) && !keep.has(key)) { entries.delete(key); removed.push(key); }
    return removed;
  }

  /** States of removed triggers, deleted at the start of the next pass (serialized with evaluations). */
  const toForget = new Set<string>();

  async function forget(): Promise<void> {
    for (const key of [...toForget]) {
      toForget.delete(key);
      if (entries.has(key)) continue; // added back meanwhile
      const [namespace, flowId, triggerId] = key.split('\u0000') as [string, string, string];
      await deps!.stores.triggers.delete(namespace, flowId, triggerId); // a trigger added again later starts afresh
    }
  }

  /** State of the execution holding the lock: undefined when none (or deleted). */
  async function lockState(executionId: string | undefined): Promise<ExecutionState | undefined> {
    if (!executionId) return undefined;
    return (await deps!.stores.executions.get(executionId))?.execution.state.current;
  }

  /** `stopAfter`: the trigger disables itself when its execution ends in one of these states (Kestra). */
  const stopsAfter = (trigger: Trigger, ended: string | undefined): boolean =>
    !!ended && Array.isArray(trigger.stopAfter) && trigger.stopAfter.includes(ended);

  async function accept(entry: Entry, c: Candidate): Promise<boolean> {
    const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
    const conditions = [...list(entry.trigger.conditions), ...list(entry.trigger.scheduleConditions)]; // the latter: Kestra's old name
    if (conditions.length === 0) return true;
    const timezone = typeof entry.trigger.timezone === 'string' ? entry.trigger.timezone : undefined;
    try {
      return await evaluator!(conditions, {
        flow: entry.flow, trigger: entry.trigger, date: c.date, ...(timezone ? { timezone } : {}),
        variables: { trigger: c.variables, schedule: c.variables, flow: { id: entry.flow.id, namespace: entry.flow.namespace, revision: entry.flow.revision } },
      });
    } catch (err) {
      // A condition that cannot be evaluated skips the date (reported once) instead of blocking the trigger.
      deps!.onError(err, `conditions of schedule ${entry.flow.namespace}.${entry.flow.id}.${entry.trigger.id} at ${c.dedupeKey}`);
      return false;
    }
  }

  async function evaluate(entry: Entry, rec: TriggerStateRecord | undefined): Promise<void> {
    const d = deps!;
    const { flow, trigger } = entry;
    entry.woken = false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = d.clock();
      const state = (rec?.state ?? {}) as ScheduleState;
      const lock = await lockState(state.executionId);
      const lockHeld = !!lock && !isTerminal(lock);
      const disabled = (rec?.disabled ?? false) || (!lockHeld && stopsAfter(trigger, lock));
      const decision = await decideWithConditions({
        state, trigger, now, running: lockHeld, active: triggerActive(flow, trigger, disabled),
        recovery: !entry.recovered, defaultPolicy: parsePolicy(d.env.TRIGGER_RECOVER_MISSED_SCHEDULES) ?? 'ALL',
      }, (c) => accept(entry, c));
      let next = decision.state;
      const c = decision.candidate;
      if (c) {
        const vars = triggerRenderVars(flow, c.variables);
        try {
          const created = await startTriggeredExecution(d.stores, {
            flow, trigger, variables: c.variables, dedupeKey: c.dedupeKey, now,
            ...(c.inputs ? { inputs: d.renderer.renderValue(c.inputs, vars) } : {}),
            ...(c.labels ? { labels: c.labels.map((l) => ({ key: l.key, value: d.renderer.render(String(l.value), vars) })) } : {}),
          }, d.renderer, d.grants);
          next = started(next, c, created.execution.id);
        } catch (err) {
          // Invalid inputs and the like: the date is skipped rather than retried forever.
          d.onError(err, `schedule ${flow.namespace}.${flow.id}.${trigger.id} at ${c.dedupeKey}`);
        }
      }
      try {
        if (!rec || !sameJson(next, rec.state) || rec.disabled !== disabled) {
          rec = await d.stores.triggers.put({
            namespace: flow.namespace, flowId: flow.id, triggerId: trigger.id, disabled, state: next as Record<string, unknown>,
          }, rec?.version ?? 0);
        }
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        rec = await d.stores.triggers.get(flow.namespace, flow.id, trigger.id); // the API wrote in between: decide again
        continue;
      }
      entry.version = rec.version;
      entry.recovered = true;
      const locked = !!next.executionId;
      entry.wakeAt = c || entry.woken ? now.getTime() : locked ? now.getTime() + lockRecheck : decision.wakeAt?.getTime();
      return;
    }
    entry.wakeAt = d.clock().getTime() + maxSleep;
  }

  async function pass(): Promise<void> {
    const d = deps!;
    await forget();
    const now = d.clock().getTime();
    const states = new Map((await d.stores.triggers.list()).map((r) => [keyOf(r.namespace, r.flowId, r.triggerId), r]));
    for (const [key, entry] of entries) {
      if (stopped) return;
      const rec = states.get(key);
      const changed = (rec?.version ?? 0) !== entry.version;
      if (!entry.recovered || changed || (entry.wakeAt !== undefined && entry.wakeAt <= now)) {
        try {
          await evaluate(entry, rec);
        } catch (err) {
          d.onError(err, `schedule ${entry.flow.namespace}.${entry.flow.id}.${entry.trigger.id}`);
          entry.wakeAt = d.clock().getTime() + maxSleep;
        }
      }
    }
  }

  function arm(): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    const now = deps!.clock().getTime();
    const wakes = [...entries.values()].map((e) => e.wakeAt).filter((w): w is number => w !== undefined);
    const delay = Math.max(0, Math.min(maxSleep, ...wakes.map((w) => w - now)));
    timer = setTimeout(() => void kick(), delay);
    timer.unref();
  }

  /** Runs passes one at a time; a kick during a pass runs one more pass after it. */
  function kick(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (running) { again = true; return running; }
    running = (async () => {
      do {
        again = false;
        try { await pass(); } catch (err) { deps?.onError(err, 'scheduler'); }
      } while (again && !stopped);
    })().finally(() => { running = undefined; arm(); });
    return running;
  }

  function onFlow(event: FlowEvent): void {
    if (event.type === 'SAVED') {
      for (const key of setFlow(event.record)) toForget.add(key);
    } else {
      const prefix = keyOf(event.namespace, event.id, '');
      for (const key of [...entries.keys()].filter((k) => k.startsWith(prefix))) { entries.delete(key); toForget.add(key); }
    }
    void kick();
  }

  return {
    name: 'schedule',
    async start(d) {
      deps = d;
      evaluator = opts.conditions ?? createConditionEvaluator(d);
      stopped = false;
      unsubscribe.push(d.stores.flows.watch(onFlow));
      unsubscribe.push(d.stores.executions.watch((e) => {
        const t = e.execution.trigger;
        if (!t || t.type !== TRIGGER_TYPES.schedule || !isTerminal(e.execution.state.current)) return;
        const entry = entries.get(keyOf(e.execution.namespace, e.execution.flowId, t.id));
        if (entry) { entry.wakeAt = 0; entry.woken = true; void kick(); }
      }));
      const live = new Map<string, Flow>();
      for (const record of await d.stores.flows.all()) { setFlow(record); live.set(keyOf(record.namespace, record.id, ''), record.flow); }
      // Schedules removed while the service was down: their state goes, so adding them back later starts afresh.
      for (const rec of await d.stores.triggers.list()) {
        const key = keyOf(rec.namespace, rec.flowId, rec.triggerId);
        const flow = live.get(keyOf(rec.namespace, rec.flowId, ''));
        const other = flow?.triggers?.some((t) => t.id === rec.triggerId && t.type !== TRIGGER_TYPES.schedule);
        if (!entries.has(key) && !other && typeof rec.state.signature === 'string') toForget.add(key);
      }
      await kick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const off of unsubscribe.splice(0)) off();
      await running;
      entries.clear();
    },
    evaluateNow: async () => {
      await kick();
      if (again || running) await kick();
    },
  };
}
