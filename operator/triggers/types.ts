// Trigger plugin interfaces shared by the trigger service and every trigger implementation: polling triggers
// (evaluated at an interval) and realtime triggers (a listener that runs permanently), plus what they get to work with.
import type { Flow, Trigger } from '../core/types.js';
import type { Renderer } from '../core/engine-types.js';
import type { Stores } from '../store/types.js';

/** What one trigger firing produces: the `trigger.*` variables of the execution it starts. */
export interface TriggerEvent {
  variables: Record<string, unknown>;
  /**
   * Stable id of the event at its source when there is one (message id, object key, row key): the execution id is
   * derived from it, so an event delivered twice (a crash between create and acknowledge) starts one execution.
   */
  dedupeKey?: string;
}

export interface TriggerLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface TriggerContext {
  flow: Flow;
  trigger: Trigger;
  /**
   * Renders a property (strings inside values too) against `{ flow, trigger? , vars }` plus `extra` (e.g. `response`
   * for the HTTP trigger's condition); secrets resolved, never logged.
   */
  render<T = unknown>(value: T, extra?: Record<string, unknown>): T;
  /** Internal storage (large batches of events are stored as a file and passed as a URI). */
  stores: Stores;
  logger: TriggerLogger;
  /** Aborted when the trigger stops (flow updated, disabled, deleted, service stopping). */
  signal: AbortSignal;
  now(): Date;
}

export interface PollingTriggerPlugin {
  kind: 'polling';
  type: string;
  /** Properties schema (ajv), checked when the flow is saved: the field is named in the error. */
  schema: Record<string, unknown>;
  /** Default `interval` when the trigger has none (ISO 8601 duration). */
  defaultInterval: string;
  /**
   * One poll: the event to start an execution with, or undefined when nothing was found. A poll that consumes its
   * data at the source (S3 MOVE/DELETE) must do so only in `commit`, called after the execution is durably created.
   */
  poll(ctx: TriggerContext): Promise<{ event: TriggerEvent; commit?: () => Promise<void> } | undefined>;
}

export interface RealtimeListener { stop(): Promise<void> }

export interface RealtimeTriggerPlugin {
  kind: 'realtime';
  type: string;
  schema: Record<string, unknown>;
  /**
   * Starts listening. Each event must be passed to `emit`, which resolves only after its execution is durably
   * created; the listener acknowledges the event at its source only then. Connection losses are retried with
   * backoff by the listener itself (see `backoff` in ./runtime.ts) until `ctx.signal` aborts.
   */
  listen(ctx: TriggerContext, emit: (event: TriggerEvent) => Promise<void>): Promise<RealtimeListener>;
}

export type TriggerPlugin = PollingTriggerPlugin | RealtimeTriggerPlugin;

export type { Renderer };

/** What every part of the trigger service gets: the stores, a renderer with secrets, the clock, settings. */
export interface TriggerServiceDeps {
  stores: Stores;
  /** Renders trigger properties; `forSecrets(sink)` collects secret values to mask. */
  renderer: import('../controller/secrets.js').SecretRenderer;
  /** Injected clock (tests drive schedules with it). */
  clock: () => Date;
  /** Settings such as `TRIGGER_RECOVER_MISSED_SCHEDULES` (global default ALL | NONE | LAST). */
  env: NodeJS.ProcessEnv;
  /** Namespaces a flow may reach beyond its own (default: ALLOWED_NAMESPACES of `env`, read when the service starts). */
  grants?: import('../tenancy/namespaces.js').NamespaceGrants;
  onError(err: unknown, where: string): void;
}

/**
 * One part of the trigger service (schedules, flow triggers, polling and realtime triggers). The service starts every
 * part when it starts (embedded: at process start; cluster: when this replica becomes the leader) and stops them.
 */
export interface TriggerComponent {
  readonly name: string;
  start(deps: TriggerServiceDeps): Promise<void>;
  stop(): Promise<void>;
}

/** What conditions are evaluated against (`core.condition.*`). */
export interface ConditionContext {
  flow: Flow;
  trigger: Trigger;
  /** Schedule triggers: the scheduled date (`trigger.date`), in the trigger's `timezone` when given. */
  date?: Date;
  timezone?: string;
  /** Flow triggers: the execution that just ended. */
  execution?: import('../core/types.js').Execution;
  /** Variables ExpressionCondition renders against (`trigger.*`, `flow.*`, `execution.*`...). */
  variables?: Record<string, unknown>;
}

/** True when every condition holds (no conditions: true). MultipleCondition state is durable (TriggerStateStore). */
export type ConditionEvaluator = (conditions: unknown[] | undefined, ctx: ConditionContext) => Promise<boolean>;
