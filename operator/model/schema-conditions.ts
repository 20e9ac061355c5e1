// Property schemas (JSON Schema draft-07) of the trigger conditions (`core.condition.*`), checked when a flow is
// saved so that a bad condition is rejected with the field named (`triggers[0].conditions[1].dayOfWeek`).
// Enumerated properties also accept a `{{ }}` template (rendered when the condition is evaluated).
import { ExecutionStates } from '../core/types.js';
import { BOOL, DURATION, LABELS, STRING, ref, type Schema } from './schema-common.js';
import { tag } from './schema-roles.js';
import { CONDITION_NAMES, PREFIX } from './task-types.js';

type ConditionName = (typeof CONDITION_NAMES)[number];

/** An enumerated string, or a template expression (checked at evaluation time). */
const tplEnum = (values: readonly string[]): Schema => ({ type: 'string', if: { format: 'template' }, else: { enum: [...values] } });

const DAY_OF_WEEK = tplEnum(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY']);
const STATES: Schema = { type: 'array', items: { type: 'string', enum: [...ExecutionStates] } };
const LIST: Schema = { type: 'array', minItems: 1, items: ref('condition') };
const TEMPLATE_OR_BOOL: Schema = { type: ['string', 'boolean'] };
const CONDITION_ID = tag({ type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9_-]*$' }, { kind: 'id', dots: false });
const TIME_WINDOW: Schema = {
  type: 'object',
  properties: {
    type: tplEnum(['DURATION_WINDOW', 'SLIDING_WINDOW', 'DAILY_TIME_DEADLINE', 'DAILY_TIME_WINDOW']),
    window: DURATION, windowAdvance: DURATION, deadline: STRING, startTime: STRING, endTime: STRING,
  },
  additionalProperties: false,
};

interface ConditionSchema { properties: Record<string, Schema>; required?: string[] }

/** One entry per condition type: the compiler rejects a missing one. */
export const CONDITION_SCHEMAS: Record<ConditionName, ConditionSchema> = {
  DateTimeBetweenCondition: { properties: { date: STRING, after: STRING, before: STRING } },
  DayWeekCondition: { properties: { date: STRING, dayOfWeek: DAY_OF_WEEK }, required: ['dayOfWeek'] },
  DayWeekInMonthCondition: {
    properties: { date: STRING, dayOfWeek: DAY_OF_WEEK, dayInMonth: tplEnum(['FIRST', 'SECOND', 'THIRD', 'FOURTH', 'LAST']) },
    required: ['dayOfWeek', 'dayInMonth'],
  },
  NotCondition: { properties: { conditions: LIST }, required: ['conditions'] },
  OrCondition: { properties: { conditions: LIST }, required: ['conditions'] },
  WeekendCondition: { properties: { date: STRING } },
  PublicHolidayCondition: { properties: { date: STRING, country: STRING, subDivision: STRING } },
  TimeBetweenCondition: { properties: { date: STRING, after: STRING, before: STRING } },
  ExecutionFlowCondition: { properties: { namespace: STRING, flowId: STRING }, required: ['namespace', 'flowId'] },
  ExecutionNamespaceCondition: {
    properties: { namespace: STRING, comparison: tplEnum(['EQUALS', 'PREFIX', 'SUFFIX']), prefix: BOOL },
    required: ['namespace'],
  },
  ExecutionLabelsCondition: { properties: { labels: LABELS }, required: ['labels'] },
  ExecutionOutputsCondition: { properties: { expression: TEMPLATE_OR_BOOL }, required: ['expression'] },
  ExpressionCondition: { properties: { expression: TEMPLATE_OR_BOOL }, required: ['expression'] },
  ExecutionStatusCondition: { properties: { in: STATES, notIn: STATES } },
  MultipleCondition: {
    properties: {
      id: CONDITION_ID,
      window: DURATION,
      windowAdvance: DURATION,
      resetOnSuccess: BOOL,
      timeWindow: TIME_WINDOW,
      sla: TIME_WINDOW,
      conditions: { type: 'object', minProperties: 1, additionalProperties: ref('condition') },
    },
    required: ['conditions'],
  },
};

/** `if type = X then <X's properties>` for every condition type (added to the flow schema's `condition`). */
export function conditionDispatch(): Schema[] {
  return Object.entries(CONDITION_SCHEMAS).map(([name, s]) => ({
    if: { properties: { type: { const: `${PREFIX}core.condition.${name}` } }, required: ['type'] },
    then: {
      properties: { type: STRING, ...s.properties },
      ...(s.required ? { required: s.required } : {}),
      additionalProperties: false,
    },
  }));
}
