// Pure parts of the Flow trigger: transition keys (first end = the execution id), listened states, the self-trigger
// guard, the trigger variables and preconditions turned into one MultipleCondition.
import { describe, expect, it } from 'vitest';
import type { Execution, Flow, Trigger } from '../core/types.js';
import { FILTER_CONDITION, MULTIPLE_CONDITION, UPSTREAM_CONDITION } from './conditions/evaluator.js';
import { flowTriggerVariables, mayReact, preconditionsCondition, transitionKey, triggerStates } from './flow-trigger-match.js';

const FLOW_T = 'ai.service.plugin.core.trigger.Flow';
const exec = (states: string[], over: Partial<Execution> = {}): Execution => ({
  id: 'E', namespace: 'n', flowId: 'up', flowRevision: 2, originalId: 'E', labels: [{ key: 'k', value: 'v' }], inputs: {},
  outputs: { o: 1 }, taskRunList: [],
  state: {
    current: states[states.length - 1] as Execution['state']['current'], startDate: '2024-01-01T00:00:00Z',
    histories: states.map((s, i) => ({ state: s as Execution['state']['current'], date: `2024-01-01T00:0${i}:00Z` })),
  },
  ...over,
});

describe('transitionKey', () => {
  it.each([
    [['CREATED', 'RUNNING', 'SUCCESS'], 'E'],
    [['CREATED', 'RUNNING', 'FAILED', 'RESTARTED', 'RUNNING', 'SUCCESS'], 'E#2'],
    [['CREATED', 'RUNNING', 'PAUSED'], 'E:PAUSED#1'],
    [['CREATED', 'RUNNING', 'PAUSED', 'RUNNING', 'PAUSED'], 'E:PAUSED#2'],
  ])('%j → %s', (states, key) => { expect(transitionKey(exec(states))).toBe(key); });
});

describe('states and the self-trigger guard', () => {
  const flow: Flow = { id: 'me', namespace: 'n', tasks: [] };
  const t = (extra: Partial<Trigger> = {}): Trigger => ({ id: 't', type: FLOW_T, ...extra });
  it('defaults to terminal states', () => {
    expect(triggerStates(t())).toEqual(['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED', 'RETRIED']);
    expect(triggerStates(t({ states: ['paused'] }))).toEqual(['PAUSED']);
  });
  it.each([
    ['other flow, terminal', t(), exec(['RUNNING', 'SUCCESS']), true],
    ['other flow, not listened', t(), exec(['RUNNING', 'PAUSED']), false],
    ['PAUSED listened', t({ states: ['PAUSED'] }), exec(['RUNNING', 'PAUSED']), true],
    ['own execution, no conditions', t(), exec(['RUNNING', 'SUCCESS'], { flowId: 'me' }), false],
    ['own execution, explicit conditions', t({ conditions: [{ type: 'x' }] }), exec(['RUNNING', 'SUCCESS'], { flowId: 'me' }), true],
    ['own execution, preconditions', t({ preconditions: { flows: [] } }), exec(['RUNNING', 'SUCCESS'], { flowId: 'me' }), true],
  ])('%s → %s', (_n, trig, e, expected) => { expect(mayReact(flow, trig, e)).toBe(expected); });
});

it('flowTriggerVariables', () => {
  const v = flowTriggerVariables(exec(['RUNNING', 'SUCCESS'], { taskRunList: [
    { id: 'r1', taskId: 'a', state: { current: 'FAILED' } }, { id: 'r2', taskId: 'b', state: { current: 'SUCCESS' } },
  ] as unknown as Execution['taskRunList'] }));
  expect(v).toMatchObject({
    executionId: 'E', namespace: 'n', flowId: 'up', flowRevision: 2, state: 'SUCCESS', labels: { k: 'v' }, executionLabels: { k: 'v' },
    outputs: { o: 1 }, firstFailedTaskId: 'a', lastTaskId: 'b',
  });
});

it('preconditionsCondition', () => {
  expect(preconditionsCondition(undefined)).toBeUndefined();
  expect(preconditionsCondition({ flows: [] })).toBeUndefined();
  expect(preconditionsCondition({
    id: 'p', flows: [{ namespace: 'n', flowId: 'a' }, { flowId: 'b', states: ['FAILED'], labels: { x: 'y' } }],
    where: [{ id: 'w', operand: 'OR', filters: [{ field: 'NAMESPACE', type: 'STARTS_WITH', value: 'n' }] }],
    timeWindow: { window: 'PT2H' }, resetOnSuccess: false,
  })).toEqual({
    type: MULTIPLE_CONDITION, id: 'preconditions-p', window: 'PT2H', windowAdvance: 'PT0S', resetOnSuccess: false,
    conditions: {
      flow_0: { type: UPSTREAM_CONDITION, namespace: 'n', flowId: 'a', states: ['SUCCESS'] },
      flow_1: { type: UPSTREAM_CONDITION, flowId: 'b', states: ['FAILED'], labels: { x: 'y' } },
      where_w: { type: FILTER_CONDITION, operand: 'OR', filters: [{ field: 'NAMESPACE', type: 'STARTS_WITH', value: 'n' }] },
    },
  });
});
