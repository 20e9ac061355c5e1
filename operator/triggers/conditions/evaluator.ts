// The condition evaluator of the trigger service: renders each condition's properties with the trigger renderer
// and the context variables, dispatches on the condition type (one handler per type, compiler-checked), and keeps
// MultipleCondition windows durable. Simple conditions are checked first; MultipleConditions only record what the
// current event met once every simple condition holds (as Kestra does), so a filtered-out event never counts.
import { DateTime } from 'luxon';
import { truthy } from '../../core/flowables.js';
import { dictFrom } from '../../core/keyed.js';
import type { Execution } from '../../core/types.js';
import { CONDITION_NAMES, normalizeType, PREFIX } from '../../model/task-types.js';
import type { ConditionContext, ConditionEvaluator, TriggerServiceDeps } from '../types.js';
import { ConditionError, dateTimeBetween, dayWeek, dayWeekInMonth, parseDate, parseTime, timeBetween, weekend } from './dates.js';
import { executionFlow, executionLabels, executionNamespace, executionStatus, type ExecutionView } from '../../core/execution-conditions.js';
import { whereMatches, type ExecutionFilter } from './filters.js';
import { publicHoliday } from './holidays.js';
import { recordMultiple, type WindowSpec } from './multiple.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export type ConditionName = (typeof CONDITION_NAMES)[number];
const CONDITION_PREFIX = `${PREFIX}core.condition.`;
/** Internal (Flow trigger `preconditions.flows[]`): namespace, flowId, states and labels all match; never valid in a flow source. */
export const UPSTREAM_CONDITION = `${CONDITION_PREFIX}$Upstream`;
/** Internal (Flow trigger `preconditions.where[]`): execution filters combined with `operand`. */
export const FILTER_CONDITION = `${CONDITION_PREFIX}$Filter`;

type InternalName = '$Upstream' | '$Filter';
export const MULTIPLE_CONDITION = `${CONDITION_PREFIX}MultipleCondition`;

interface Scope {
  ctx: ConditionContext;
  vars: Record<string, unknown>;
  zone: string;
  /** Where the condition sits (`conditions[1].conditions[0]`), for error messages and MultipleCondition ids. */
  path: string;
}

type Handler = (c: Obj, s: Scope) => boolean | Promise<boolean>;

const DEFAULT_DATE = /^\{\{\s*trigger\.date\s*\}\}$/;

/** The condition's short name (`DayWeekCondition`), or undefined for an unknown type. */
export function conditionName(type: unknown): ConditionName | InternalName | undefined {
  if (typeof type !== 'string') return undefined;
  if (type === UPSTREAM_CONDITION) return '$Upstream';
  if (type === FILTER_CONDITION) return '$Filter';
  const t = normalizeType(type);
  const name = t.startsWith(CONDITION_PREFIX) ? t.slice(CONDITION_PREFIX.length) : '';
  return (CONDITION_NAMES as readonly string[]).includes(name) ? (name as ConditionName) : undefined;
}

function executionView(s: Scope, what: string): ExecutionView {
  if (!s.ctx.execution) throw new ConditionError(`${what} needs an execution (it applies to Flow triggers and webhooks)`);
  return s.ctx.execution;
}

export function executionVariables(e: Execution): Record<string, unknown> {
  return {
    id: e.id, namespace: e.namespace, flowId: e.flowId, flowRevision: e.flowRevision, state: e.state.current,
    startDate: e.state.startDate, endDate: e.state.endDate, originalId: e.originalId,
    labels: dictFrom((e.labels ?? []).map((l) => [l.key, l.value] as const)), outputs: e.outputs ?? {},
  };
}

/** The variables conditions are rendered with: the caller's, plus `flow`, `execution` and `trigger.date` when missing. */
export function conditionVariables(ctx: ConditionContext, zone: string): Record<string, unknown> {
  const vars: Record<string, unknown> = { ...(ctx.variables ?? {}) };
  vars.flow ??= { id: ctx.flow.id, namespace: ctx.flow.namespace, revision: ctx.flow.revision };
  if (ctx.execution && vars.execution === undefined) vars.execution = executionVariables(ctx.execution);
  const trigger = isObj(vars.trigger) ? { ...vars.trigger } : {};
  if (trigger.date === undefined && ctx.date) trigger.date = DateTime.fromJSDate(ctx.date, { zone }).toISO();
  vars.trigger = trigger;
  return vars;
}

