// Tables for the execution-wide limits in the engine: MAX_TASK_RUNS_PER_EXECUTION (loops refused at their value
// count, any flowable refused before it creates a run too many) and MAX_SUBFLOW_DEPTH (checked before a child
// execution is requested; kept by flow-level retries and replays).
import { describe, expect, it } from 'vitest';
import { minRuns } from './budget.js';
import { EngineHarness } from './engine-harness.js';
import { replayExecution } from './execution.js';
import { DEFAULT_LIMITS } from './limits.js';
import type { Execution, Task } from './types.js';

const P = 'ai.service.plugin.';
const flow = (tasks: string, tail = '') => `id: f\nnamespace: test\ntasks:\n${tasks}${tail}`;
const ret = (id: string, indent = '  ') => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "${id}"\n`;
const loop = (type: string, values: number, body: string, extra = '') =>
  `  - id: each\n    type: ${P}core.flow.${type}\n    value: "{{ range(1, ${values}) }}"\n${extra}    tasks:\n${body}`;
const withLimits = (h: EngineHarness, limits: Partial<typeof DEFAULT_LIMITS>) => { h.limits = { ...DEFAULT_LIMITS, ...limits }; return h; };
const TASK_RUNS = 'setting MAX_TASK_RUNS_PER_EXECUTION';
const DEPTH = 'setting MAX_SUBFLOW_DEPTH';

describe('MAX_TASK_RUNS_PER_EXECUTION', () => {
  it.each([
    ['EachParallel', 300, ret('r', '      '), 'needs at least 300 task runs for its 300 values'],
    ['EachSequential', 300, ret('r', '      '), 'needs at least 300 task runs for its 300 values'],
    // 40 values × (Sequential + 2 children): refused from the fewest runs one iteration needs, before any is created
    ['EachParallel', 40, `      - id: s\n        type: ${P}core.flow.Sequential\n        tasks:\n${ret('a', '          ')}${ret('b', '          ')}`,
      'needs at least 120 task runs for its 40 values'],
  ])('%s over %i values fails at once, creating no child run', (type, values, body, what) => {
    const h = withLimits(new EngineHarness(flow(loop(type, values, body))), { maxTaskRuns: 100 });
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(h.exec.taskRunList.map((r) => r.taskId)).toEqual(['each']);
    expect(actions.filter((a) => a.type === 'launch')).toHaveLength(0);
    expect(h.state).toBe('FAILED');
    const error = h.runsOf('each')[0]!.error!;
    expect(error).toContain(`${type} 'each' ${what}, beside the 1 of this execution: over the limit of 100`);
    expect(error).toContain(TASK_RUNS);
  });

  it('a loop that fits runs: the limit counts every run of the execution', () => {
    const h = withLimits(new EngineHarness(flow(loop('EachParallel', 99, ret('r', '      ')))), { maxTaskRuns: 100 }).drive();
    expect(h.state).toBe('SUCCESS');
    expect(h.exec.taskRunList).toHaveLength(100);
  });

  it('the default limit applies when the controller passes none (200,000)', () => {
    const h = new EngineHarness(flow(loop('EachParallel', 100_000, ret('a', '      ') + ret('b', '      ') + ret('c', '      '))));
    h.send({ type: 'start', runningCount: 0 });
    expect(h.exec.taskRunList).toHaveLength(1);
    expect(h.runsOf('each')[0]!.error).toContain('needs at least 300000 task runs for its 100000 values, beside the 1 of this execution: over the limit of 200000');
  });

  it('the refusal is a task failure: `errors` handlers run, and the execution fails', () => {
    const h = withLimits(new EngineHarness(flow(loop('EachParallel', 50, ret('r', '      ')), `errors:\n${ret('handler')}`)), { maxTaskRuns: 10 }).drive();
    expect(h.stateOf('each')).toBe('FAILED');
    expect(h.stateOf('handler')).toBe('SUCCESS');
    expect(h.state).toBe('FAILED');
  });

  it('Parallel branches are refused before any is created', () => {
    const branches = Array.from({ length: 12 }, (_, i) => ret(`b${i}`, '      ')).join('');
    const h = withLimits(new EngineHarness(flow(`  - id: par\n    type: ${P}core.flow.Parallel\n    tasks:\n${branches}`)), { maxTaskRuns: 10 });
    h.send({ type: 'start', runningCount: 0 });
    expect(h.exec.taskRunList.map((r) => r.taskId)).toEqual(['par']);
    expect(h.runsOf('par')[0]!.error).toMatch(/^Parallel 'par' cannot create 12 more task run\(s\), beside the 1 of this execution: over the limit of 10 /);
  });

  it('runs created one by one stop at the limit: the execution never holds more', () => {
    // 3 × If (cheapest branch empty, so the loop fits) whose `then` creates 3 runs each, one after the other.
    const body = `      - id: check\n        type: ${P}core.flow.If\n        condition: "true"\n        then:\n${ret('a', '          ')}${ret('b', '          ')}${ret('c', '          ')}`;
    const h = withLimits(new EngineHarness(flow(loop('EachParallel', 3, body))), { maxTaskRuns: 10 }).drive();
    expect(h.exec.taskRunList).toHaveLength(10);
    expect(h.runsOf('c')).toHaveLength(0);
    expect(h.runsOf('check').map((r) => r.state.current)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    expect(h.runsOf('check')[0]!.error).toContain(`If 'check' cannot create 1 more task run(s), beside the 10 of this execution`);
    expect(h.state).toBe('FAILED');
  });

  it('a refused flowable waits for its running children before it fails', () => {
    const branches = Array.from({ length: 12 }, (_, i) => ret(`b${i}`, '      ')).join('');
    const h = withLimits(new EngineHarness(flow(`  - id: par\n    type: ${P}core.flow.Parallel\n    concurrent: 2\n    tasks:\n${branches}`)), { maxTaskRuns: 10 });
    let launches = h.send({ type: 'start', runningCount: 0 }).filter((a) => a.type === 'launch') as { taskRunId: string }[];
    // Answer the oldest running branch until the 10th run exists and the next one is refused.
    while (h.exec.taskRunList.length < 10 || launches.length > 1) {
      const next = launches.shift()!;
      launches.push(...(h.send({ type: 'task-result', taskRunId: next.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' } })
        .filter((a) => a.type === 'launch') as { taskRunId: string }[]));
    }
    expect(h.exec.taskRunList).toHaveLength(10);
    expect(h.stateOf('par')).toBe('RUNNING');
    expect(h.runsOf('par')[0]!.flowableState?.refused).toContain(TASK_RUNS);
    h.send({ type: 'task-result', taskRunId: launches[0]!.taskRunId, attempt: 1, outcome: { state: 'SUCCESS' } });
    expect(h.stateOf('par')).toBe('FAILED');
    expect(h.runsOf('par')[0]!.error).toContain(TASK_RUNS);
    expect(h.state).toBe('FAILED');
  });

  it('a root task that would go over fails the execution with the limit', () => {
    const h = withLimits(new EngineHarness(flow(loop('EachParallel', 9, ret('r', '      ')) + ret('after'))), { maxTaskRuns: 10 }).drive();
    expect(h.exec.taskRunList).toHaveLength(10);
    expect(h.state).toBe('FAILED');
    expect(h.exec.error).toContain(`task 'after' cannot start, beside the 10 of this execution: over the limit of 10`);
  });

  it.each<[string, Task, number]>([
    ['a runnable', { id: 'r', type: `${P}core.debug.Return` }, 1],
    ['a disabled task', { id: 'r', type: `${P}core.debug.Return`, disabled: true }, 0],
    ['Sequential with a finally', { id: 's', type: `${P}core.flow.Sequential`, tasks: [{ id: 'a', type: 'x' }, { id: 'b', type: 'x' }], finally: [{ id: 'c', type: 'x' }] }, 4],
    ['If: the cheaper branch', { id: 'i', type: `${P}core.flow.If`, condition: 'x', then: [{ id: 'a', type: 'x' }, { id: 'b', type: 'x' }], else: [{ id: 'c', type: 'x' }] }, 2],
    ['Switch without defaults', { id: 's', type: `${P}core.flow.Switch`, value: 'x', cases: { a: [{ id: 'a', type: 'x' }] } }, 1],
    ['a loop: its body is sized at run time', { id: 'e', type: `${P}core.flow.EachParallel`, value: '[]', tasks: [{ id: 'a', type: 'x' }] }, 1],
    ['ForEachItem: itself, its split, items and merge', { id: 'e', type: `${P}core.flow.ForEachItem`, items: 'x', namespace: 'n', flowId: 'c' }, 4],
    ['DAG', { id: 'd', type: `${P}core.flow.DAG`, tasks: [{ task: { id: 'a', type: 'x' } }, { task: { id: 'b', type: 'x' }, dependsOn: ['a'] }] }, 3],
  ])('fewest runs of %s', (_n, task, expected) => {
    expect(minRuns(task)).toBe(expected);
  });
});

describe('MAX_SUBFLOW_DEPTH', () => {
  const subflow = `  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: test\n    flowId: "{{ 'child' }}"\n    wait: true\n`;
  const forEach = `  - id: each\n    type: ${P}core.flow.ForEachItem\n    items: "kestra:///x"\n    namespace: test\n    flowId: child\n`;
  const at = (yaml: string, depth: number, max: number) => {
    const h = withLimits(new EngineHarness(flow(yaml)), { maxSubflowDepth: max });
    h.exec = { ...h.exec, depth } as Execution;
    return h;
  };

  it('a Subflow below the limit requests its child', () => {
    const h = at(subflow, 2, 3);
    expect(h.send({ type: 'start', runningCount: 0 }).some((a) => a.type === 'create-subflow')).toBe(true);
    expect(h.stateOf('call')).toBe('RUNNING');
  });

  it.each([['Subflow', subflow, 'call'], ['ForEachItem', forEach, 'each']])('a %s whose child would be too deep fails before creating anything', (kind, yaml, id) => {
    const h = at(yaml, 3, 3);
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(actions.some((a) => a.type === 'create-subflow')).toBe(false);
    expect(h.exec.taskRunList.map((r) => r.taskId)).toEqual([id]);
    expect(h.stateOf(id)).toBe('FAILED');
    expect(h.runsOf(id)[0]!.error).toBe(`${kind} '${id}' would start an execution of test.child at depth 4: over the limit of 3 `
      + `(nesting depth of Subflow and ForEachItem executions under one root execution; ${DEPTH})`);
    expect(h.state).toBe('FAILED');
  });

  it('a malformed depth counts as a root, never below it', () => {
    const h = at(subflow, -50, 1);
    expect(h.send({ type: 'start', runningCount: 0 }).some((a) => a.type === 'create-subflow')).toBe(true);
    const deeper = at(subflow, 1, 1);
    deeper.send({ type: 'start', runningCount: 0 });
    expect(deeper.stateOf('call')).toBe('FAILED');
  });

  it('a flow-level retry (CREATE_NEW_EXECUTION) and a replay keep the depth of the execution they replace', () => {
    const retry = 'retry:\n  type: constant\n  interval: PT0S\n  maxAttempt: 2\n  behavior: CREATE_NEW_EXECUTION\n';
    const h = at(ret('a') + retry, 4, 10).drive({ a: { state: 'FAILED', error: 'boom' } });
    const created = h.actions.find((a) => a.type === 'create-execution') as { execution: Execution };
    expect(created.execution.depth).toBe(4);
    expect(replayExecution({ original: h.exec, id: 'replay', now: h.now }).depth).toBe(4);
    expect(replayExecution({ original: { ...h.exec, depth: undefined }, id: 'replay', now: h.now }).depth).toBeUndefined();
  });
});
