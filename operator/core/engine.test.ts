// State-machine tables for the pure engine: (flow, events) → execution state, task-run states, attempts and actions.
import { describe, expect, it } from 'vitest';
import { stepMany } from './engine.js';
import { replayExecution } from './execution.js';
import { EngineHarness } from './engine-harness.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { Execution } from './types.js';

const P = 'ai.service.plugin.';
const ret = (id: string, extra = '') => `  - id: ${id}\n    type: ${P}core.debug.Return\n    format: "${id}"\n${extra}`;
const flow = (tasks: string, head = '') => `id: f\nnamespace: test\n${head}tasks:\n${tasks}`;
const FAIL = { state: 'FAILED' as const, error: 'boom' };

describe('execution transitions', () => {
  it.each([
    ['no limit', 0, undefined, 'RUNNING'],
    ['under limit', 0, 'QUEUE', 'RUNNING'],
    ['limit reached, QUEUE', 1, 'QUEUE', 'QUEUED'],
    ['limit reached, CANCEL', 1, 'CANCEL', 'CANCELLED'],
    ['limit reached, FAIL', 1, 'FAIL', 'FAILED'],
  ])('start with %s', (_name, running, behavior, expected) => {
    const head = behavior ? `concurrency:\n  limit: 1\n  behavior: ${behavior}\n` : '';
    const h = new EngineHarness(flow(ret('a'), head));
    const actions = h.send({ type: 'start', runningCount: running });
    expect(h.state).toBe(expected);
    expect(actions.some((a) => a.type === 'ended')).toBe(expected === 'CANCELLED' || expected === 'FAILED');
  });

  it('a QUEUED execution starts when a slot frees', () => {
    const h = new EngineHarness(flow(ret('a'), 'concurrency:\n  limit: 1\n'));
    h.send({ type: 'start', runningCount: 1 });
    h.send({ type: 'start', runningCount: 0 });
    expect(h.histories).toEqual(['CREATED', 'QUEUED', 'RUNNING']);
  });

  it('a disabled flow gives a FAILED execution at once', () => {
    const h = new EngineHarness(flow(ret('a'), 'disabled: true\n'));
    expect(h.state).toBe('FAILED');
    expect(h.exec.error).toBe('Cannot execute a flow which is disabled');
    expect(h.send({ type: 'start', runningCount: 0 })).toEqual([]);
  });

  it.each([
    ['all succeed', {}, 'SUCCESS'],
    ['a task warns', { b: { state: 'WARNING' as const } }, 'WARNING'],
    ['a task fails', { b: FAIL }, 'FAILED'],
  ])('RUNNING → final when %s', (_n, script, expected) => {
    const h = new EngineHarness(flow(ret('a') + ret('b') + ret('c'))).drive(script);
    expect(h.state).toBe(expected);
    expect(h.runsOf('c').length).toBe(expected === 'FAILED' ? 0 : 1);
  });

  it('kill: RUNNING → KILLING → KILLED once the running attempt reports', () => {
    const h = new EngineHarness(flow(ret('a') + ret('b')));
    const [launch] = h.send({ type: 'start', runningCount: 0 }) as { type: 'launch'; taskRunId: string }[];
    const actions = h.send({ type: 'kill' });
    expect(h.state).toBe('KILLING');
    expect(actions).toContainEqual({ type: 'kill-task', taskRunId: launch!.taskRunId, attempt: 1 });
    h.send({ type: 'task-result', taskRunId: launch!.taskRunId, attempt: 1, outcome: { state: 'FAILED', error: 'killed' } });
    expect(h.state).toBe('KILLED');
    expect(h.stateOf('a')).toBe('KILLED');
    expect(h.runsOf('b')).toHaveLength(0);
  });

  it.each(['CREATED', 'QUEUED'])('kill of a %s execution ends it KILLED', (state) => {
    const h = new EngineHarness(flow(ret('a'), 'concurrency:\n  limit: 1\n'));
    if (state === 'QUEUED') h.send({ type: 'start', runningCount: 1 });
    h.send({ type: 'kill' });
    expect(h.state).toBe('KILLED');
  });

  it('restart: FAILED → RESTARTED → RUNNING; the failed task gets a new attempt', () => {
    let fail = true;
    const h = new EngineHarness(flow(ret('a') + ret('b'))).drive({ b: () => (fail ? FAIL : { state: 'SUCCESS' }) });
    expect(h.state).toBe('FAILED');
    fail = false;
    const actions = h.send({ type: 'restart' });
    expect(h.histories.slice(-3)).toEqual(['FAILED', 'RESTARTED', 'RUNNING']);
    const launch = actions.find((a) => a.type === 'launch') as { taskRunId: string; attempt: number };
    expect(launch.attempt).toBe(2);
    h.send({ type: 'task-result', taskRunId: launch.taskRunId, attempt: 2, outcome: { state: 'SUCCESS' } });
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('a')).toHaveLength(1);
    expect(h.runsOf('b')[0]!.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'SUCCESS']);
  });

  it('stepMany gives the same record as one step per event', () => {
    const yaml = flow(`  - id: p\n    type: ${P}core.flow.Parallel\n    tasks:\n${['x', 'y', 'z'].map((id) => `      - id: ${id}\n        type: ${P}core.debug.Return\n        format: ${id}\n`).join('')}` + ret('after'));
    const one = new EngineHarness(yaml);
    const many = new EngineHarness(yaml);
    const launches = one.send({ type: 'start', runningCount: 0 }) as { taskRunId: string }[];
    many.send({ type: 'start', runningCount: 0 });
    const results = launches.map((l) => ({ type: 'task-result' as const, taskRunId: l.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' as const, outputs: { v: l.taskRunId } } }));
    for (const r of results) one.send(r);
    const r = stepMany(many.flow, many.exec, results, many.deps);
    expect(r.execution.taskRunList.map((t) => [t.taskId, t.state.current, t.outputs])).toEqual(one.exec.taskRunList.map((t) => [t.taskId, t.state.current, t.outputs]));
    expect(r.actions.filter((a) => a.type === 'launch')).toHaveLength(1);
  });

  it('late or duplicate task results are ignored', () => {
    const h = new EngineHarness(flow(ret('a') + ret('b')));
    const [launch] = h.send({ type: 'start', runningCount: 0 }) as { taskRunId: string }[];
    const ok = { type: 'task-result' as const, taskRunId: launch!.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' as const } };
    h.send(ok);
    const before = structuredClone(h.exec);
    expect(h.send(ok)).toEqual([]);
    expect(h.exec.taskRunList).toEqual(before.taskRunList);
  });
});

describe('replay', () => {
  it('from a task run keeps what finished before it and runs again from there', () => {
    let fail = true;
    const h = new EngineHarness(flow(ret('a') + ret('b') + ret('c'))).drive({ a: { state: 'SUCCESS', outputs: { value: 'A' } }, b: () => (fail ? FAIL : { state: 'SUCCESS' }) });
    expect(h.state).toBe('FAILED');
    fail = false;
    const b = h.runsOf('b')[0]!;
    const replay = replayExecution({ original: h.exec, id: 'exec2', taskRunId: b.id, now: h.now });
    expect(replay.originalId).toBe('exec1');
    expect(replay.taskRunList.map((r) => [r.taskId, r.state.current, r.outputs])).toEqual([['a', 'SUCCESS', { value: 'A' }]]);
    h.exec = replay;
    h.drive({ b: { state: 'SUCCESS' } });
    expect(h.state).toBe('SUCCESS');
    expect(h.exec.taskRunList.map((r) => r.taskId)).toEqual(['a', 'b', 'c']);
  });

  it('without a task run starts over with the same inputs', () => {
    const h = new EngineHarness(flow(ret('a')), { x: 1 }).drive();
    const replay = replayExecution({ original: h.exec, id: 'exec2', now: h.now });
    expect(replay).toMatchObject({ id: 'exec2', originalId: 'exec1', inputs: { x: 1 }, taskRunList: [], state: { current: 'CREATED' } });
  });
});

describe('task retries and timeouts', () => {
  const retry = (policy: string) => `    retry:\n${policy}`;

  it('constant retry: RETRYING, then a new attempt of the same run after the interval', () => {
    const h = new EngineHarness(flow(ret('a', retry('      type: constant\n      interval: PT1S\n      maxAttempt: 3\n'))));
    h.drive({ a: [FAIL, FAIL, { state: 'SUCCESS' }] });
    expect(h.stateOf('a')).toBe('RETRYING');
    const run = h.runsOf('a')[0]!;
    expect(run.nextAttemptDate).toBe('2026-01-01T00:00:01.000Z');
    h.send({ type: 'timer', kind: 'retry', taskRunId: run.id }); // too early: ignored
    expect(h.stateOf('a')).toBe('RETRYING');
    h.advanceClock(1000);
    h.drive({ a: [FAIL, FAIL, { state: 'SUCCESS' }] }, false);
    const actions = h.send({ type: 'timer', kind: 'retry', taskRunId: run.id });
    expect(actions).toContainEqual({ type: 'launch', taskRunId: run.id, attempt: 2 });
    expect(h.runsOf('a')).toHaveLength(1);
  });

  it.each([
    ['maxAttempt exhausted', '      type: constant\n      interval: PT0S\n      maxAttempt: 3\n', [FAIL, FAIL, FAIL], 'FAILED', 3],
    ['succeeds on 2nd attempt', '      type: constant\n      interval: PT0S\n      maxAttempt: 3\n', [FAIL, { state: 'SUCCESS' as const }], 'SUCCESS', 2],
    ['warningOnRetry', '      type: constant\n      interval: PT0S\n      maxAttempt: 3\n      warningOnRetry: true\n', [FAIL, { state: 'SUCCESS' as const }], 'WARNING', 2],
  ])('%s', (_n, policy, outcomes, expected, attempts) => {
    const h = new EngineHarness(flow(ret('a', retry(policy)))).drive({ a: outcomes });
    expect(h.state).toBe(expected);
    expect(h.runsOf('a')[0]!.attempts).toHaveLength(attempts);
  });

  it.each([
    ['exponential', '      type: exponential\n      interval: PT1S\n      maxInterval: PT3S\n      maxAttempt: 5\n', [1000, 2000, 3000, 3000]],
    ['random', '      type: random\n      minInterval: PT1S\n      maxInterval: PT3S\n      maxAttempt: 3\n', [2000, 2000]],
  ])('%s delays', (_n, policy, delays) => {
    const h = new EngineHarness(flow(ret('a', retry(policy))));
    h.drive({ a: FAIL });
    const seen: number[] = [];
    for (;;) {
      const run = h.runsOf('a')[0]!;
      if (run.state.current !== 'RETRYING') break;
      const wait = Date.parse(run.nextAttemptDate!) - h.now.getTime();
      seen.push(wait);
      h.advanceClock(wait);
      const launch = h.send({ type: 'timer', kind: 'retry', taskRunId: run.id }).find((a) => a.type === 'launch') as { attempt: number };
      h.send({ type: 'task-result', taskRunId: run.id, attempt: launch.attempt, outcome: FAIL });
    }
    expect(seen).toEqual(delays);
    expect(h.state).toBe('FAILED');
  });

  it('maxDuration stops retrying', () => {
    const h = new EngineHarness(flow(ret('a', retry('      type: constant\n      interval: PT10S\n      maxDuration: PT15S\n'))));
    h.drive({ a: FAIL });
    const run = h.runsOf('a')[0]!;
    h.advanceClock(10_000);
    const launch = h.send({ type: 'timer', kind: 'retry', taskRunId: run.id }).find((a) => a.type === 'launch') as { attempt: number };
    h.send({ type: 'task-result', taskRunId: run.id, attempt: launch.attempt, outcome: FAIL });
    expect(h.stateOf('a')).toBe('FAILED');
  });

  it('timeout fails the attempt and asks to kill it', () => {
    const h = new EngineHarness(flow(ret('a', '    timeout: PT1S\n')));
    const [launch] = h.send({ type: 'start', runningCount: 0 }) as { taskRunId: string }[];
    h.advanceClock(1000);
    const actions = h.send({ type: 'timer', kind: 'timeout', taskRunId: launch!.taskRunId, attempt: 1 });
    expect(actions).toContainEqual({ type: 'kill-task', taskRunId: launch!.taskRunId, attempt: 1 });
    expect(h.stateOf('a')).toBe('FAILED');
    expect(h.runsOf('a')[0]!.error).toContain('timed out after PT1S');
    expect(h.state).toBe('FAILED');
  });

  it('allowFailure: the run ends WARNING and the next task runs', () => {
    const h = new EngineHarness(flow(ret('a', '    allowFailure: true\n') + ret('b'))).drive({ a: FAIL });
    expect(h.stateOf('a')).toBe('WARNING');
    expect(h.stateOf('b')).toBe('SUCCESS');
    expect(h.state).toBe('WARNING');
  });

  it('accepts Kestra\'s `maxAttempts` spelling', () => {
    const h = new EngineHarness(flow(ret('a', retry('      type: constant\n      interval: PT0S\n      maxAttempts: 2\n')))).drive({ a: FAIL });
    expect(h.runsOf('a')[0]!.attempts).toHaveLength(2);
  });

  it('disabled tasks are skipped', () => {
    const h = new EngineHarness(flow(ret('a', '    disabled: true\n') + ret('b'))).drive();
    expect(h.runsOf('a')).toHaveLength(0);
    expect(h.state).toBe('SUCCESS');
  });
});

describe('infrastructure failures (the runner failed, not the task)', () => {
  const INFRA = { state: 'FAILED' as const, infrastructure: true, error: 'The runner of task \'a\' exited without writing a result' };
  const OK = { state: 'SUCCESS' as const };
  const retry = (policy: string) => `    retry:\n${policy}`;
  const noWait = '      type: constant\n      interval: PT0S\n';
  const infraFlags = (h: EngineHarness) => h.runsOf('a')[0]!.attempts.map((a) => [a.state.current, a.infrastructure === true]);

  it.each([
    // name, task yaml extra, outcomes of attempts 1.., TASK_INFRA_RETRIES, run state, attempts [state, infrastructure]
    ['infra then success: a new attempt, SUCCESS', '', [INFRA, OK], 3, 'SUCCESS', [['FAILED', true], ['SUCCESS', false]]],
    ['no retry policy: infra failures still get new attempts', '', [INFRA, INFRA, INFRA, OK], 3, 'SUCCESS', [['FAILED', true], ['FAILED', true], ['FAILED', true], ['SUCCESS', false]]],
    ['bounded: the run fails after TASK_INFRA_RETRIES new attempts', '', [INFRA, INFRA, INFRA, OK], 2, 'FAILED', [['FAILED', true], ['FAILED', true], ['FAILED', true]]],
    ['TASK_INFRA_RETRIES=0: the first infrastructure failure fails the run', '', [INFRA, OK], 0, 'FAILED', [['FAILED', true]]],
    ['not counted by the task\'s retry policy (maxAttempt 2: two task failures after an infra one)', retry(`${noWait}      maxAttempt: 2\n`), [INFRA, FAIL, FAIL, OK], 3, 'FAILED', [['FAILED', true], ['FAILED', false], ['FAILED', false]]],
    ['maxAttempt 1 still allows infrastructure retries', retry(`${noWait}      maxAttempt: 1\n`), [INFRA, INFRA, OK], 3, 'SUCCESS', [['FAILED', true], ['FAILED', true], ['SUCCESS', false]]],
    ['warningOnRetry ignores infrastructure retries', retry(`${noWait}      maxAttempt: 3\n      warningOnRetry: true\n`), [INFRA, OK], 3, 'SUCCESS', [['FAILED', true], ['SUCCESS', false]]],
    ['the flag means nothing on a success', '', [{ ...OK, infrastructure: true }], 0, 'SUCCESS', [['SUCCESS', false]]],
    ['allowFailure: exhausted infrastructure retries end WARNING', '    allowFailure: true\n', [INFRA, INFRA], 1, 'WARNING', [['FAILED', true], ['FAILED', true]]],
  ] as const)('%s', (_n, extra, outcomes, retries, runState, attempts) => {
    const h = new EngineHarness(flow(ret('a', extra) + ret('b')));
    h.limits = { ...DEFAULT_LIMITS, taskInfraRetries: retries };
    h.driveRetries({ a: [...outcomes] });
    expect(h.stateOf('a')).toBe(runState);
    expect(infraFlags(h)).toEqual(attempts);
    expect(h.stateOf('b')).toBe(runState === 'FAILED' ? '' : 'SUCCESS');
  });

  it('waits a growing, capped backoff between infrastructure attempts (not the task\'s retry interval)', () => {
    const h = new EngineHarness(flow(ret('a', retry('      type: constant\n      interval: PT1H\n      maxAttempt: 2\n'))));
    h.limits = { ...DEFAULT_LIMITS, taskInfraRetries: 8 };
    const waits = h.driveRetries({ a: [INFRA, INFRA, INFRA, INFRA, INFRA, INFRA, INFRA, OK] });
    // random() = 0.5 in the harness: 3/4 of min(30 s, 1 s × 2^n)
    expect(waits).toEqual([750, 1500, 3000, 6000, 12000, 22500, 22500]);
    expect(h.stateOf('a')).toBe('SUCCESS');
  });

  it('the run records and logs the reason; the last one names TASK_INFRA_RETRIES when none is left', () => {
    const h = new EngineHarness(flow(ret('a')));
    h.limits = { ...DEFAULT_LIMITS, taskInfraRetries: 1 };
    h.driveRetries({ a: [INFRA, { ...INFRA, error: 'The runner failed: could not list KV pairs' }] });
    const run = h.runsOf('a')[0]!;
    expect(run.state.current).toBe('FAILED');
    expect(run.error).toBe('The runner failed: could not list KV pairs (the infrastructure of this task failed 2 times: no retry left, setting TASK_INFRA_RETRIES=1)');
    const logs = h.actions.filter((a) => a.type === 'log').map((a) => (a as { message: string }).message);
    expect(logs).toContainEqual(expect.stringMatching(/exited without writing a result; an infrastructure failure, not the task's: new attempt 2 in 750 ms \(infrastructure retry 1 of 1, setting TASK_INFRA_RETRIES\)/));
    expect(h.state).toBe('FAILED');
  });

  it('an infrastructure failure of a run being killed ends it KILLED, no new attempt', () => {
    const h = new EngineHarness(flow(ret('a')));
    const [launch] = h.send({ type: 'start', runningCount: 0 }) as { taskRunId: string }[];
    h.send({ type: 'kill' });
    const actions = h.send({ type: 'task-result', taskRunId: launch!.taskRunId, attempt: 1, outcome: INFRA });
    expect(actions.some((a) => a.type === 'launch')).toBe(false);
    expect(h.stateOf('a')).toBe('KILLED');
    expect(h.state).toBe('KILLED');
  });

  it('the default allows 3 infrastructure retries', () => {
    const h = new EngineHarness(flow(ret('a')));
    h.driveRetries({ a: INFRA });
    expect(h.runsOf('a')[0]!.attempts).toHaveLength(4);
    expect(h.stateOf('a')).toBe('FAILED');
  });
});

describe('flow-level handlers', () => {
  it('errors run after a failure; the execution stays FAILED', () => {
    const h = new EngineHarness(flow(ret('a') + ret('b'), '') + `errors:\n${ret('e1')}${ret('e2')}`).drive({ a: FAIL });
    expect(h.stateOf('e1')).toBe('SUCCESS');
    expect(h.stateOf('e2')).toBe('SUCCESS');
    expect(h.runsOf('b')).toHaveLength(0);
    expect(h.state).toBe('FAILED');
  });

  it('finally runs on success and on failure', () => {
    for (const script of [{}, { a: FAIL }] as Record<string, typeof FAIL>[]) {
      const h = new EngineHarness(flow(ret('a')) + `finally:\n${ret('f')}`).drive(script);
      expect(h.stateOf('f')).toBe('SUCCESS');
    }
  });

  it('flow retry CREATE_NEW_EXECUTION: RETRIED and a new execution with the same originalId', () => {
    const h = new EngineHarness(flow(ret('a'), 'retry:\n  type: constant\n  interval: PT0S\n  maxAttempt: 2\n  behavior: CREATE_NEW_EXECUTION\n')).drive({ a: FAIL });
    expect(h.state).toBe('RETRIED');
    expect(h.stateOf('a')).toBe('RETRIED');
    const create = h.actions.find((a) => a.type === 'create-execution') as { execution: Execution };
    expect(create.execution.originalId).toBe('exec1');
    expect(create.execution.metadata).toEqual({ attemptNumber: 2, originalCreatedDate: h.exec.metadata!.originalCreatedDate });
    expect(create.execution.state.current).toBe('CREATED');
  });

  it('flow retry RETRY_FAILED_TASK: RETRYING, then the failed task runs again in the same execution', () => {
    const h = new EngineHarness(flow(ret('a'), 'retry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 2\n  behavior: RETRY_FAILED_TASK\n'));
    h.drive({ a: FAIL });
    expect(h.state).toBe('RETRYING');
    h.advanceClock(1000);
    const actions = h.send({ type: 'timer', kind: 'flow-retry' });
    expect(h.state).toBe('RUNNING');
    const launch = actions.find((a) => a.type === 'launch') as { taskRunId: string; attempt: number };
    h.send({ type: 'task-result', taskRunId: launch.taskRunId, attempt: launch.attempt, outcome: FAIL });
    expect(h.state).toBe('FAILED'); // maxAttempt 2 reached
  });

  it('flow outputs are rendered at the end', () => {
    const h = new EngineHarness(flow(ret('a')) + 'outputs:\n  - id: o\n    type: STRING\n    value: "{{ outputs.a.value }}!"\n').drive({ a: { state: 'SUCCESS', outputs: { value: 'x' } } });
    expect(h.exec.outputs).toEqual({ o: 'x!' });
  });

  it.each([
    ['required (default): the execution fails', '', 'FAILED', undefined],
    ['required: false: left out with a warning, the others kept', '    required: false\n', 'SUCCESS', { kept: 'a' }],
  ])('a flow output that cannot be rendered, %s', (_n, required, state, outputs) => {
    const outs = `outputs:\n  - id: missing\n    type: STRING\n    value: "{{ outputs.never_ran.value }}"\n${required}  - id: kept\n    type: STRING\n    value: "{{ outputs.a.value }}"\n`;
    const h = new EngineHarness(flow(ret('a')) + outs).drive();
    expect(h.state).toBe(state);
    expect(h.exec.outputs).toEqual(outputs);
    if (state === 'SUCCESS') expect(h.actions.some((a) => a.type === 'log' && a.level === 'WARN' && a.message.startsWith("Optional flow output 'missing' is left out"))).toBe(true);
  });
});

describe('flowable tasks', () => {
  const seq = (type: string, body: string) => `  - id: p\n    type: ${P}core.flow.${type}\n${body}`;
  const nested = (ids: string[], indent = '      ') => ids.map((id) => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "{{ taskrun.value ?? '${id}' }}"\n`).join('');

  it('Sequential runs children in order', () => {
    const h = new EngineHarness(flow(seq('Sequential', `    tasks:\n${nested(['x', 'y'])}`)));
    const first = h.send({ type: 'start', runningCount: 0 });
    expect(first.filter((a) => a.type === 'launch')).toHaveLength(1);
    h.drive({}, false);
    h.drive({ x: { state: 'SUCCESS' } }, false);
  });

  it('Parallel launches all children at once, or `concurrent` at a time', () => {
    const all = new EngineHarness(flow(seq('Parallel', `    tasks:\n${nested(['x', 'y', 'z'])}`)));
    expect(all.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch')).toHaveLength(3);
    const two = new EngineHarness(flow(seq('Parallel', `    concurrent: 2\n    tasks:\n${nested(['x', 'y', 'z'])}`)));
    expect(two.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch')).toHaveLength(2);
    two.drive({}, false);
  });

  const dag = (concurrent: string) => seq('DAG', `    concurrent: "${concurrent}"\n    tasks:\n      - task:\n          id: x\n          type: ${P}core.debug.Return\n          format: x\n      - task:\n          id: y\n          type: ${P}core.debug.Return\n          format: y\n`);
  it.each([
    ['Parallel', (c: string) => seq('Parallel', `    concurrent: "${c}"\n    tasks:\n${nested(['x', 'y'])}`)],
    ['DAG', dag],
    ['EachParallel', (c: string) => seq('EachParallel', `    value: [1, 2]\n    concurrent: "${c}"\n    tasks:\n${nested(['x'])}`)],
  ])('%s: a templated `concurrent` is rendered; one that is not an integer >= 0 fails the task naming it', (_n, make) => {
    const one = new EngineHarness(flow(make('{{ 2 - 1 }}')));
    expect(one.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch')).toHaveLength(1);
    expect(one.settle().state).toBe('SUCCESS');
    for (const bad of ['{{ 0 - 1 }}', "{{ 'many' }}"]) {
      const h = new EngineHarness(flow(make(bad))).drive();
      expect(h.state).toBe('FAILED');
      expect(h.runsOf('p')[0]!.error).toMatch(/^p: concurrent: expected an integer >= 0, got '/);
      expect(h.runsOf('x')).toHaveLength(0);
    }
  });

  it.each([
    ['a', 'SUCCESS', ['x']],
    ['b', 'SUCCESS', ['y']],
    ['zzz', 'SUCCESS', ['z']],
  ])('Switch on %s runs the matching case or defaults', (value, state, ran) => {
    const h = new EngineHarness(flow(seq('Switch', `    value: "${value}"\n    cases:\n      a:\n${nested(['x'], '        ')}      b:\n${nested(['y'], '        ')}    defaults:\n${nested(['z'])}`))).drive();
    expect(h.state).toBe(state);
    expect(h.exec.taskRunList.filter((r) => r.parentTaskRunId).map((r) => r.taskId)).toEqual(ran);
    expect(h.runsOf('p')[0]!.outputs).toEqual({ value, defaults: value === 'zzz' });
  });

  it.each([['true', 'x'], ['false', 'y'], ["{{ 1 == 2 }}", 'y']])('If %s', (cond, ran) => {
    const h = new EngineHarness(flow(seq('If', `    condition: "${cond}"\n    then:\n${nested(['x'])}    else:\n${nested(['y'])}`))).drive();
    expect(h.exec.taskRunList.filter((r) => r.parentTaskRunId).map((r) => r.taskId)).toEqual([ran]);
  });

  it('EachSequential runs the tasks for each value in turn, with taskrun.value', () => {
    const h = new EngineHarness(flow(seq('EachSequential', `    value: ["a", "b"]\n    tasks:\n${nested(['x', 'y'])}`))).drive();
    expect(h.exec.taskRunList.filter((r) => r.parentTaskRunId).map((r) => `${r.taskId}:${r.value}`)).toEqual(['x:a', 'y:a', 'x:b', 'y:b']);
    expect(h.state).toBe('SUCCESS');
  });

  it('EachParallel accepts a JSON string and starts every value at once', () => {
    const h = new EngineHarness(flow(seq('EachParallel', `    value: '["a", "b", "c"]'\n    tasks:\n${nested(['x'])}`)));
    expect(h.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch')).toHaveLength(3);
    h.drive({}, false);
  });

  it('EachSequential stops at the first failed iteration', () => {
    const h = new EngineHarness(flow(seq('EachSequential', `    value: ["a", "b"]\n    tasks:\n${nested(['x'])}`))).drive({ x: FAIL });
    expect(h.runsOf('x')).toHaveLength(1);
    expect(h.state).toBe('FAILED');
  });

  it('DAG follows dependsOn', () => {
    const dag = `    tasks:\n      - task:\n          id: x\n          type: ${P}core.debug.Return\n          format: x\n      - task:\n          id: y\n          type: ${P}core.debug.Return\n          format: y\n        dependsOn: [x]\n      - task:\n          id: z\n          type: ${P}core.debug.Return\n          format: z\n`;
    const h = new EngineHarness(flow(seq('DAG', dag)));
    const first = h.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch');
    expect(first.map((a) => h.run((a as { taskRunId: string }).taskRunId).taskId).sort()).toEqual(['x', 'z']);
  });

  it('AllowFailure turns a failed block into WARNING and the flow continues', () => {
    const h = new EngineHarness(flow(seq('AllowFailure', `    tasks:\n${nested(['x', 'y'])}`) + ret('after'))).drive({ x: FAIL });
    expect(h.stateOf('p')).toBe('WARNING');
    expect(h.runsOf('y')).toHaveLength(0);
    expect(h.stateOf('after')).toBe('SUCCESS');
    expect(h.state).toBe('WARNING');
  });

  it.each([['true', 'FAILED'], ['false', 'SUCCESS']])('Fail with condition %s', (cond, expected) => {
    const h = new EngineHarness(flow(`  - id: stop\n    type: ${P}core.execution.Fail\n    condition: "${cond}"\n    errorMessage: "bad {{ flow.id }}"\n`)).drive();
    expect(h.state).toBe(expected);
    if (expected === 'FAILED') expect(h.runsOf('stop')[0]!.error).toBe('bad f');
  });

  it('Pause: PAUSED until resumed, then RUNNING to the end', () => {
    const h = new EngineHarness(flow(`  - id: wait\n    type: ${P}core.flow.Pause\n` + ret('after'))).drive();
    expect(h.state).toBe('PAUSED');
    expect(h.stateOf('wait')).toBe('RUNNING');
    h.send({ type: 'resume' });
    h.drive({}, false);
    const launch = h.actions.filter((a) => a.type === 'launch').pop() as { taskRunId: string };
    h.send({ type: 'task-result', taskRunId: launch.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(h.histories).toEqual(['CREATED', 'RUNNING', 'PAUSED', 'RUNNING', 'SUCCESS']);
  });

  it('Pause with a delay resumes by itself', () => {
    const h = new EngineHarness(flow(`  - id: wait\n    type: ${P}core.flow.Pause\n    delay: PT5S\n`)).drive();
    const run = h.runsOf('wait')[0]!;
    expect(run.resumeDate).toBe('2026-01-01T00:00:05.000Z');
    h.advanceClock(5000);
    h.send({ type: 'timer', kind: 'pause', taskRunId: run.id });
    expect(h.state).toBe('SUCCESS');
  });

  it('an expression error fails the flowable with a message naming the variable', () => {
    const h = new EngineHarness(flow(seq('If', `    condition: "{{ inputs.nope }}"\n    then:\n${nested(['x'])}`))).drive();
    expect(h.state).toBe('FAILED');
    expect(h.runsOf('p')[0]!.error).toContain('inputs.nope');
  });

  it.each([
    [true, true, 'FAILED', 'FAILED'],
    [true, false, 'FAILED', 'SUCCESS'],
    [false, false, 'FAILED', 'SUCCESS'],
  ])('Subflow wait=%s transmitFailed=%s, child %s → %s', (wait, transmit, child, expected) => {
    const h = new EngineHarness(flow(`  - id: sub\n    type: ${P}core.flow.Subflow\n    namespace: test\n    flowId: child\n    wait: ${wait}\n    transmitFailed: ${transmit}\n    inputs:\n      x: "{{ flow.id }}"\n`));
    const actions = h.send({ type: 'start', runningCount: 0 });
    const create = actions.find((a) => a.type === 'create-subflow') as { request: { executionId: string; taskRunId: string; inputs: object } };
    expect(create.request.inputs).toEqual({ x: 'f' });
    h.send({ type: 'subflow-created', taskRunId: create.request.taskRunId, executionId: create.request.executionId });
    if (wait) h.send({ type: 'subflow-ended', taskRunId: create.request.taskRunId, child: { id: create.request.executionId, state: child as 'FAILED', outputs: { o: 1 } } });
    expect(h.state).toBe(expected);
    expect(h.runsOf('sub')[0]!.outputs?.executionId).toBe(create.request.executionId);
  });
});
