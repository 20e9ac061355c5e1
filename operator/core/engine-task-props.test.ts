// Tables for task properties the engine honours on every task (runIf, allowWarning, allowFailure) and for a Switch
// whose value matches no case.
import { describe, expect, it } from 'vitest';
import { EngineHarness } from './engine-harness.js';

const P = 'ai.service.plugin.';
const FAIL = { state: 'FAILED' as const, error: 'boom' };
const WARN = { state: 'WARNING' as const };
const ret = (id: string, extra = '') => `  - id: ${id}\n    type: ${P}core.debug.Return\n    format: "${id}"\n${extra}`;
const flow = (tasks: string, head = '') => `id: f\nnamespace: test\n${head}tasks:\n${tasks}`;
const indent = (s: string, by = '    ') => s.replace(/^(?=.)/gm, by);

describe('Switch without a matching case', () => {
  const sw = (extra = '', defaults = '') => `  - id: sw\n    type: ${P}core.flow.Switch\n    value: "{{ inputs.v }}"\n${extra}    cases:\n      a:\n${indent(ret('is_a'))}${defaults}`;

  it('fails when there are no defaults (as Kestra: no task found)', () => {
    const h = new EngineHarness(flow(sw() + ret('after'), 'inputs:\n  - id: v\n    type: STRING\n'), { v: 'zzz' }).drive();
    expect(h.stateOf('sw')).toBe('FAILED');
    expect(h.runsOf('sw')[0]!.error).toBe("No task found on flow 'test.f', task 'sw', execution 'exec1': value 'zzz' matches no case and the Switch has no defaults");
    expect(h.runsOf('after')).toHaveLength(0);
    expect(h.state).toBe('FAILED');
  });

  it('with allowFailure the flow goes on (WARNING)', () => {
    const h = new EngineHarness(flow(sw('    allowFailure: true\n') + ret('after'), 'inputs:\n  - id: v\n    type: STRING\n'), { v: 'zzz' }).drive();
    expect(h.stateOf('sw')).toBe('WARNING');
    expect(h.stateOf('after')).toBe('SUCCESS');
    expect(h.state).toBe('WARNING');
  });

  it('a matching case, or defaults, still succeed', () => {
    const defaults = `    defaults:\n${indent(ret('other'))}`;
    for (const [v, d, ran] of [['a', '', 'is_a'], ['zzz', defaults, 'other']] as const) {
      const h = new EngineHarness(flow(sw('', d), 'inputs:\n  - id: v\n    type: STRING\n'), { v }).drive();
      expect(h.stateOf(ran)).toBe('SUCCESS');
      expect(h.state).toBe('SUCCESS');
    }
  });
});

describe('allowWarning and allowFailure', () => {
  it.each([
    ['WARNING, allowWarning', WARN, 'allowWarning: true', 'SUCCESS', 'SUCCESS'],
    ['WARNING, no flag', WARN, '', 'WARNING', 'WARNING'],
    ['FAILED, allowFailure', FAIL, 'allowFailure: true', 'WARNING', 'WARNING'],
    ['FAILED, allowFailure and allowWarning', FAIL, 'allowFailure: true\n    allowWarning: true', 'SUCCESS', 'SUCCESS'],
    ['FAILED, allowWarning only', FAIL, 'allowWarning: true', 'FAILED', 'FAILED'],
  ])('a runnable ending %s', (_n, outcome, props, runState, execState) => {
    const h = new EngineHarness(flow(ret('a', props ? `    ${props}\n` : ''))).drive({ a: outcome });
    expect(h.stateOf('a')).toBe(runState);
    expect(h.runsOf('a')[0]!.attempts[0]!.state.current).toBe(outcome.state);
    expect(h.state).toBe(execState);
  });

  it('a flowable whose children warn ends SUCCESS under allowWarning', () => {
    const seq = `  - id: seq\n    type: ${P}core.flow.Sequential\n    allowWarning: true\n    tasks:\n${indent(ret('c'))}`;
    const h = new EngineHarness(flow(seq)).drive({ c: WARN });
    expect(h.stateOf('c')).toBe('WARNING');
    expect(h.stateOf('seq')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
  });
});

describe('runIf', () => {
  it.each([
    ['false', 'false', 0],
    ['an expression rendering false', '"{{ outputs.first.value == \'no\' }}"', 0],
    ['true', 'true', 1],
    ['an expression rendering true', '"{{ outputs.first.value == \'first\' }}"', 1],
  ])('on a runnable: %s', (_n, cond, attempts) => {
    const h = new EngineHarness(flow(ret('first') + ret('maybe', `    runIf: ${cond}\n`) + ret('after'))).drive();
    const run = h.runsOf('maybe')[0]!;
    expect(run.attempts).toHaveLength(attempts);
    expect(run.state.current).toBe('SUCCESS');
    expect(h.stateOf('after')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
    const skipped = h.actions.some((a) => a.type === 'log' && a.message === "Task 'maybe' skipped: its runIf rendered false");
    expect(skipped).toBe(attempts === 0);
    expect(h.actions.some((a) => a.type === 'launch' && a.taskRunId === run.id)).toBe(attempts === 1);
  });

  it('on a flowable: false runs none of its children', () => {
    const seq = `  - id: seq\n    type: ${P}core.flow.Sequential\n    runIf: "{{ 1 > 2 }}"\n    tasks:\n${indent(ret('c'))}`;
    const h = new EngineHarness(flow(seq + ret('after'))).drive();
    expect(h.stateOf('seq')).toBe('SUCCESS');
    expect(h.runsOf('c')).toHaveLength(0);
    expect(h.stateOf('after')).toBe('SUCCESS');
  });

  it('a runIf that cannot be rendered fails the task', () => {
    const h = new EngineHarness(flow(ret('a', '    runIf: "{{ outputs.missing.value }}"\n'))).drive();
    expect(h.stateOf('a')).toBe('FAILED');
    expect(h.runsOf('a')[0]!.error).toMatch(/^runIf of task 'a' cannot be rendered: /);
    expect(h.state).toBe('FAILED');
  });
});
