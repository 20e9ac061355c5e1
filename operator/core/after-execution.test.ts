// Tables for the end of an execution: the flow's afterExecution tasks and (deprecated) listeners run once the final
// state is decided, see it as `execution.state`, and never change it; a kill, a restart and the task-run limit with them.
import { describe, expect, it } from 'vitest';
import { EngineHarness } from './engine-harness.js';
import { DEFAULT_LIMITS } from './limits.js';

const P = 'ai.service.plugin.';
const ret = (id: string, indent = '  ') => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "${id}"\n`;
const FAIL = { state: 'FAILED' as const, error: 'boom' };
/** An If in afterExecution: `then` runs the `seen_<state>` task when execution.state renders as `state`. */
const stateProbe = (state: string) =>
  `  - id: probe_${state}\n    type: ${P}core.flow.If\n    condition: "{{ execution.state == '${state}' }}"\n    then:\n${ret(`seen_${state}`, '      ')}`;

describe('afterExecution', () => {
  it.each([
    ['SUCCESS', {}, 'SUCCESS'],
    ['WARNING', { a: { state: 'WARNING' as const } }, 'WARNING'],
    ['FAILED', { a: FAIL }, 'FAILED'],
  ])('runs after the tasks, errors and finally of a %s execution, which keeps its state', (_n, script, final) => {
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}errors:\n${ret('err')}finally:\n${ret('fin')}afterExecution:\n${stateProbe(final)}${ret('after')}`;
    const h = new EngineHarness(yaml).drive(script);
    expect(h.state).toBe(final);
    expect(h.histories).toEqual(['CREATED', 'RUNNING', final]);
    expect(h.runsOf('seen_' + final)).toHaveLength(1); // execution.state renders as the final state while they run
    expect(h.stateOf('after')).toBe('SUCCESS');
    const order = h.exec.taskRunList.map((r) => r.taskId);
    expect(order.indexOf('fin')).toBeLessThan(order.indexOf(`probe_${final}`));
    expect(h.runsOf('err')).toHaveLength(final === 'FAILED' ? 1 : 0);
    expect(h.exec.taskRunList.find((r) => r.taskId === 'after')?.branch).toBe('afterExecution');
    expect(h.exec.ending).toBeUndefined();
  });

  it('the execution ends only once its afterExecution tasks have ended (one ended action)', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}`);
    const [launch] = h.send({ type: 'start', runningCount: 0 }) as { type: 'launch'; taskRunId: string }[];
    const actions = h.send({ type: 'task-result', taskRunId: launch!.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(h.state).toBe('RUNNING');
    expect(h.exec.ending).toEqual({ state: 'SUCCESS' });
    expect(actions.some((a) => a.type === 'ended')).toBe(false);
    h.settle();
    expect(h.state).toBe('SUCCESS');
    expect(h.actions.filter((a) => a.type === 'ended')).toEqual([{ type: 'ended', state: 'SUCCESS' }]);
  });

  it('a failing afterExecution task does not change the final state, and stops the tasks after it', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('x')}${ret('y')}`).drive({ x: FAIL });
    expect(h.state).toBe('SUCCESS');
    expect(h.stateOf('x')).toBe('FAILED');
    expect(h.runsOf('y')).toHaveLength(0);
  });

  it('flow outputs are rendered before afterExecution runs', () => {
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}outputs:\n  - id: o\n    type: STRING\n    value: "{{ outputs.a.value }}"\nafterExecution:\n${ret('after')}`;
    const h = new EngineHarness(yaml);
    h.send({ type: 'start', runningCount: 0 });
    h.send({ type: 'task-result', taskRunId: h.runsOf('a')[0]!.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: 'A' } } });
    expect(h.state).toBe('RUNNING');
    expect(h.exec.outputs).toEqual({ o: 'A' });
    h.settle();
    expect(h.state).toBe('SUCCESS');
  });

  it('a kill while afterExecution tasks run ends the execution KILLED', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}`);
    h.send({ type: 'start', runningCount: 0 });
    h.send({ type: 'task-result', taskRunId: h.runsOf('a')[0]!.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    h.send({ type: 'kill' });
    expect(h.exec.ending).toBeUndefined();
    h.send({ type: 'task-result', taskRunId: h.runsOf('after')[0]!.id, attempt: 1, outcome: { state: 'KILLED' } });
    expect(h.state).toBe('KILLED');
  });

  it('an Exit among them stops them, yet the execution keeps its decided state', () => {
    const exit = `  - id: stop\n    type: ${P}core.execution.Exit\n    state: WARNING\n`;
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${exit}${ret('after')}`).drive({ a: FAIL });
    expect(h.state).toBe('FAILED');
    expect(h.stateOf('stop')).toBe('WARNING');
    expect(h.runsOf('after')).toHaveLength(0);
    expect(h.exec.ending).toBeUndefined();
  });

  it('a restart of a failed execution runs its afterExecution tasks again once it ends', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}`).drive({ a: FAIL });
    expect(h.state).toBe('FAILED');
    expect(h.runsOf('after')).toHaveLength(1);
    h.send({ type: 'restart' });
    h.settle();
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('after')).toHaveLength(1);
    expect(h.stateOf('after')).toBe('SUCCESS');
  });

  it('a flow retry that takes over a failed execution runs no afterExecution tasks yet', () => {
    const yaml = `id: f\nnamespace: t\nretry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 2\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}`;
    const h = new EngineHarness(yaml).drive({ a: FAIL });
    expect(h.state).toBe('RETRYING');
    expect(h.runsOf('after')).toHaveLength(0);
  });

  it('disabled afterExecution tasks do not run (and with none left the execution ends at once)', () => {
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}    disabled: true\n`;
    const h = new EngineHarness(yaml).drive();
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('after')).toHaveLength(0);
  });

  it('afterExecution tasks beyond maxTaskRuns are refused with a log line, the final state kept', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n${ret('a')}afterExecution:\n${ret('after')}`);
    h.limits = { ...DEFAULT_LIMITS, maxTaskRuns: 1 };
    h.drive();
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('after')).toHaveLength(0);
    expect(h.actions.some((a) => a.type === 'log' && a.level === 'ERROR' && /afterExecution task 'after' cannot start/.test(a.message))).toBe(true);
  });
});

