// Runtime of plugin triggers (polling and realtime): keeps one running instance per active trigger of every live
// flow (level-based: the flow store's change feed and a periodic resync both converge on the same desired set), runs
// polls at their interval without overlap, keeps realtime listeners alive, and creates one execution per event
// before the source is acknowledged (commit / ack / LSN confirm happen only after the durable create).
import { isTerminal, type Execution, type Flow, type Trigger } from '../core/types.js';
import { sleep, backoff } from '../faults.js';
import { durationMs, errorMessage } from '../plugins/util.js';
import { NO_SECRETS } from '../secrets/masker.js';
import { ConflictError, type FlowRecord, type Stores } from '../store/types.js';
import { startTriggeredExecution, triggerActive, triggerRenderVars, type TriggeredStart } from './create.js';
import { PLUGIN_TRIGGERS } from './sources/index.js';
import type {
  ConditionEvaluator, PollingTriggerPlugin, RealtimeListener, RealtimeTriggerPlugin, TriggerComponent, TriggerContext,
  TriggerEvent, TriggerLogger, TriggerPlugin, TriggerServiceDeps,
} from './types.js';

export { backoff, sleep, type BackoffOptions } from '../faults.js';

export interface RuntimeOptions {
  /** Trigger plugins by canonical type (default: every source of ./sources). */
  plugins?: ReadonlyMap<string, TriggerPlugin>;
  logger?: TriggerLogger;
  /** Evaluates a trigger's `conditions` against the event (absent: conditions are not checked). */
  conditions?: ConditionEvaluator;
  /** How executions are created (default startTriggeredExecution); tests use it to simulate a crash before create. */
  create?: (deps: TriggerServiceDeps, start: TriggeredStart) => Promise<unknown>;
  /** Full resync period (API-disabled flags, missed changes); default 5 s. */
  resyncMs?: number;
  /** Longest wait for a stopping poll or listener; default 15 s. */
  stopTimeoutMs?: number;
}

export interface PluginTriggerComponent extends TriggerComponent {
  /** Keys (`namespace/flowId/triggerId`) of the triggers running now. */
  running(): string[];
  /** Converges on the flow store now (also runs on every change and every `resyncMs`). */
  resync(): Promise<void>;
}

interface Running { fingerprint: string; abort: AbortController; done: Promise<void>; trigger: Trigger }