export function createConditionEvaluator(deps: TriggerServiceDeps): ConditionEvaluator {
  const render = (v: unknown, s: Scope): unknown => (typeof v === 'string' ? deps.renderer.renderTyped(v, s.vars) : v);
  const str = (v: unknown, s: Scope): string | undefined => {
    const r = render(v, s);
    return r === undefined || r === null ? undefined : String(r);
  };

  /** The tested date: `date` rendered, defaulting to the trigger date (schedule date in the trigger timezone). */
  function dateOf(c: Obj, s: Scope): DateTime {
    const raw = c.date;
    if (raw === undefined || (typeof raw === 'string' && DEFAULT_DATE.test(raw.trim()))) {
      if (s.ctx.date) return DateTime.fromJSDate(s.ctx.date, { zone: s.zone });
      const td = isObj(s.vars.trigger) ? s.vars.trigger.date : undefined;
      return td !== undefined && td !== null ? parseDate(td, s.zone) : DateTime.fromJSDate(deps.clock(), { zone: s.zone });
    }
    return parseDate(render(raw, s), s.zone);
  }
  const optDate = (v: unknown, s: Scope): DateTime | undefined => {
    const r = render(v, s);
    return r === undefined || r === null || r === '' ? undefined : parseDate(r, s.zone);
  };
  const optTime = (v: unknown, s: Scope) => {
    const r = str(v, s);
    return r === undefined || r === '' ? undefined : parseTime(r);
  };
  const children = (c: Obj, s: Scope): [Obj, Scope][] => {
    if (!Array.isArray(c.conditions) || c.conditions.length === 0) throw new ConditionError('`conditions` must be a non-empty list');
    return c.conditions.map((x, i) => [isObj(x) ? x : {}, { ...s, path: `${s.path}.conditions[${i}]` }]);
  };

  const HANDLERS: Record<ConditionName | InternalName, Handler> = {
    DateTimeBetweenCondition: (c, s) => dateTimeBetween(dateOf(c, s), optDate(c.after, s), optDate(c.before, s)),
    DayWeekCondition: (c, s) => dayWeek(dateOf(c, s), str(c.dayOfWeek, s)),
    DayWeekInMonthCondition: (c, s) => dayWeekInMonth(dateOf(c, s), str(c.dayOfWeek, s), str(c.dayInMonth, s)),
    WeekendCondition: (c, s) => weekend(dateOf(c, s)),
    TimeBetweenCondition: (c, s) => timeBetween(dateOf(c, s), optTime(c.after, s), optTime(c.before, s)),
    PublicHolidayCondition: (c, s) => publicHoliday(dateOf(c, s), str(c.country, s) || undefined, str(c.subDivision, s) || undefined),
    NotCondition: async (c, s) => {
      for (const [child, cs] of children(c, s)) if (await one(child, cs)) return false;
      return true;
    },
    OrCondition: async (c, s) => {
      for (const [child, cs] of children(c, s)) if (await one(child, cs)) return true;
      return false;
    },
    $Upstream: (c, s) => {
      const e = executionView(s, 'preconditions');
      return (c.namespace === undefined || e.namespace === c.namespace) && (c.flowId === undefined || e.flowId === c.flowId)
        && executionStatus(e, c.states) && (c.labels === undefined || executionLabels(e, c.labels));
    },
    $Filter: (c, s) => {
      const filters = (Array.isArray(c.filters) ? c.filters.filter(isObj) : []) as unknown as ExecutionFilter[];
      return whereMatches(executionView(s, 'preconditions'), filters, c.operand, (t) => deps.renderer.render(t, s.vars));
    },
    ExecutionFlowCondition: (c, s) => executionFlow(executionView(s, 'ExecutionFlowCondition'), str(c.namespace, s), str(c.flowId, s)),
    ExecutionNamespaceCondition: (c, s) =>
      executionNamespace(executionView(s, 'ExecutionNamespaceCondition'), str(c.namespace, s), c.comparison === undefined ? undefined : str(c.comparison, s), c.prefix),
    ExecutionLabelsCondition: (c, s) => executionLabels(executionView(s, 'ExecutionLabelsCondition'), render(c.labels, s)),
    ExecutionStatusCondition: (c, s) => executionStatus(executionView(s, 'ExecutionStatusCondition'), c.in, c.notIn),
    ExecutionOutputsCondition: (c, s) => {
      const exec = executionView(s, 'ExecutionOutputsCondition');
      if (!exec.outputs || Object.keys(exec.outputs).length === 0) return false;
      const trigger = { ...(isObj(s.vars.trigger) ? s.vars.trigger : {}), outputs: exec.outputs };
      return truthy(deps.renderer.renderTyped(c.expression, { ...s.vars, trigger }));
    },
    ExpressionCondition: (c, s) => truthy(render(c.expression, s)),
    MultipleCondition: () => { throw new ConditionError('MultipleCondition is only allowed directly in a trigger\'s `conditions`'); },
  };

  async function one(c: Obj, s: Scope): Promise<boolean> {
    const name = conditionName(c.type);
    if (!name) throw new ConditionError(`Unknown condition type \`${String(c.type)}\``);
    return HANDLERS[name](c, s);
  }

  async function multiple(c: Obj, s: Scope): Promise<boolean> {
    const named = isObj(c.conditions) ? Object.entries(c.conditions) : [];
    if (named.length === 0) throw new ConditionError('MultipleCondition needs `conditions` (a map of name to condition)');
    const met: string[] = [];
    for (const [name, sub] of named) {
      const c2 = isObj(sub) ? sub : {};
      const s2 = { ...s, path: `${s.path}.conditions.${name}` };
      if (await guarded(() => one(c2, s2), s2, c2.type)) met.push(name);
    }
    const tw = isObj(c.timeWindow) ? c.timeWindow : isObj(c.sla) ? c.sla : {};
    const spec: WindowSpec = {
      window: String(c.window ?? tw.window ?? 'P1D'),
      windowAdvance: String(c.windowAdvance ?? tw.windowAdvance ?? 'PT0S'),
      resetOnSuccess: (c.resetOnSuccess ?? tw.resetOnSuccess) !== false,
    };
    const conditionId = typeof c.id === 'string' && c.id !== '' ? c.id : s.path;
    const key = { namespace: s.ctx.flow.namespace, flowId: s.ctx.flow.id, triggerId: s.ctx.trigger.id, conditionId };
    return recordMultiple(deps.stores.triggers, key, met, named.map(([n]) => n), spec, deps.clock, s.zone);
  }

  const guarded = async (f: () => Promise<boolean>, s: Scope, type: unknown): Promise<boolean> => {
    try {
      return await f();
    } catch (err) {
      const where = `condition ${s.path} (${String(type)}) of trigger ${s.ctx.flow.namespace}.${s.ctx.flow.id}.${s.ctx.trigger.id}`;
      deps.onError(err, where);
      return false;
    }
  };

  return async (conditions, ctx) => {
    const list = (conditions ?? []).map((c) => (isObj(c) ? c : {}));
    if (list.length === 0) return true;
    const zone = ctx.timezone ?? 'UTC';
    const vars = conditionVariables(ctx, zone);
    const scope = (i: number): Scope => ({ ctx, vars, zone, path: `conditions[${i}]` });
    const isMultiple = (c: Obj) => conditionName(c.type) === 'MultipleCondition';
    for (const [i, c] of list.entries()) {
      if (!isMultiple(c) && !(await guarded(() => one(c, scope(i)), scope(i), c.type))) return false;
    }
    let all = true;
    for (const [i, c] of list.entries()) {
      if (isMultiple(c) && !(await guarded(() => multiple(c, scope(i)), scope(i), c.type))) all = false;
    }
    return all;
  };
}
