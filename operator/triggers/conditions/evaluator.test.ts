// The condition evaluator end to end on real SQLite stores and the real renderer: every condition type through
// the dispatch table, rendering of properties, the `{{ trigger.date }}` default in the trigger timezone,
// Not/Or nesting, MultipleCondition recording only events that pass the simple conditions, errors reported as false.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer } from '../../controller/secrets.js';
import type { Execution, Flow, Trigger } from '../../core/types.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import type { ConditionEvaluator } from '../types.js';
import { createConditionEvaluator } from './evaluator.js';

const C = 'io.kestra.plugin.core.condition.';
let dir: string;
let stores: EmbeddedStores;
let evaluate: ConditionEvaluator;
const errors: string[] = [];
let now = new Date('2024-05-10T08:00:00Z');

const flow: Flow = { id: 'listener', namespace: 'company.team', tasks: [], variables: { wanted: 'SUCCESS' } };
const trigger: Trigger = { id: 'on_flow', type: 'ai.service.plugin.core.trigger.Flow' };

function exec(over: Partial<Execution> = {}, state = 'SUCCESS'): Execution {
  return {
    id: 'e1', namespace: 'company.team.sub', flowId: 'upstream', flowRevision: 3, originalId: 'e1',
    state: { current: state as Execution['state']['current'], histories: [], startDate: '2024-05-10T07:00:00Z', endDate: '2024-05-10T07:59:00Z' },
    labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'data' }], inputs: {}, outputs: { rows: 42 }, taskRunList: [],
    ...over,
  };
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cond-'));
  stores = openEmbeddedStores(dir);
  evaluate = createConditionEvaluator({
    stores, renderer: createSecretRenderer(stores, { SECRET_DAY: Buffer.from('FRIDAY').toString('base64') }),
    clock: () => now, env: {}, onError: (err) => { errors.push((err as Error).message); },
  });
});
afterAll(async () => { await stores.close(); rmSync(dir, { recursive: true, force: true }); });

describe('execution conditions', () => {
  const e = exec();
  it.each([
    [{ type: `${C}ExecutionFlowCondition`, namespace: 'company.team.sub', flowId: 'upstream' }, true],
    [{ type: `${C}ExecutionFlow`, namespace: 'company.team', flowId: 'upstream' }, false],
    [{ type: `${C}ExecutionNamespaceCondition`, namespace: 'company.team.sub' }, true],
    [{ type: `${C}ExecutionNamespaceCondition`, namespace: 'company.team' }, false],
    [{ type: `${C}ExecutionNamespaceCondition`, namespace: 'company.team', comparison: 'PREFIX' }, true],
    [{ type: `${C}ExecutionNamespaceCondition`, namespace: 'company.team', prefix: true }, true],
    [{ type: `${C}ExecutionNamespaceCondition`, namespace: '.sub', comparison: 'SUFFIX' }, true],
    [{ type: `${C}ExecutionLabelsCondition`, labels: { env: 'prod' } }, true],
    [{ type: `${C}ExecutionLabelsCondition`, labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'ops' }] }, false],
    [{ type: `${C}ExecutionStatusCondition`, in: ['SUCCESS', 'WARNING'] }, true],
    [{ type: `${C}ExecutionStatusCondition`, in: ['FAILED'] }, false],
    [{ type: `${C}ExecutionStatusCondition`, notIn: ['FAILED'] }, true],
    [{ type: `${C}ExecutionStatusCondition`, in: ['SUCCESS'], notIn: ['SUCCESS'] }, false],
    [{ type: `${C}ExecutionOutputsCondition`, expression: '{{ trigger.outputs.rows > 40 }}' }, true],
    [{ type: `${C}ExecutionOutputsCondition`, expression: '{{ trigger.outputs.rows > 50 }}' }, false],
    [{ type: `${C}ExpressionCondition`, expression: "{{ execution.state == vars.wanted and flow.id == 'listener' }}" }, true],
    [{ type: `${C}ExpressionCondition`, expression: '{{ execution.labels.env == "dev" }}' }, false],
  ])('%j → %s', async (cond, expected) => {
    expect(await evaluate([cond], { flow, trigger, execution: e, variables: { vars: flow.variables } })).toBe(expected);
  });

  it('ExecutionOutputsCondition is false for an execution without outputs', async () => {
    const c = { type: `${C}ExecutionOutputsCondition`, expression: '{{ true }}' };
    expect(await evaluate([c], { flow, trigger, execution: exec({ outputs: {} }) })).toBe(false);
  });
});

