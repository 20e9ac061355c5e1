// Run indexes: a record snapshot is indexed once and shared (by launchers, run contexts and the `outputs` variables of
// every attempt launched from it); an engine step keeps its index in line as it creates runs and sets outputs, and
// hands it to the record it returns.
import { describe, expect, it } from 'vitest';
import { buildOutputs, buildVariables, setRunOutputs } from './context.js';
import { EngineHarness } from './engine-harness.js';
import { childrenIn, indexRuns, runById, snapshotIndex } from './run-index.js';
import type { Execution, TaskRun } from './types.js';

const run = (id: string, taskId: string, extra: Partial<TaskRun> = {}): TaskRun => ({
  id, executionId: 'e', namespace: 'ns', flowId: 'f', taskId, attempts: [],
  state: { current: 'SUCCESS', histories: [], startDate: '2026-01-01T00:00:00Z' }, ...extra,
});
const P = 'ai.service.plugin.';
const loopFlow = `id: f\nnamespace: ns\ntasks:\n  - id: each\n    type: ${P}core.flow.EachParallel\n    value: ["a", "b"]\n    tasks:\n      - { id: r, type: ${P}core.debug.Return, format: x }\n`;

describe('run indexes', () => {
  it('index runs by id and children by parent, in creation order', () => {
    const index = indexRuns([run('p', 'each'), run('c2', 'r', { parentTaskRunId: 'p' }), run('q', 'after'), run('c1', 'r', { parentTaskRunId: 'p' })]);
    expect(childrenIn(index, 'p').map((r) => r.id)).toEqual(['c2', 'c1']);
    expect(childrenIn(index, undefined).map((r) => r.id)).toEqual(['p', 'q']);
    expect(childrenIn(index, 'none')).toEqual([]);
    expect(index.byId.get('c1')?.taskId).toBe('r');
  });

  it('a record snapshot is indexed once; a replaced or longer run list is indexed again', () => {
    const h = new EngineHarness(loopFlow).drive();
    const exec = h.exec;
    const first = snapshotIndex(exec);
    expect(snapshotIndex(exec)).toBe(first);
    expect(runById(exec, exec.taskRunList[1]!.id)).toBe(exec.taskRunList[1]);
    const longer = { ...exec, taskRunList: exec.taskRunList } as Execution;
    longer.taskRunList.push(run('extra', 'r'));
    expect(snapshotIndex(exec)).not.toBe(first);
    expect(runById(exec, 'extra')?.id).toBe('extra');
    const replaced = { ...exec, taskRunList: [run('only', 'r')] };
    expect(runById(replaced, 'only')?.id).toBe('only');
  });

  it('every attempt launched from one record shares one outputs tree', () => {
    const h = new EngineHarness(loopFlow).drive();
    const [a, b] = h.runsOf('r');
    const flow = h.flow;
    const outputsA = buildVariables(flow, h.exec, a).outputs;
    expect(buildVariables(flow, h.exec, b).outputs).toBe(outputsA);
    expect(JSON.parse(JSON.stringify(outputsA))).toEqual({ r: { a: { value: 'a' }, b: { value: 'b' } } });
  });

  it('a step hands its index to the record it returns, outputs tree included', () => {
    const h = new EngineHarness(loopFlow);
    h.send({ type: 'start', runningCount: 0 });
    const [a] = h.runsOf('r');
    h.send({ type: 'task-result', taskRunId: a!.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: 'A' } } });
    const index = snapshotIndex(h.exec);
    expect([...index.byId.values()]).toEqual(h.exec.taskRunList);
    expect(JSON.parse(JSON.stringify(buildOutputs(h.exec)))).toEqual({ r: { a: { value: 'A' } } });
    expect(snapshotIndex(h.exec)).toBe(index);
  });

  it('setting a run\'s outputs updates a built outputs tree at that run\'s path only', () => {
    const runs = [run('p', 'each', { value: 'x' }), run('c', 'r', { parentTaskRunId: 'p', outputs: { value: 1 } }), run('t', 'top', { outputs: { n: 1 } })];
    const index = indexRuns(runs);
    const exec = { taskRunList: runs } as Execution;
    const tree = buildOutputs(exec, index);
    setRunOutputs(index, runs[1]!, { value: 2 });
    expect(buildOutputs(exec, index)).toBe(tree);
    expect(JSON.parse(JSON.stringify(tree))).toEqual({ r: { x: { value: 2 } }, top: { n: 1 } });
  });
});
