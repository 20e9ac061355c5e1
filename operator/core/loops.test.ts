// State-machine tables for the loop and control flowables: ForEach (and the EachSequential it shares code with),
// LoopUntil / WaitFor with timer-driven intervals, Exit, and Pause with child tasks.
import { describe, expect, it } from 'vitest';
import { EngineHarness } from './engine-harness.js';
import { stepMany } from './engine.js';
import type { EngineEvent, TaskOutcome } from './engine-types.js';
import type { TaskRun } from './types.js';
import { DEFAULT_LIMITS } from './limits.js';
import { pendingWork } from './work.js';
import { distinctTexts } from './loops.js';
import { RUNS_PER_STEP } from './runs.js';

const P = 'ai.service.plugin.';
const flow = (tasks: string, head = '') => `id: f\nnamespace: test\n${head}tasks:\n${tasks}`;
const ret = (id: string, format = id, indent = '  ') => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "${format}"\n`;
const FAIL: TaskOutcome = { state: 'FAILED', error: 'boom' };
const launches = (actions: { type: string }[]) => actions.filter((a) => a.type === 'launch').length;
const children = (h: EngineHarness) => h.exec.taskRunList.filter((r) => r.parentTaskRunId);

describe('ForEach', () => {
  const forEach = (body: string, tasks = ret('x', 'x', '      ')) => `  - id: loop\n    type: ${P}core.flow.ForEach\n${body}    tasks:\n${tasks}`;

  it('runs the tasks one after the other for each value by default (concurrencyLimit 1)', () => {
    const h = new EngineHarness(flow(forEach('    values: ["a", "b"]\n', ret('x', 'x', '      ') + ret('y', 'y', '      '))));
    expect(launches(h.send({ type: 'start', runningCount: 0 }))).toBe(1);
    h.settle();
    expect(children(h).map((r) => `${r.taskId}:${r.value}:${r.iteration}`)).toEqual(['x:a:0', 'y:a:0', 'x:b:1', 'y:b:1']);
    expect(h.state).toBe('SUCCESS');
  });

  it.each([
    [0, 4], [1, 1], [2, 2], [10, 4],
  ])('concurrencyLimit %s starts %s iterations at once; tasks within an iteration stay sequential', (limit, first) => {
    const h = new EngineHarness(flow(forEach(`    values: [1, 2, 3, 4]\n    concurrencyLimit: ${limit}\n`, ret('x', 'x', '      ') + ret('y', 'y', '      '))));
    expect(launches(h.send({ type: 'start', runningCount: 0 }))).toBe(first);
    expect(h.runsOf('y')).toHaveLength(0);
    h.settle();
    expect(h.runsOf('x').map((r) => r.value).sort()).toEqual(['1', '2', '3', '4']);
    expect(h.runsOf('y')).toHaveLength(4);
    expect(h.state).toBe('SUCCESS');
  });

  it('a freed slot starts the next value, in order', () => {
    const h = new EngineHarness(flow(forEach('    values: [a, b, c]\n    concurrencyLimit: 2\n')));
    h.send({ type: 'start', runningCount: 0 });
    const [a] = h.runsOf('x');
    const next = h.send({ type: 'task-result', taskRunId: a!.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(launches(next)).toBe(1);
    expect(h.runsOf('x').map((r) => r.value)).toEqual(['a', 'b', 'c']);
  });

  it('values as a JSON string or an expression; objects become JSON text; duplicates collapse as in Kestra', () => {
    const h = new EngineHarness(flow(forEach(`    values: "{{ inputs.list }}"\n`), 'inputs:\n  - id: list\n    type: JSON\n'), { list: [{ k: 1 }, 'z', { k: 1 }, 3] }).drive();
    expect(h.runsOf('x').map((r) => r.value)).toEqual(['{"k":1}', 'z', '3']);
  });

  /** What the values were before distinctTexts: a set over each value's JSON text (a string as is). */
  const reference = (values: unknown[]) => [...new Set(values.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))))];

  it.each<[string, unknown[]]>([
    ['a range', Array.from({ length: 1000 }, (_, i) => i + 1)],
    ['a range, then a repeat', [1, 2, 3, 2, 4, 1]],
    ['numbers and their texts', [1, '1', 2, '3', 3, true, 'true', false]],
    ['falling numbers', [3, 2, 1, 2, 3]],
    ['-0, 0, floats and exponents', [-0, 0, 0.1, 0.1, 1e21, 1e21, 1.5, -2]],
    ['objects and lists', [{ k: 1 }, 'z', { k: 1 }, [1, 2], [1, 2], '[1,2]', 3]],
    ['strings only', ['b', 'a', 'b', 'c', 'a']],
    ['nothing', []],
  ])('distinct values of %s are those of a set over their JSON texts', (_name, values) => {
    expect(distinctTexts(values, 'values')).toEqual(reference(values));
  });

  it('a range of 100,000 values keeps all of them, in order, as text', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => i);
    const texts = distinctTexts(values, 'values');
    expect(texts.length).toBe(100_000);
    expect(texts[0]).toBe('0');
    expect(texts[99_999]).toBe('99999');
  });

  it.each([
    ['"{{ 42 }}"', 'values: expected a list, got number'],
    ['"not json"', 'values: expected a list or a JSON array'],
    ['[a, null]', 'values: the value at position 1 is null'],
  ])('values %s fails the loop with a message naming the property', (values, message) => {
    const h = new EngineHarness(flow(forEach(`    values: ${values}\n`))).drive();
    expect(h.state).toBe('FAILED');
    expect(h.runsOf('loop')[0]!.error).toContain(message);
  });

  it('a concurrencyLimit that renders to a negative number is refused by name', () => {
    const h = new EngineHarness(flow(forEach('    values: [a]\n    concurrencyLimit: "{{ -1 }}"\n'))).drive();
    expect(h.runsOf('loop')[0]!.error).toContain('concurrencyLimit: expected an integer >= 0');
  });

  it('a failed iteration starts no new one; running ones end; errors then finally run', () => {
    const tasks = ret('x', 'x', '      ');
    const body = `    values: [a, b, c, d]\n    concurrencyLimit: 2\n    errors:\n${ret('onError', 'e', '      ')}    finally:\n${ret('fin', 'f', '      ')}`;
    const h = new EngineHarness(flow(forEach(body, tasks)));
    h.send({ type: 'start', runningCount: 0 });
    const [a, b] = h.runsOf('x');
    h.send({ type: 'task-result', taskRunId: a!.id, attempt: 1, outcome: FAIL });
    expect(h.runsOf('x')).toHaveLength(2); // c does not start
    expect(h.runsOf('onError')).toHaveLength(0); // b still runs
    h.send({ type: 'task-result', taskRunId: b!.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    h.settle();
    h.settle();
    expect(h.stateOf('onError')).toBe('SUCCESS');
    expect(h.stateOf('fin')).toBe('SUCCESS');
    expect(h.stateOf('loop')).toBe('FAILED');
    expect(h.state).toBe('FAILED');
  });

  it('nested loops: outputs addressed by value path, parent values through parents', () => {
    const inner = `      - id: inner\n        type: ${P}core.flow.ForEach\n        values: ["1", "2"]\n        tasks:\n${ret('leaf', '{{ parent.taskrun.value }}{{ taskrun.value }}', '          ')}`;
    const h = new EngineHarness(flow(forEach('    values: [x, y]\n    concurrencyLimit: 0\n', inner) + ret('after', "{{ outputs.leaf['y']['2'].value }}"))).drive({
      leaf: (run: TaskRun) => ({ state: 'SUCCESS', outputs: { value: `${run.value}` } }),
    });
    expect(h.runsOf('leaf')).toHaveLength(4);
    expect(h.runsOf('inner').map((r) => r.value)).toEqual(['x', 'y']);
    expect(h.state).toBe('SUCCESS');
  });

  it('empty values: SUCCESS with no child', () => {
    const h = new EngineHarness(flow(forEach('    values: []\n'))).drive();
    expect(h.state).toBe('SUCCESS');
    expect(children(h)).toHaveLength(0);
  });
});

describe('LoopUntil', () => {
  const loop = (body: string, tasks = ret('ret', '{{ outputs.loop.iterationCount }}', '      ')) =>
    `  - id: loop\n    type: ${P}core.flow.LoopUntil\n${body}    tasks:\n${tasks}`;
  /** Each iteration returns its number as a string, like Kestra's example flow. */
  const byIteration = { ret: (run: TaskRun): TaskOutcome => ({ state: 'SUCCESS', outputs: { value: String(run.iteration) } }) };

  it('repeats its tasks until the condition holds, an interval apart (timers, not a busy loop)', () => {
    const h = new EngineHarness(flow(loop(`    condition: "{{ outputs.ret.value == '4' }}"\n    checkFrequency:\n      interval: PT10S\n`)));
    const waits = h.driveTimers(byIteration);
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('ret').map((r) => r.iteration)).toEqual([1, 2, 3, 4]);
    expect(waits).toEqual([10_000, 10_000, 10_000]);
    expect(h.runsOf('loop')[0]!.outputs).toEqual({ iterationCount: 4 });
  });

  it('while it waits, the record implies one loop timer at the interval and nothing runs', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n    checkFrequency:\n      interval: PT1M\n'))).drive();
    expect(h.state).toBe('RUNNING');
    const timers = pendingWork(h.flow, h.exec).timers;
    expect(timers).toEqual([{ at: '2026-01-01T00:01:00.000Z', event: { type: 'timer', kind: 'loop', taskRunId: h.runsOf('loop')[0]!.id } }]);
    // A timer that fires early does nothing.
    h.advanceClock(30_000);
    expect(launches(h.send({ type: 'timer', kind: 'loop', taskRunId: h.runsOf('loop')[0]!.id }))).toBe(0);
    h.advanceClock(30_000);
    expect(launches(h.send({ type: 'timer', kind: 'loop', taskRunId: h.runsOf('loop')[0]!.id }))).toBe(1);
  });

  it.each([
    ['false', 'SUCCESS', 'Max iterations (3) reached'],
    ['true', 'FAILED', 'checkFrequency.maxIterations (3) reached before the condition was met'],
  ])('maxIterations reached with failOnMaxReached %s → %s', (fail, state, message) => {
    const h = new EngineHarness(flow(loop(`    condition: "false"\n    failOnMaxReached: ${fail}\n    checkFrequency:\n      maxIterations: 3\n      interval: PT1S\n`)));
    h.driveTimers();
    expect(h.runsOf('ret')).toHaveLength(3);
    expect(h.stateOf('loop')).toBe(state);
    expect(h.state).toBe(state);
    const logs = h.actions.filter((a) => a.type === 'log').map((a) => (a as { message: string }).message).join('\n');
    expect(logs).toContain(message);
  });

  it('maxDuration stops it once an iteration ends after the duration', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n    checkFrequency:\n      maxDuration: PT25S\n      interval: PT10S\n')));
    h.driveTimers();
    expect(h.runsOf('ret')).toHaveLength(4); // ends at 0, 10, 20, 30 s: the fourth is past 25 s
    expect(h.state).toBe('SUCCESS');
  });

  it('the condition is checked before the maximum: met on the last allowed iteration is a success', () => {
    const h = new EngineHarness(flow(loop(`    condition: "{{ outputs.ret.value == '2' }}"\n    failOnMaxReached: true\n    checkFrequency:\n      maxIterations: 2\n      interval: PT1S\n`)));
    h.driveTimers(byIteration);
    expect(h.state).toBe('SUCCESS');
  });

  it('a failed iteration fails the loop at once and runs its errors', () => {
    const h = new EngineHarness(flow(loop(`    condition: "false"\n    errors:\n${ret('onError', 'e', '      ')}    checkFrequency:\n      interval: PT1S\n`)));
    h.driveTimers({ ret: (run) => (run.iteration === 2 ? FAIL : { state: 'SUCCESS' }) });
    expect(h.runsOf('ret')).toHaveLength(2);
    expect(h.stateOf('onError')).toBe('SUCCESS');
    expect(h.state).toBe('FAILED');
  });

  it('a restart after a failed iteration retries it and the loop goes on', () => {
    const h = new EngineHarness(flow(loop(`    condition: "{{ outputs.ret.value == '3' }}"\n    checkFrequency:\n      interval: PT1S\n`)));
    let failOnce = true;
    const script = { ret: (run: TaskRun): TaskOutcome => {
      if (run.iteration === 2 && failOnce) { failOnce = false; return FAIL; }
      return { state: 'SUCCESS', outputs: { value: String(run.iteration) } };
    } };
    h.driveTimers(script);
    expect(h.state).toBe('FAILED');
    h.send({ type: 'restart' });
    h.settle(script);
    h.driveTimers(script, false);
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('ret').map((r) => `${r.iteration}:${r.attempts.length}`)).toEqual(['1:1', '2:2', '3:1']);
  });

  it.each([
    ['restart', ''],
    ['flow retry RETRY_FAILED_TASK', 'retry:\n  type: constant\n  interval: PT1S\n  maxAttempt: 2\n  behavior: RETRY_FAILED_TASK\n'],
  ])('failOnMaxReached: a %s gives the loop a fresh set of iterations (maxIterations counts again)', (how, head) => {
    const body = `    condition: "{{ outputs.ret.value == '5' }}"\n    failOnMaxReached: true\n    checkFrequency:\n      maxIterations: 3\n      interval: PT1S\n`;
    const h = new EngineHarness(flow(loop(body), head));
    if (how === 'restart') {
      h.driveTimers(byIteration);
      expect(h.state).toBe('FAILED');
      expect(h.runsOf('ret')).toHaveLength(3);
      h.send({ type: 'restart' });
      h.settle(byIteration);
    }
    h.driveTimers(byIteration, how === 'restart' ? false : undefined);
    // Iterations 4 and 5 run after the restart (not a failure at once): the condition holds on 5.
    expect(h.runsOf('ret').map((r) => r.iteration)).toEqual([1, 2, 3, 4, 5]);
    expect(h.stateOf('loop')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
    expect(h.runsOf('loop')[0]!.outputs).toEqual({ iterationCount: 5 });
  });

  it('failOnMaxReached after a restart: the fresh set is maxIterations long, then it fails again', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n    failOnMaxReached: true\n    checkFrequency:\n      maxIterations: 2\n      interval: PT1S\n')));
    h.driveTimers();
    expect(h.state).toBe('FAILED');
    h.send({ type: 'restart' });
    h.settle();
    h.driveTimers(undefined, false);
    expect(h.runsOf('ret')).toHaveLength(4);
    expect(h.state).toBe('FAILED');
    expect(h.runsOf('loop')[0]!.error).toContain('checkFrequency.maxIterations (2) reached');
  });

  it('maxDuration after a restart counts from the restart', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n    failOnMaxReached: true\n    checkFrequency:\n      maxDuration: PT15S\n      interval: PT10S\n')));
    h.driveTimers();
    expect(h.runsOf('ret')).toHaveLength(3); // ends at 0, 10, 20 s
    expect(h.state).toBe('FAILED');
    h.advanceClock(3_600_000);
    h.send({ type: 'restart' });
    h.settle();
    h.driveTimers(undefined, false);
    expect(h.runsOf('ret')).toHaveLength(5); // 10 and 20 s after the restart
    expect(h.state).toBe('FAILED');
  });

  it('WaitFor is its alias', () => {
    const yaml = flow(`  - id: loop\n    type: io.kestra.plugin.core.flow.WaitFor\n    condition: "{{ outputs.ret.value == '2' }}"\n    checkFrequency:\n      interval: PT1S\n    tasks:\n${ret('ret', 'r', '      ')}`);
    const h = new EngineHarness(yaml);
    expect(h.flow.tasks[0]!.type).toBe(`${P}core.flow.LoopUntil`);
    h.driveTimers(byIteration);
    expect(h.runsOf('ret')).toHaveLength(2);
  });

  it('a kill while it waits ends it KILLED', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n'))).drive();
    h.send({ type: 'kill' });
    expect(h.stateOf('loop')).toBe('KILLED');
    expect(h.state).toBe('KILLED');
  });

  it('a non-positive interval is refused by name', () => {
    const h = new EngineHarness(flow(loop('    condition: "false"\n    checkFrequency:\n      interval: "{{ \'PT0S\' }}"\n'))).drive();
    expect(h.runsOf('loop')[0]!.error).toContain('checkFrequency.interval: must be a positive duration');
  });
});

describe('Exit', () => {
  const exitIn = (state: string) => `  - id: if\n    type: ${P}core.flow.If\n    condition: "true"\n    then:\n      - id: exit\n        type: ${P}core.execution.Exit\n        state: ${state}\n` + ret('end');

  it.each([
    ['WARNING', 'WARNING', 'WARNING'],
    ['SUCCESS', 'SUCCESS', 'SUCCESS'],
    ['FAILED', 'FAILED', 'FAILED'],
    ['CANCELED', 'CANCELLED', 'KILLED'],
    ['CANCELLED', 'CANCELLED', 'KILLED'],
    ['KILLED', 'KILLED', 'KILLED'],
  ])('state %s ends the execution %s; the Exit run and its parents end %s; nothing after it runs', (state, exec, runs) => {
    const h = new EngineHarness(flow(exitIn(state))).drive();
    expect(h.state).toBe(exec);
    expect(h.exec.taskRunList.map((r) => `${r.taskId}=${r.state.current}`)).toEqual([`if=${runs}`, `exit=${runs}`]);
    expect(h.actions.filter((a) => a.type === 'ended')).toEqual([{ type: 'ended', state: exec }]);
    const logs = h.actions.filter((a) => a.type === 'log').map((a) => (a as { message: string }).message);
    expect(logs).toContain(`Task 'exit' ends the execution in ${exec}`);
  });

  it.each(['WARNING', 'KILLED'])('running siblings are stopped (state %s)', (state) => {
    const par = `  - id: par\n    type: ${P}core.flow.Parallel\n    tasks:\n${ret('slow', 's', '      ')}      - id: exit\n        type: ${P}core.execution.Exit\n        state: ${state}\n`;
    const h = new EngineHarness(flow(`${par}  - id: fin\n    type: ${P}core.debug.Return\n    format: f\n`, ''));
    const actions = h.send({ type: 'start', runningCount: 0 });
    const slow = h.runsOf('slow')[0]!;
    expect(actions).toContainEqual({ type: 'kill-task', taskRunId: slow.id, attempt: 1 });
    if (state === 'KILLED') {
      expect(h.state).toBe('KILLING');
      h.send({ type: 'task-result', taskRunId: slow.id, attempt: 1, outcome: { state: 'KILLED' } });
    }
    expect(h.stateOf('slow')).toBe('KILLED');
    expect(h.state).toBe(state);
    expect(h.runsOf('fin')).toHaveLength(0);
  });

  it('a state that renders to something else fails the Exit run by name', () => {
    const h = new EngineHarness(flow(exitIn('"{{ \'DONE\' }}"'))).drive();
    expect(h.state).toBe('FAILED');
    expect(h.runsOf('exit')[0]!.error).toContain('state: expected one of SUCCESS, WARNING, KILLED, FAILED, CANCELED');
  });
});

describe('Pause with tasks (Kestra\'s deprecated spelling)', () => {
  const pause = (extra = '') => `  - id: pause\n    type: ${P}core.flow.Pause\n${extra}    tasks:\n${ret('inside', 'i', '      ')}` + ret('after');

  it('its tasks run after the resume, inside the Pause; then the flow goes on', () => {
    const h = new EngineHarness(flow(pause())).drive();
    expect(h.state).toBe('PAUSED');
    expect(h.runsOf('inside')).toHaveLength(0);
    h.send({ type: 'resume' });
    h.settle();
    const inside = h.runsOf('inside')[0]!;
    expect(inside.parentTaskRunId).toBe(h.runsOf('pause')[0]!.id);
    h.send({ type: 'task-result', taskRunId: inside.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    h.settle();
    const after = h.runsOf('after')[0]!;
    h.send({ type: 'task-result', taskRunId: after.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(h.stateOf('pause')).toBe('SUCCESS');
    expect(h.state).toBe('SUCCESS');
  });

  it('a failing child fails the Pause', () => {
    const h = new EngineHarness(flow(pause())).drive();
    h.send({ type: 'resume' });
    h.settle({ inside: FAIL });
    expect(h.stateOf('pause')).toBe('FAILED');
    expect(h.state).toBe('FAILED');
  });

  it.each([
    ['WARN', 'WARNING', 'WARNING', 1],
    ['RESUME', 'SUCCESS', 'SUCCESS', 1],
    ['FAIL', 'FAILED', 'FAILED', 0],
    ['CANCEL', 'KILLED', 'CANCELLED', 0],
  ])('pauseDuration elapsed with behavior %s: Pause %s, execution %s', (behavior, pauseState, execState, inside) => {
    const h = new EngineHarness(flow(pause(`    pauseDuration: PT5S\n    behavior: ${behavior}\n`)));
    const waits = h.driveTimers();
    expect(waits[0]).toBe(5000);
    expect(h.runsOf('inside')).toHaveLength(inside);
    expect(h.stateOf('pause')).toBe(pauseState);
    expect(h.state).toBe(execState);
  });
});

describe('kill', () => {
  it('a Pause whose child tasks run ends KILLED once they have', () => {
    const yaml = flow(`  - id: pause\n    type: ${P}core.flow.Pause\n    tasks:\n${ret('inside', 'i', '      ')}`);
    const h = new EngineHarness(yaml).drive();
    h.send({ type: 'resume' });
    const inside = h.runsOf('inside')[0]!;
    h.send({ type: 'kill' });
    expect(h.stateOf('pause')).toBe('KILLING');
    h.send({ type: 'task-result', taskRunId: inside.id, attempt: 1, outcome: { state: 'KILLED' } });
    expect(h.stateOf('pause')).toBe('KILLED');
    expect(h.state).toBe('KILLED');
  });
});

describe('bounded by MAX_TASK_RUNS_PER_EXECUTION', () => {
  const limited = (h: EngineHarness, maxTaskRuns: number) => { h.limits = { ...DEFAULT_LIMITS, maxTaskRuns }; return h; };

  it('a ForEach whose values cannot fit fails at once, creating no child run', () => {
    const values = JSON.stringify(Array.from({ length: 300 }, (_, i) => i));
    const h = limited(new EngineHarness(flow(`  - id: loop\n    type: ${P}core.flow.ForEach\n    values: ${values}\n    concurrencyLimit: 0\n    tasks:\n${ret('x', 'x', '      ')}`)), 100);
    h.send({ type: 'start', runningCount: 0 });
    expect(h.exec.taskRunList.map((r) => r.taskId)).toEqual(['loop']);
    expect(h.runsOf('loop')[0]!.error).toContain("ForEach 'loop' needs at least 300 task runs for its 300 values");
    expect(h.runsOf('loop')[0]!.error).toContain('setting MAX_TASK_RUNS_PER_EXECUTION');
    expect(h.state).toBe('FAILED');
  });

  it('a LoopUntil whose condition never holds and has no maximum fails at the limit, naming it', () => {
    const h = limited(new EngineHarness(flow(`  - id: loop\n    type: ${P}core.flow.LoopUntil\n    condition: "false"\n    checkFrequency:\n      interval: PT1S\n    tasks:\n${ret('x', 'x', '      ')}`)), 10);
    h.driveTimers();
    expect(h.exec.taskRunList).toHaveLength(10);
    expect(h.runsOf('loop')[0]!.error).toContain("LoopUntil 'loop' cannot create 1 more task run(s)");
    expect(h.runsOf('loop')[0]!.error).toContain('setting MAX_TASK_RUNS_PER_EXECUTION');
    expect(h.state).toBe('FAILED');
  });
});

describe('a step creates at most RUNS_PER_STEP runs (engine.ts): the rest in the next steps', () => {
  const each = (n: number) => flow(`  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: "{{ range(1, ${n}) }}"\n    tasks:\n${ret('r', '{{ taskrun.value }}', '      ')}`);

  const R = RUNS_PER_STEP;

  it('2.5 steps of values: RUNS_PER_STEP runs and a continue, as many on a tick, then the last half; the loop ends as in one go', () => {
    const n = 2 * R + R / 2;
    const h = new EngineHarness(each(n));
    const first = h.send({ type: 'start', runningCount: 0 });
    expect([launches(first), first.filter((a) => a.type === 'continue').length, children(h).length]).toEqual([R, 1, R]);
    const second = h.send({ type: 'tick' });
    expect([launches(second), second.filter((a) => a.type === 'continue').length, children(h).length]).toEqual([R, 1, 2 * R]);
    const third = h.send({ type: 'tick' });
    expect([launches(third), third.filter((a) => a.type === 'continue').length, children(h).length]).toEqual([R / 2, 0, n]);
    expect(children(h).map((r) => r.iteration)).toEqual(Array.from({ length: n }, (_, i) => i));
    const results: EngineEvent[] = children(h).map((r) => ({ type: 'task-result', taskRunId: r.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: r.value } } }));
    h.exec = stepMany(h.flow, h.exec, results, h.deps).execution;
    expect(h.state).toBe('SUCCESS');
    expect(children(h).every((r) => r.state.current === 'SUCCESS' && r.outputs?.value === r.value)).toBe(true);
  });

  it('results that arrive meanwhile create the runs still due too (level-based: no tick needed)', () => {
    const h = new EngineHarness(each(R + R / 4));
    h.send({ type: 'start', runningCount: 0 });
    const [r] = children(h);
    const actions = h.send({ type: 'task-result', taskRunId: r!.id, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect([launches(actions), children(h).length]).toEqual([R / 4, R + R / 4]);
    expect(actions.some((a) => a.type === 'continue')).toBe(false);
  });
});
