// The trigger service: starts every trigger component (schedules, flow triggers, polling and realtime triggers) with
// the shared dependencies and stops them in reverse order. Embedded mode starts it at process start (operator/main.ts);
// cluster mode starts it when the replica becomes the leader.
import { createScheduler, type SchedulerOptions } from './schedule/scheduler.js';
import type { ConditionEvaluator, TriggerComponent, TriggerServiceDeps } from './types.js';

export interface TriggerService {
  readonly components: readonly TriggerComponent[];
  stop(): Promise<void>;
}

export interface DefaultComponentsOptions {
  conditions?: ConditionEvaluator;
  scheduler?: Omit<SchedulerOptions, 'conditions'>;
}

/**
 * The components of a full service. TODO(coordinator): add the Flow-trigger component (./flow-trigger.ts) and the
 * polling/realtime component (./runtime.ts `pollingAndRealtimeComponent`), and pass `createConditionEvaluator(deps)`
 * (./conditions/) as `conditions`, once those modules are committed.
 */
export function defaultTriggerComponents(opts: DefaultComponentsOptions = {}): TriggerComponent[] {
  return [createScheduler({ ...opts.scheduler, ...(opts.conditions ? { conditions: opts.conditions } : {}) })];
}

/** Starts the components one after the other; if one fails to start, those started are stopped and the error thrown. */
export async function startTriggerService(deps: TriggerServiceDeps, components: TriggerComponent[] = defaultTriggerComponents()): Promise<TriggerService> {
  const started: TriggerComponent[] = [];
  const stopAll = async () => {
    for (const c of started.splice(0).reverse()) {
      try { await c.stop(); } catch (err) { deps.onError(err, `stopping trigger component ${c.name}`); }
    }
  };
  try {
    for (const c of components) {
      await c.start(deps);
      started.push(c);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { components, stop: stopAll };
}
