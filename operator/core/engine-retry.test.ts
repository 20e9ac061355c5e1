// Retry tables for the pure engine: flow-level retries bounded across new executions (metadata), and `retry` on Fail,
// on Subflow and on flowables (their failed children get new attempts under the nearest enclosing policy).
import { describe, expect, it } from 'vitest';
import type { Action } from './engine-types.js';
import { EngineHarness } from './engine-harness.js';
import type { Execution } from './types.js';

const P = 'ai.service.plugin.';
const FAIL = { state: 'FAILED' as const, error: 'boom' };
const ret = (id: string, indent = '  ', extra = '') => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "${id}"\n${extra}`;
const flow = (tasks: string, head = '') => `id: f\nnamespace: test\n${head}tasks:\n${tasks}`;

/**
 * Runs a flow whose task always fails under a flow-level CREATE_NEW_EXECUTION retry: each new execution the engine asks
 * for is started when due and fails in turn, until one ends without asking (or 50 executions, the loop's guard).
 */
function retryChain(retry: string, stepMs = 0, source = flow(ret('a'), `retry:\n${retry}  behavior: CREATE_NEW_EXECUTION\n`)): Execution[] {
  const h = new EngineHarness(source);
  const chain: Execution[] = [];
  h.drive({ a: FAIL });
  for (let guard = 0; guard < 50; guard++) {
    chain.push(h.exec);
    const create = h.actions.find((a): a is Extract<Action, { type: 'create-execution' }> => a.type === 'create-execution');
    if (!create) break;
    h.actions = [];
    h.exec = create.execution;
    const due = h.exec.scheduleDate ? Date.parse(h.exec.scheduleDate) - h.now.getTime() : 0;
    h.advanceClock(Math.max(due, 0) + stepMs);
    h.drive({ a: FAIL });
  }
  return chain;
}

describe('task-level retry CREATE_NEW_EXECUTION (as Kestra: the whole execution is retried as a new one)', () => {
  const taskRetry = (indent: string, extra = '') => `${indent}  retry:\n${indent}    type: constant\n${indent}    interval: PT1S\n${indent}    maxAttempt: 3\n${indent}    behavior: CREATE_NEW_EXECUTION\n${extra}`;

  it('on the failed task: one attempt per execution, maxAttempt executions in the chain, the last FAILED', () => {
    const chain = retryChain('', 0, flow(ret('a', '  ', taskRetry('  '))));
    expect(chain.map((e) => e.state.current)).toEqual(['RETRIED', 'RETRIED', 'FAILED']);
    expect(chain.map((e) => e.metadata!.attemptNumber)).toEqual([1, 2, 3]);
    expect(chain.map((e) => e.taskRunList.find((r) => r.taskId === 'a')!.attempts.length)).toEqual([1, 1, 1]);
    expect(chain.map((e) => e.taskRunList.find((r) => r.taskId === 'a')!.state.current)).toEqual(['RETRIED', 'RETRIED', 'FAILED']);
  });

  it('on an enclosing flowable, for the failed children it holds; it wins over the flow retry', () => {
    const seq = `  - id: s\n    type: ${P}core.flow.Sequential\n${taskRetry('  ')}    tasks:\n${ret('a', '      ')}`;
    const chain = retryChain('', 0, flow(seq, 'retry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 5\n  behavior: RETRY_FAILED_TASK\n'));
    expect(chain.map((e) => e.state.current)).toEqual(['RETRIED', 'RETRIED', 'FAILED']);
  });

  it('errors and finally run in each execution before the new one is made; the new one is due after the interval', () => {
    const h = new EngineHarness(flow(ret('a', '  ', taskRetry('  ')), `errors:\n${ret('e')}`));
    h.drive({ a: FAIL });
    expect(h.state).toBe('RETRIED');
    expect(h.stateOf('e')).toBe('SUCCESS');
    const create = h.actions.find((a): a is Extract<Action, { type: 'create-execution' }> => a.type === 'create-execution')!;
    expect(Date.parse(create.execution.scheduleDate!) - h.now.getTime()).toBe(1000);
  });
});

describe('flow-level retry CREATE_NEW_EXECUTION is bounded across the new executions', () => {
  it('maxDuration is measured from the first execution of the chain (metadata.originalCreatedDate)', () => {
    // Each execution fails at once; new ones are due 1 s later: 0 → 1 s → 2 s → 3 s, and a 4th retry (at 4 s) passes PT3.5S.
    const chain = retryChain('  type: constant\n  interval: PT1S\n  maxDuration: PT3.5S\n');
    expect(chain.map((e) => e.state.current)).toEqual(['RETRIED', 'RETRIED', 'RETRIED', 'FAILED']);
    expect(new Set(chain.map((e) => e.metadata!.originalCreatedDate)).size).toBe(1);
    expect(chain.map((e) => e.metadata!.attemptNumber)).toEqual([1, 2, 3, 4]);
    expect(new Set(chain.map((e) => e.originalId))).toEqual(new Set(['exec1']));
  });

  it('maxDuration counts the time the executions ran, not only the delays', () => {
    // Executions start 1 s late and take 1 s of clock between being due and failing: still bounded.
    const chain = retryChain('  type: constant\n  interval: PT1S\n  maxDuration: PT5S\n', 1000);
    expect(chain.length).toBeLessThan(5);
    expect(chain[chain.length - 1]!.state.current).toBe('FAILED');
  });

  it('maxAttempt counts the executions of the chain (metadata.attemptNumber)', () => {
    const chain = retryChain('  type: constant\n  interval: PT0S\n  maxAttempt: 3\n');
    expect(chain.map((e) => e.state.current)).toEqual(['RETRIED', 'RETRIED', 'FAILED']);
    expect(chain.map((e) => e.metadata!.attemptNumber)).toEqual([1, 2, 3]);
  });

  it('the last execution logs why no retry is left', () => {
    const h = new EngineHarness(flow(ret('a'), 'retry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 1\n  behavior: CREATE_NEW_EXECUTION\n'));
    h.drive({ a: FAIL });
    expect(h.state).toBe('FAILED');
    expect(h.actions).toContainEqual(expect.objectContaining({ type: 'log', message: expect.stringContaining('no flow retry left (attempt 1 of 1') }));
  });

  it('a record written before metadata existed counts as attempt 1, created when it started', () => {
    const h = new EngineHarness(flow(ret('a'), 'retry:\n  type: constant\n  interval: PT0S\n  maxAttempt: 2\n  behavior: CREATE_NEW_EXECUTION\n'));
    delete h.exec.metadata;
    h.drive({ a: FAIL });
    const create = h.actions.find((a): a is Extract<Action, { type: 'create-execution' }> => a.type === 'create-execution');
    expect(create?.execution.metadata).toEqual({ attemptNumber: 2, originalCreatedDate: h.exec.state.startDate });
  });

  it('RETRY_FAILED_TASK counts its rounds in metadata.attemptNumber', () => {
    const h = new EngineHarness(flow(ret('a'), 'retry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 3\n  behavior: RETRY_FAILED_TASK\n'));
    h.drive({ a: FAIL });
    for (let round = 0; round < 5 && h.state === 'RETRYING'; round++) {
      h.advanceClock(1000);
      const actions = h.send({ type: 'timer', kind: 'flow-retry' });
      const launch = actions.find((a): a is Extract<Action, { type: 'launch' }> => a.type === 'launch')!;
      h.send({ type: 'task-result', taskRunId: launch.taskRunId, attempt: launch.attempt, outcome: FAIL });
    }
    expect(h.state).toBe('FAILED');
    expect(h.exec.metadata!.attemptNumber).toBe(3);
    expect(h.runsOf('a')[0]!.attempts).toHaveLength(3);
  });
});

const failTask = (extra: string) => `  - id: f1\n    type: ${P}core.execution.Fail\n${extra}`;

describe('retry on Fail: each evaluation is an attempt', () => {
  it('an unconditional Fail is retried maxAttempt times, then fails the execution', () => {
    const h = new EngineHarness(flow(failTask('    retry: { type: constant, interval: PT1S, maxAttempt: 3 }\n')));
    const waits = h.driveRetries();
    expect(waits).toEqual([1000, 1000]);
    const run = h.runsOf('f1')[0]!;
    expect(run.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(run.state.histories.map((x) => x.state)).toEqual(['CREATED', 'RUNNING', 'RETRYING', 'RUNNING', 'RETRYING', 'RUNNING', 'FAILED']);
    expect(h.state).toBe('FAILED');
  });

  it('a Fail whose condition stops holding succeeds on a later attempt (WARNING under warningOnRetry)', () => {
    for (const [warn, expected] of [[false, 'SUCCESS'], [true, 'WARNING']] as const) {
      const h = new EngineHarness(flow(failTask(`    condition: "{{ taskrun.attemptsCount < 2 }}"\n    retry: { type: constant, interval: PT0S, maxAttempt: 5, warningOnRetry: ${warn} }\n`) + ret('after')));
      h.driveRetries();
      const run = h.runsOf('f1')[0]!;
      expect(run.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'FAILED', expected]);
      expect(run.state.current).toBe(expected);
      expect(h.stateOf('after')).toBe('SUCCESS');
      expect(h.state).toBe(expected);
    }
  });

  it('without retry a Fail still records its one attempt', () => {
    const h = new EngineHarness(flow(failTask('    errorMessage: "stop"\n'))).drive();
    expect(h.runsOf('f1')[0]!.attempts.map((a) => a.state.current)).toEqual(['FAILED']);
    expect(h.runsOf('f1')[0]!.error).toBe('stop');
  });

  it('a kill while a Fail waits for its retry ends it KILLED', () => {
    const h = new EngineHarness(flow(failTask('    retry: { type: constant, interval: PT1M, maxAttempt: 3 }\n'))).drive();
    expect(h.stateOf('f1')).toBe('RETRYING');
    h.send({ type: 'kill' });
    expect(h.stateOf('f1')).toBe('KILLED');
    expect(h.state).toBe('KILLED');
  });
});

describe('retry on a flowable: its failed children get new attempts', () => {
  const seq = (type: string, retry: string, children: string) => `  - id: group\n    type: ${P}core.flow.${type}\n    retry: ${retry}\n    tasks:\n${children}`;

  it.each(['Sequential', 'Parallel', 'AllowFailure', 'WorkingDirectory'])('%s: a failing child is retried under the group policy', (type) => {
    const h = new EngineHarness(flow(seq(type, '{ type: constant, interval: PT1S, maxAttempt: 3 }', ret('c1', '      ') + ret('c2', '      '))));
    const waits = h.driveRetries({ c1: [FAIL, FAIL, { state: 'SUCCESS' }] });
    expect(waits).toEqual([1000, 1000]);
    expect(h.runsOf('c1')[0]!.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'FAILED', 'SUCCESS']);
    expect(h.stateOf('c2')).toBe('SUCCESS');
    expect(h.stateOf('group')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
  });

  it('the policy reaches grandchildren; a child that always fails fails the group after maxAttempt', () => {
    const inner = `      - id: inner\n        type: ${P}core.flow.If\n        condition: "true"\n        then:\n${ret('deep', '          ')}`;
    const h = new EngineHarness(flow(seq('Sequential', '{ type: constant, interval: PT0S, maxAttempt: 2 }', inner)));
    h.driveRetries({ deep: FAIL });
    expect(h.runsOf('deep')[0]!.attempts).toHaveLength(2);
    expect(h.stateOf('deep')).toBe('FAILED');
    expect(h.stateOf('group')).toBe('FAILED');
    expect(h.state).toBe('FAILED');
  });

  it("a child's own retry wins over the group's", () => {
    const child = ret('c1', '      ', '        retry: { type: constant, interval: PT0S, maxAttempt: 1 }\n');
    const h = new EngineHarness(flow(seq('Sequential', '{ type: constant, interval: PT0S, maxAttempt: 4 }', child)));
    h.driveRetries({ c1: FAIL });
    expect(h.runsOf('c1')[0]!.attempts).toHaveLength(1);
    expect(h.state).toBe('FAILED');
  });

  it('warningOnRetry of the group marks a child that needed a retry WARNING', () => {
    const h = new EngineHarness(flow(seq('Sequential', '{ type: constant, interval: PT0S, maxAttempt: 3, warningOnRetry: true }', ret('c1', '      '))));
    h.driveRetries({ c1: [FAIL, { state: 'SUCCESS' }] });
    expect(h.stateOf('c1')).toBe('WARNING');
    expect(h.state).toBe('WARNING');
  });

  it('an EachParallel retries the failed iteration only', () => {
    const each = `  - id: each\n    type: ${P}core.flow.EachParallel\n    value: [x, y]\n    retry: { type: constant, interval: PT0S, maxAttempt: 2 }\n    tasks:\n${ret('t', '      ')}`;
    const h = new EngineHarness(flow(each));
    h.driveRetries({ t: (run, attempt) => (run.value === 'y' && attempt === 1 ? FAIL : { state: 'SUCCESS' }) });
    expect(h.runsOf('t').map((r) => [r.value, r.attempts.length, r.state.current])).toEqual([['x', 1, 'SUCCESS'], ['y', 2, 'SUCCESS']]);
    expect(h.state).toBe('SUCCESS');
  });
});

describe('retry on Subflow: each attempt is a new child execution', () => {
  it('a failed child execution is retried with a new child id, up to maxAttempt', () => {
    const sub = `  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: test\n    flowId: child\n    wait: true\n    transmitFailed: true\n    retry: { type: constant, interval: PT1S, maxAttempt: 2 }\n`;
    const h = new EngineHarness(flow(sub));
    const requests: string[] = [];
    const endChild = (actions: Action[]) => {
      const c = actions.find((a): a is Extract<Action, { type: 'create-subflow' }> => a.type === 'create-subflow')!;
      requests.push(c.request.executionId);
      h.send({ type: 'subflow-created', taskRunId: c.request.taskRunId, executionId: c.request.executionId });
      h.send({ type: 'subflow-ended', taskRunId: c.request.taskRunId, child: { id: c.request.executionId, state: 'FAILED' } });
    };
    endChild(h.send({ type: 'start', runningCount: 0 }));
    expect(h.stateOf('call')).toBe('RETRYING');
    h.advanceClock(1000);
    endChild(h.send({ type: 'timer', kind: 'retry', taskRunId: h.runsOf('call')[0]!.id }));
    expect(new Set(requests).size).toBe(2);
    expect(h.runsOf('call')[0]!.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'FAILED']);
    expect(h.state).toBe('FAILED');
  });
});

describe('retry on ForEachItem: its failed batches get new child executions', () => {
  it('a batch whose child execution failed is retried; the other batch is not', () => {
    const each = `  - id: each\n    type: ${P}core.flow.ForEachItem\n    items: "kestra:///x"\n    namespace: test\n    flowId: child\n    retry: { type: constant, interval: PT1S, maxAttempt: 2 }\n`;
    const h = new EngineHarness(flow(each));
    const children: string[] = [];
    const answer = (actions: Action[], failFirst: boolean) => {
      for (const c of actions.filter((a): a is Extract<Action, { type: 'create-subflow' }> => a.type === 'create-subflow')) {
        children.push(c.request.executionId);
        const first = c.request.iteration === 0;
        h.send({ type: 'subflow-created', taskRunId: c.request.taskRunId, executionId: c.request.executionId, iteration: c.request.iteration! });
        h.send({ type: 'subflow-ended', taskRunId: c.request.taskRunId, iteration: c.request.iteration!, child: { id: c.request.executionId, state: first && failFirst ? 'FAILED' : 'SUCCESS' } });
      }
    };
    h.drive({ each_split: { state: 'SUCCESS', outputs: { splits: 'kestra:///s/splits.txt', numberOfBatches: 2 } } });
    answer(h.actions, true);
    const items = h.runsOf('each_items');
    expect(items.map((b) => b.state.current)).toEqual(['RETRYING']);
    h.advanceClock(1000);
    const again = h.send({ type: 'timer', kind: 'retry', taskRunId: items[0]!.id });
    expect(again.filter((a) => a.type === 'create-subflow').map((a) => (a as Extract<Action, { type: 'create-subflow' }>).request.iteration)).toEqual([0]);
    answer(again, false);
    expect(h.runsOf('each_items')[0]!.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'SUCCESS']);
    h.send({ type: 'task-result', taskRunId: h.runsOf('each_merge')[0]!.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(new Set(children).size).toBe(3);
    expect(h.stateOf('each')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
  });
});
