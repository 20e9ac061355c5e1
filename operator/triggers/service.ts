// The trigger service: starts every trigger component (schedules, flow triggers, polling and realtime triggers) with
// the shared dependencies and stops them in reverse order. Embedded mode starts it at process start (operator/main.ts);
// cluster mode starts it when the replica becomes the leader.
import { createConditionEvaluator } from './conditions/index.js';
import { createFlowTriggerComponent } from './flow-trigger.js';
import { pollingAndRealtimeComponent } from './runtime.js';
import { createScheduler, type SchedulerOptions } from './schedule/scheduler.js';
import { namespaceGrantsFromEnv } from '../tenancy/namespaces.js';
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
 * The components of a full service: schedules, flow triggers, polling and realtime triggers of plugins, sharing one
 * condition evaluator (bound to the service's dependencies when the service starts).
 */
export function defaultTriggerComponents(opts: DefaultComponentsOptions = {}): TriggerComponent[] {
  let evaluator = opts.conditions;
  const conditions: ConditionEvaluator = (list, ctx) => {
    if (!evaluator) throw new Error('trigger conditions evaluated before the trigger service started');
    return evaluator(list, ctx);
  };
  const bind: TriggerComponent = {
    name: 'conditions',
    async start(deps) { evaluator ??= createConditionEvaluator(deps); },
    async stop() { /* nothing to release */ },
  };
  return [
    bind,
    createScheduler({ ...opts.scheduler, conditions }),
    createFlowTriggerComponent({ conditions }),
    pollingAndRealtimeComponent({ conditions }),
  ];
}

/** Starts the components one after the other; if one fails to start, those started are stopped and the error thrown. */
export async function startTriggerService(given: TriggerServiceDeps, components: TriggerComponent[] = defaultTriggerComponents()): Promise<TriggerService> {
  const deps: TriggerServiceDeps = { ...given, grants: given.grants ?? namespaceGrantsFromEnv(given.env) };
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