describe('date conditions and the trigger date', () => {
  // Friday 10 May 2024 22:30 UTC is Saturday 00:30 in Paris.
  const date = new Date('2024-05-10T22:30:00Z');
  it.each([
    [{ type: `${C}DayWeekCondition`, dayOfWeek: 'SATURDAY' }, 'Europe/Paris', true],
    [{ type: `${C}DayWeekCondition`, dayOfWeek: 'SATURDAY' }, undefined, false],
    [{ type: `${C}DayWeekCondition`, dayOfWeek: "{{ secret('DAY') }}", date: '{{ trigger.date }}' }, undefined, true],
    [{ type: `${C}WeekendCondition` }, 'Europe/Paris', true],
    [{ type: `${C}WeekendCondition`, date: '2024-05-08T12:00:00Z' }, 'Europe/Paris', false],
    [{ type: `${C}TimeBetweenCondition`, after: '00:00:00', before: '01:00:00' }, 'Europe/Paris', true],
    [{ type: `${C}TimeBetweenCondition`, after: '00:00:00', before: '01:00:00' }, 'UTC', false],
    [{ type: `${C}DateTimeBetweenCondition`, after: '2024-05-11T00:00:00' }, 'Europe/Paris', true],
    [{ type: `${C}DateTimeBetweenCondition`, after: '2024-05-11T00:00:00' }, 'UTC', false],
    [{ type: `${C}DayWeekInMonthCondition`, dayOfWeek: 'SATURDAY', dayInMonth: 'SECOND' }, 'Europe/Paris', true],
    [{ type: `${C}PublicHolidayCondition`, country: 'FR', date: '2024-05-08T12:00:00+02:00' }, undefined, true],
    [{ type: `${C}PublicHolidayCondition`, country: 'US', date: '2024-05-08T12:00:00+02:00' }, undefined, false],
    [{ type: `${C}NotCondition`, conditions: [{ type: `${C}WeekendCondition` }, { type: `${C}PublicHolidayCondition`, country: 'FR' }] }, 'Europe/Paris', false],
    [{ type: `${C}NotCondition`, conditions: [{ type: `${C}WeekendCondition` }] }, 'UTC', true],
    [{ type: `${C}OrCondition`, conditions: [{ type: `${C}DayWeekCondition`, dayOfWeek: 'MONDAY' }, { type: `${C}WeekendCondition` }] }, 'Europe/Paris', true],
    [{ type: `${C}OrCondition`, conditions: [{ type: `${C}DayWeekCondition`, dayOfWeek: 'MONDAY' }, { type: `${C}WeekendCondition` }] }, 'UTC', false],
  ])('%j in %s → %s', async (cond, timezone, expected) => {
    expect(await evaluate([cond], { flow, trigger, date, ...(timezone ? { timezone } : {}) })).toBe(expected);
  });

  it('without a trigger date, the clock is used', async () => {
    now = new Date('2024-05-11T10:00:00Z');
    expect(await evaluate([{ type: `${C}WeekendCondition` }], { flow, trigger })).toBe(true);
    now = new Date('2024-05-10T08:00:00Z');
  });
});

describe('lists, MultipleCondition and errors', () => {
  it('no conditions hold; all of a list must hold', async () => {
    expect(await evaluate(undefined, { flow, trigger })).toBe(true);
    expect(await evaluate([], { flow, trigger })).toBe(true);
    const e = exec();
    expect(await evaluate([
      { type: `${C}ExecutionStatusCondition`, in: ['SUCCESS'] }, { type: `${C}ExecutionFlowCondition`, namespace: 'x', flowId: 'y' },
    ], { flow, trigger, execution: e })).toBe(false);
  });

  it('MultipleCondition counts only events that pass the other conditions, then fires once', async () => {
    const t2: Trigger = { id: 'multi_t', type: trigger.type };
    const conds = [
      { type: `${C}ExecutionStatusCondition`, in: ['SUCCESS'] },
      {
        type: `${C}MultipleCondition`, id: 'both', window: 'PT1H',
        conditions: {
          a: { type: `${C}ExecutionFlowCondition`, namespace: 'n', flowId: 'a' },
          b: { type: `${C}ExecutionFlowCondition`, namespace: 'n', flowId: 'b' },
        },
      },
    ];
    const run = (flowId: string, state = 'SUCCESS') => evaluate(conds, { flow, trigger: t2, execution: exec({ namespace: 'n', flowId }, state) });
    expect(await run('a')).toBe(false);
    expect(await run('b', 'FAILED')).toBe(false); // filtered out: not recorded
    expect((await stores.triggers.get(flow.namespace, flow.id, 'multi_t/both'))?.state.window).toMatchObject({ results: { a: true } });
    expect(await run('b')).toBe(true);
    expect(await run('b')).toBe(false);
  });

  it('a condition that cannot be evaluated is reported and counts as false', async () => {
    errors.length = 0;
    expect(await evaluate([{ type: `${C}DayWeekCondition`, dayOfWeek: 'FUNDAY' }], { flow, trigger })).toBe(false);
    expect(await evaluate([{ type: `${C}ExecutionFlowCondition`, namespace: 'a', flowId: 'b' }], { flow, trigger })).toBe(false);
    expect(await evaluate([{ type: `${C}Nope` }], { flow, trigger })).toBe(false);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatch(/day of the week/);
    expect(errors[1]).toMatch(/needs an execution/);
    expect(errors[2]).toMatch(/Unknown condition type/);
  });
});