const consoleLogger: TriggerLogger = {
  info: (m) => console.info(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};

/** Trigger logs (the server's console) masked by the stores' secret layer and with every secret the trigger read. */
function masked(base: TriggerLogger, prefix: string, stores: Stores, secrets: Set<string>): TriggerLogger {
  const f = (m: string) => `${prefix} ${(stores.secrets?.masker() ?? NO_SECRETS).with(secrets).mask(m)}`;
  return { info: (m) => base.info(f(m)), warn: (m) => base.warn(f(m)), error: (m) => base.error(f(m)) };
}

const keyOf = (namespace: string, flowId: string, triggerId?: string) =>
  `${namespace}/${flowId}/${triggerId ?? ''}`;

/** The component that runs every polling and realtime trigger of plugins. */
export function pollingAndRealtimeComponent(opts: RuntimeOptions = {}): PluginTriggerComponent {
  const plugins = opts.plugins ?? PLUGIN_TRIGGERS;
  const baseLogger = opts.logger ?? consoleLogger;
  const stopTimeout = opts.stopTimeoutMs ?? 15_000;
  const running = new Map<string, Running>();
  let deps: TriggerServiceDeps | undefined;
  let unwatch: (() => void) | undefined;
  let unwatchExecutions: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let stopped = true;

  /** Runs reconciliations one at a time, so a stop always completes before the restart of the same trigger. */
  const serial = (f: () => Promise<void>): Promise<void> => {
    chain = chain.then(f).catch((err) => deps?.onError(err, 'plugin-triggers'));
    return chain;
  };

  async function desiredOf(record: FlowRecord): Promise<Map<string, { flow: Flow; trigger: Trigger; plugin: TriggerPlugin }>> {
    const out = new Map<string, { flow: Flow; trigger: Trigger; plugin: TriggerPlugin }>();
    const flow = record.flow;
    if (record.deleted || flow.disabled) return out;
    for (const trigger of flow.triggers ?? []) {
      const plugin = plugins.get(trigger.type);
      if (!plugin || !triggerActive(flow, trigger)) continue;
      const state = await deps!.stores.triggers.get(flow.namespace, flow.id, trigger.id);
      if (state?.disabled) continue;
      out.set(keyOf(flow.namespace, flow.id, trigger.id), { flow, trigger, plugin });
    }
    return out;
  }

  async function stopOne(key: string): Promise<void> {
    const r = running.get(key);
    if (!r) return;
    running.delete(key);
    r.abort.abort();
    let t: NodeJS.Timeout | undefined;
    await Promise.race([r.done, new Promise((res) => { t = setTimeout(res, stopTimeout); })]);
    clearTimeout(t);
  }

  /** Stops what is not desired (or changed) among `scope`'s keys, starts what is missing. */
  async function converge(scope: (key: string) => boolean, desired: Map<string, { flow: Flow; trigger: Trigger; plugin: TriggerPlugin }>): Promise<void> {
    for (const [key, r] of [...running]) {
      if (!scope(key)) continue;
      const want = desired.get(key);
      if (!want || fingerprint(want.flow, want.trigger) !== r.fingerprint) await stopOne(key);
    }
    if (stopped) return;
    for (const [key, want] of desired) if (!running.has(key)) running.set(key, launch(want.flow, want.trigger, want.plugin));
  }

  async function syncFlow(namespace: string, flowId: string, record?: FlowRecord): Promise<void> {
    const prefix = keyOf(namespace, flowId);
    await converge((k) => k.startsWith(prefix), record ? await desiredOf(record) : new Map());
  }

  async function syncAll(): Promise<void> {
    const desired = new Map<string, { flow: Flow; trigger: Trigger; plugin: TriggerPlugin }>();
    for (const record of await deps!.stores.flows.all()) for (const [k, v] of await desiredOf(record)) desired.set(k, v);
    await converge(() => true, desired);
  }

  /** `stopAfter` (Kestra): an execution of the trigger ended in a listed state, so the trigger disables itself. */
  async function stopAfter(execution: Execution): Promise<void> {
    const key = keyOf(execution.namespace, execution.flowId, execution.trigger?.id);
    const r = running.get(key);
    const states = r?.trigger.stopAfter;
    if (!r || !Array.isArray(states) || !states.includes(execution.state.current) || r.trigger.type !== execution.trigger?.type) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      const rec = await deps!.stores.triggers.get(execution.namespace, execution.flowId, r.trigger.id);
      try {
        await deps!.stores.triggers.put({ namespace: execution.namespace, flowId: execution.flowId, triggerId: r.trigger.id, disabled: true, state: rec?.state ?? {} }, rec?.version ?? 0);
        break;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
    }
    baseLogger.info(`[trigger ${key}] disabled: execution ${execution.id} ended ${execution.state.current} (stopAfter)`);
    const record = await deps!.stores.flows.get(execution.namespace, execution.flowId);
    await syncFlow(execution.namespace, execution.flowId, record);
  }

  function launch(flow: Flow, trigger: Trigger, plugin: TriggerPlugin): Running {
    const d = deps!;
    const abort = new AbortController();
    const secrets = new Set<string>();
    const renderer = d.renderer.forSecrets(secrets);
    const logger = masked(baseLogger, `[trigger ${keyOf(flow.namespace, flow.id, trigger.id)}]`, d.stores, secrets);
    const ctx: TriggerContext = {
      flow, trigger, stores: d.stores, logger, signal: abort.signal, now: d.clock,
      render: (value, extra) => renderer.renderValue(value, { ...triggerRenderVars(flow, {}), ...(extra ?? {}) }),
    };
    const create = async (event: TriggerEvent): Promise<boolean> => {
      if (opts.conditions && trigger.conditions && !(await opts.conditions(trigger.conditions as unknown[], { flow, trigger, variables: { trigger: event.variables } }))) return false;
      const start: TriggeredStart = { flow, trigger, variables: event.variables, now: d.clock(), ...(event.dedupeKey !== undefined ? { dedupeKey: event.dedupeKey } : {}) };
      await (opts.create ?? ((dd, s) => startTriggeredExecution(dd.stores, s, dd.renderer, dd.grants)))(d, start);
      return true;
    };
    const done = plugin.kind === 'polling' ? pollLoop(ctx, plugin, create) : realtime(ctx, plugin, create);
    return { fingerprint: fingerprint(flow, trigger), abort, trigger, done: done.catch((err) => logger.error(errorMessage(err))) };
  }

  return {
    name: 'plugin-triggers',
    async start(d) {
      deps = d;
      stopped = false;
      unwatch = d.stores.flows.watch((ev) => {
        if (ev.type === 'SAVED') void serial(() => syncFlow(ev.record.namespace, ev.record.id, ev.record));
        else void serial(() => syncFlow(ev.namespace, ev.id));
      });
      unwatchExecutions = d.stores.executions.watch((ev) => {
        if (ev.execution.trigger && isTerminal(ev.execution.state.current)) void serial(() => stopAfter(ev.execution));
      });
      await serial(syncAll);
      const every = opts.resyncMs ?? 5000;
      timer = setInterval(() => { void serial(syncAll); }, every);
      timer.unref();
    },
    async stop() {
      stopped = true;
      unwatch?.();
      unwatchExecutions?.();
      unwatch = unwatchExecutions = undefined;
      if (timer) clearInterval(timer);
      await serial(async () => { await Promise.all([...running.keys()].map(stopOne)); });
    },
    running: () => [...running.keys()],
    resync: () => serial(syncAll),
  };
}

/** A trigger restarts when its definition or its flow's revision changes. */
function fingerprint(flow: Flow, trigger: Trigger): string {
  return `${flow.revision ?? 0}:${JSON.stringify(trigger)}`;
}

/** Polls at the trigger's interval, one poll at a time; a failed poll is logged and tried again next interval. */
async function pollLoop(ctx: TriggerContext, plugin: PollingTriggerPlugin, create: (e: TriggerEvent) => Promise<boolean>): Promise<void> {
  while (!ctx.signal.aborted) {
    let interval = durationMs(plugin.defaultInterval);
    try {
      if (ctx.trigger.interval !== undefined) interval = durationMs(ctx.render(ctx.trigger.interval) as string);
      const found = await plugin.poll(ctx);
      if (found && !ctx.signal.aborted && (await create(found.event))) await found.commit?.();
    } catch (err) {
      if (!ctx.signal.aborted) ctx.logger.warn(`poll failed, retrying in ${interval} ms: ${errorMessage(err)}`);
    }
    if (!(await sleep(interval, ctx.signal))) return;
  }
}

/** Starts the listener (retrying with backoff when it cannot start) and keeps it until the trigger stops. */
async function realtime(ctx: TriggerContext, plugin: RealtimeTriggerPlugin, create: (e: TriggerEvent) => Promise<boolean>): Promise<void> {
  const emit = async (event: TriggerEvent): Promise<void> => {
    if (ctx.signal.aborted) throw new Error('trigger stopped: event left unacknowledged');
    await create(event);
  };
  let listener: RealtimeListener | undefined;
  for (let attempt = 0; !ctx.signal.aborted && !listener; attempt++) {
    try {
      listener = await plugin.listen(ctx, emit);
    } catch (err) {
      const wait = backoff(attempt);
      ctx.logger.warn(`listener failed to start, retrying in ${wait} ms: ${errorMessage(err)}`);
      await sleep(wait, ctx.signal);
    }
  }
  if (!listener) return;
  if (!ctx.signal.aborted) await new Promise((res) => ctx.signal.addEventListener('abort', res, { once: true }));
  await listener.stop();
}