describe('listeners (deprecated)', () => {
  const listener = (conditions: string, task: string) =>
    (conditions ? `  - conditions:\n${conditions}    tasks:\n` : '  - tasks:\n') + ret(task, '      ');
  const status = (states: string) => `      - type: ${P}core.condition.ExecutionStatusCondition\n        in: [${states}]\n`;

  it.each([
    ['SUCCESS', {}, ['on_success', 'always']],
    ['FAILED', { a: FAIL }, ['on_failure', 'always']],
  ])('a %s execution runs the listeners whose conditions hold, with afterExecution, and keeps its state', (final, script, ran) => {
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}listeners:\n${listener(status('SUCCESS'), 'on_success')}${listener(status('FAILED'), 'on_failure')}`
      + `${listener('', 'always')}afterExecution:\n${ret('after')}`;
    const h = new EngineHarness(yaml).drive(script);
    expect(h.state).toBe(final);
    for (const id of ['on_success', 'on_failure', 'always']) expect(h.runsOf(id)).toHaveLength(ran.includes(id) ? 1 : 0);
    expect(h.stateOf('after')).toBe('SUCCESS');
    expect(h.actions.some((a) => a.type === 'log' && a.level === 'WARN' && /`listeners` is deprecated/.test(a.message))).toBe(true);
  });

  it('Not and Or of execution conditions, rendered with the ended execution', () => {
    const not = `      - type: ${P}core.condition.NotCondition\n        conditions:\n${status('FAILED').replace(/^(?=.)/gm, '    ')}`;
    const or = `      - type: ${P}core.condition.OrCondition\n        conditions:\n          - type: ${P}core.condition.ExecutionFlowCondition\n            namespace: "{{ flow.namespace }}"\n            flowId: f\n          - type: ${P}core.condition.ExecutionNamespaceCondition\n            namespace: other\n`;
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}listeners:\n${listener(not, 'not_failed')}${listener(or, 'mine')}`;
    const h = new EngineHarness(yaml).drive();
    expect(h.runsOf('not_failed')).toHaveLength(1);
    expect(h.runsOf('mine')).toHaveLength(1);
  });

  it('a failing listener does not stop afterExecution nor another listener', () => {
    const yaml = `id: f\nnamespace: t\ntasks:\n${ret('a')}listeners:\n${listener('', 'l1')}${listener('', 'l2')}afterExecution:\n${ret('after')}`;
    const h = new EngineHarness(yaml).drive({ l1: FAIL });
    expect(h.state).toBe('SUCCESS');
    expect(h.stateOf('l1')).toBe('FAILED');
    expect(h.stateOf('l2')).toBe('SUCCESS');
    expect(h.stateOf('after')).toBe('SUCCESS');
  });
});
