// Save-time validation of trigger conditions: each bad condition is rejected with the field named; good ones
// (including Kestra spellings, templates in enumerated fields and nested Not/Or/Multiple) are accepted.
import { describe, expect, it } from 'vitest';
import { FlowValidationError, type ValidationIssue } from './errors.js';
import { parseFlow } from './flow.js';

const C = 'io.kestra.plugin.core.condition.';
const flowWith = (conditions: string, trigger = 'type: ai.service.plugin.core.trigger.Flow') => `id: f
namespace: company.team
tasks:
  - { id: l, type: ai.service.plugin.core.log.Log, message: hi }
triggers:
  - id: t
    ${trigger}
    conditions:
${conditions}`;

function issuesOf(source: string): ValidationIssue[] {
  try {
    parseFlow(source);
  } catch (err) {
    if (err instanceof FlowValidationError) return err.errors;
    throw err;
  }
  return [];
}

describe('invalid conditions', () => {
  it.each([
    ['day of week', `      - { type: ${C}ExecutionStatusCondition, in: [SUCCESS] }\n      - { type: ${C}DayWeekCondition, dayOfWeek: FUNDAY }`,
      'triggers[0].conditions[1].dayOfWeek', 'not one of'],
    ['missing day of week', `      - { type: ${C}DayWeekCondition }`, 'triggers[0].conditions[0].dayOfWeek', 'required'],
    ['day in month', `      - { type: ${C}DayWeekInMonthCondition, dayOfWeek: MONDAY, dayInMonth: FIFTH }`,
      'triggers[0].conditions[0].dayInMonth', 'not one of'],
    ['unknown property', `      - { type: ${C}WeekendCondition, weekday: true }`, 'triggers[0].conditions[0].weekday', 'unknown property'],
    ['status list', `      - { type: ${C}ExecutionStatusCondition, in: [DONE] }`, 'triggers[0].conditions[0].in[0]', 'not one of'],
    ['flow condition', `      - { type: ${C}ExecutionFlowCondition, namespace: a }`, 'triggers[0].conditions[0].flowId', 'required'],
    ['namespace comparison', `      - { type: ${C}ExecutionNamespaceCondition, namespace: a, comparison: CONTAINS }`,
      'triggers[0].conditions[0].comparison', 'not one of'],
    ['labels', `      - { type: ${C}ExecutionLabelsCondition }`, 'triggers[0].conditions[0].labels', 'required'],
    ['expression', `      - { type: ${C}ExpressionCondition }`, 'triggers[0].conditions[0].expression', 'required'],
    ['empty Not', `      - { type: ${C}NotCondition, conditions: [] }`, 'triggers[0].conditions[0].conditions', 'must not be empty'],
    ['nested in Or', `      - { type: ${C}OrCondition, conditions: [{ type: ${C}WeekendCondition }, { type: ${C}DayWeekCondition, dayOfWeek: 1 }] }`,
      'triggers[0].conditions[0].conditions[1].dayOfWeek', 'must be a string'],
    ['nested in Multiple', `      - { type: ${C}MultipleCondition, id: m, conditions: { a: { type: ${C}ExecutionFlowCondition, flowId: x } } }`,
      'triggers[0].conditions[0].conditions.a.namespace', 'required'],
    ['Multiple id', `      - { type: ${C}MultipleCondition, id: "bad id", conditions: { a: { type: ${C}WeekendCondition } } }`,
      'triggers[0].conditions[0].id', 'not a valid id'],
    ['Multiple advance', `      - { type: ${C}MultipleCondition, windowAdvance: 2h, conditions: { a: { type: ${C}WeekendCondition } } }`,
      'triggers[0].conditions[0].windowAdvance', 'ISO 8601 duration'],
    ['unknown country', `      - { type: ${C}PublicHolidayCondition, country: XX }`, 'triggers[0].conditions[0].country', 'not a known country'],
    ['unknown subdivision', `      - { type: ${C}PublicHolidayCondition, country: DE, subDivision: ZZ }`,
      'triggers[0].conditions[0].subDivision', 'not a known subdivision'],
    ['time between without bounds', `      - { type: ${C}TimeBetweenCondition }`, 'triggers[0].conditions[0]', 'needs `after` or `before`'],
    ['schedule conditions too', `      - { type: ${C}PublicHolidayCondition, country: Narnia }`, 'triggers[0].conditions[0].country', 'not a known country'],
  ])('%s → %s: %s', (_name, conditions, path, reason) => {
    const issues = issuesOf(flowWith(conditions));
    const at = issues.filter((i) => i.path === path).map((i) => i.message).join(' | ');
    expect(at || JSON.stringify(issues)).toContain(reason);
  });
});

describe('valid conditions', () => {
  it.each([
    ['every date condition', `      - { type: ${C}DayWeek, dayOfWeek: MONDAY, date: "{{ trigger.date }}" }
      - { type: ${C}DayWeekInMonthCondition, dayOfWeek: FRIDAY, dayInMonth: LAST }
      - { type: ${C}DateTimeBetweenCondition, after: "2025-01-01T00:00:00Z" }
      - { type: ${C}TimeBetweenCondition, after: "08:00:00", before: "18:00:00+02:00" }
      - { type: ${C}NotCondition, conditions: [{ type: ${C}WeekendCondition }, { type: ${C}PublicHolidayCondition, country: FR }] }
      - { type: ${C}PublicHolidayCondition, country: DE, subDivision: DE-BY }
      - { type: ${C}PublicHolidayCondition, country: "{{ vars.country }}" }`, 'type: ai.service.plugin.core.trigger.Schedule\n    cron: "@daily"'],
    ['every execution condition', `      - { type: ${C}ExecutionStatusCondition, in: [SUCCESS, WARNING], notIn: [FAILED] }
      - { type: ${C}ExecutionFlowCondition, namespace: a, flowId: b }
      - { type: ${C}ExecutionNamespaceCondition, namespace: a, comparison: PREFIX }
      - { type: ${C}ExecutionNamespaceCondition, namespace: a, prefix: true }
      - { type: ${C}ExecutionLabelsCondition, labels: { env: prod } }
      - { type: ${C}ExecutionOutputsCondition, expression: "{{ trigger.outputs.x == 1 }}" }
      - { type: ${C}Expression, expression: "{{ true }}" }
      - { type: ${C}DayWeekCondition, dayOfWeek: "{{ vars.day }}" }
      - type: ${C}MultipleCondition
        id: both
        window: PT12H
        windowAdvance: PT0S
        conditions:
          flow-a: { type: ${C}ExecutionFlowCondition, namespace: a, flowId: x }
          flow_b: { type: ${C}ExecutionFlowCondition, namespace: a, flowId: y }`, undefined],
  ])('%s', (_name, conditions, trigger) => {
    expect(issuesOf(flowWith(conditions, trigger))).toEqual([]);
  });
});
