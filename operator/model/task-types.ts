// Canonical plugin type names (prefix `ai.service.plugin.`) and the aliases accepted for them:
// `io.kestra.plugin.*`, the older `io.kestra.core.tasks.*` / `io.kestra.core.models.*` names, and case variants (Dag).
// Task types declared with definePlugin come from the plugin catalog (operator/plugins/catalog.ts); what derives from
// it is rebuilt when a package registers more (PLUGINS setting).
import { memoByCatalog, pluginDefinitions } from '../plugins/catalog.js';
import { PLUGIN_PREFIX } from '../plugins/define.js';
import { FLOWABLES } from './flowable-types.js';

export const PREFIX = PLUGIN_PREFIX;

export const TASK_RUNNER_TYPES = [`${PREFIX}core.runner.Process`, `${PREFIX}scripts.runner.docker.Docker`] as const;

export const TRIGGER_TYPES = {
  schedule: `${PREFIX}core.trigger.Schedule`,
  flow: `${PREFIX}core.trigger.Flow`,
  webhook: `${PREFIX}core.trigger.Webhook`,
} as const;

export const CONDITION_NAMES = [
  'DateTimeBetweenCondition', 'DayWeekCondition', 'DayWeekInMonthCondition', 'NotCondition', 'OrCondition',
  'WeekendCondition', 'PublicHolidayCondition', 'TimeBetweenCondition', 'ExecutionFlowCondition',
  'ExecutionNamespaceCondition', 'ExecutionLabelsCondition', 'ExecutionOutputsCondition', 'ExpressionCondition',
  'ExecutionStatusCondition', 'MultipleCondition',
] as const;
export const CONDITION_TYPES: readonly string[] = CONDITION_NAMES.map((n) => `${PREFIX}core.condition.${n}`);
/** The conditions a flow's (deprecated) `listeners` may hold: those about the ended execution itself. */
export const LISTENER_CONDITIONS = [
  'ExecutionStatusCondition', 'ExecutionFlowCondition', 'ExecutionNamespaceCondition', 'ExecutionLabelsCondition', 'NotCondition', 'OrCondition',
] as const satisfies readonly (typeof CONDITION_NAMES)[number][];
export type ListenerCondition = (typeof LISTENER_CONDITIONS)[number];

/** Types the engine creates itself (ForEachItem internals); never valid in a user flow. */
export function isInternalType(type: string): boolean {
  return type.includes('$');
}

export type TaskKind = 'flowable' | 'runnable';

/** The flowable task types (declared in flowable-types.ts). */
export const FLOWABLE_TYPES: readonly string[] = Object.values(FLOWABLES).map((f) => PREFIX + f.type);

const derived = memoByCatalog(() => {
  const runnable = pluginDefinitions().map((d) => d.type);
  const kinds = new Map<string, TaskKind>([
    ...FLOWABLE_TYPES.map((t) => [t, 'flowable'] as const),
    ...runnable.map((t) => [t, 'runnable'] as const),
  ]);
  const tasks = [...FLOWABLE_TYPES, ...runnable];
  /** Every canonical name we know (tasks, runners, triggers, conditions), for case-insensitive matching. */
  const known = [...tasks, ...TASK_RUNNER_TYPES, ...Object.values(TRIGGER_TYPES), ...CONDITION_TYPES];
  /** Full-name aliases a definition declares (older class names), by lower-case name. */
  const definedAliases = new Map(pluginDefinitions().flatMap((d) => d.aliases.map((a) => [a.toLowerCase(), d.type] as const)));
  return { runnable, kinds, tasks, byLower: new Map(known.map((t) => [t.toLowerCase(), t])), definedAliases };
});

/** Canonical names of the runnable task types (built in and registered by packages). */
export function runnableTaskTypes(): readonly string[] {
  return derived().runnable;
}

/** Canonical names of every task type (flowable and runnable). */
export function taskTypes(): readonly string[] {
  return derived().tasks;
}

/** Whole-name aliases of old Kestra class names (after the `io.kestra.` part). */
const EXACT_ALIASES: Record<string, string> = {
  'core.tasks.flows.Flow': 'core.flow.Subflow',
  'core.tasks.flows.Worker': 'core.flow.WorkingDirectory',
  'core.tasks.flows.Dag': 'core.flow.DAG',
  'core.tasks.log.Log': 'core.log.Log',
  'core.models.tasks.runners.types.ProcessTaskRunner': 'core.runner.Process',
  'plugin.scripts.runner.docker.DockerTaskRunner': 'scripts.runner.docker.Docker',
  'core.models.triggers.types.Schedule': 'core.trigger.Schedule',
  'core.models.triggers.types.Flow': 'core.trigger.Flow',
  'core.models.triggers.types.Webhook': 'core.trigger.Webhook',
};

/** Types Kestra renamed, under our prefix (`WaitFor` became `LoopUntil` and stays its alias). */
const RENAMED = new Map<string, string>([[`${PREFIX}core.flow.waitfor`, `${PREFIX}core.flow.LoopUntil`]]);

/** Package aliases of old Kestra names: `io.kestra.<from><Name>` → `<to><Name>`. */
const PACKAGE_ALIASES: [string, string][] = [
  ['core.tasks.flows.', 'core.flow.'],
  ['core.tasks.executions.', 'core.execution.'],
  ['core.tasks.debugs.', 'core.debug.'],
  ['core.tasks.log.', 'core.log.'],
  ['core.tasks.templating.', 'core.templating.'],
  ['core.tasks.kv.', 'core.kv.'],
  ['core.tasks.storages.', 'core.storage.'],
  ['core.tasks.', 'core.'],
  ['core.models.conditions.types.', 'core.condition.'],
  ['core.models.triggers.types.', 'core.trigger.'],
  ['plugin.', ''],
];

function fromKestra(rest: string): string {
  const exact = Object.hasOwn(EXACT_ALIASES, rest) ? EXACT_ALIASES[rest] : undefined;
  if (exact) return PREFIX + exact;
  for (const [from, to] of PACKAGE_ALIASES) {
    if (rest.startsWith(from)) return PREFIX + to + rest.slice(from.length);
  }
  return 'io.kestra.' + rest;
}

/**
 * Canonical name of a plugin type: Kestra aliases map to the `ai.service.plugin.` prefix and known names are
 * matched case-insensitively. Unknown names come back with only the prefix rewritten (or unchanged).
 */
export function normalizeType(type: string): string {
  if (typeof type !== 'string') return type;
  let t = type.trim();
  const { definedAliases, byLower } = derived();
  const defined = definedAliases.get(t.toLowerCase());
  if (defined) return defined;
  if (t.startsWith('io.kestra.')) t = fromKestra(t.slice('io.kestra.'.length));
  const known = byLower.get(t.toLowerCase()) ?? RENAMED.get(t.toLowerCase());
  if (known) return known;
  // Condition names without the `Condition` suffix (newer Kestra spelling).
  if (t.startsWith(`${PREFIX}core.condition.`)) return byLower.get(`${t}Condition`.toLowerCase()) ?? t;
  return t;
}

/** Canonical name and kind of a task type, or undefined when the type is not a task we know. */
export function taskTypeInfo(type: string): { type: string; kind: TaskKind } | undefined {
  const canonical = normalizeType(type);
  const kind = derived().kinds.get(canonical);
  return kind ? { type: canonical, kind } : undefined;
}

/** Short name after the prefix ("core.log.Log"), for messages. */
export function shortType(type: string): string {
  return type.startsWith(PREFIX) ? type.slice(PREFIX.length) : type;
}
