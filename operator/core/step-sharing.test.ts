// A step copies only the runs still going: ended runs (frozen) are shared with the record it was given, a copied run
// the step left as it was comes back as the very object given, so a sequential loop's step costs O(changed), and the
// store (which compares runs by identity) writes only what changed. Mutating an ended run is refused (frozen).
import { describe, expect, it } from 'vitest';
import { stepMany, stepOwned, stepsInPlace } from './engine.js';
import type { EngineEvent } from './engine-types.js';
import { EngineHarness } from './engine-harness.js';
import { freezeData } from './keyed.js';
import { snapshotIndex } from './run-index.js';
import type { Execution, TaskRun } from './types.js';

const P = 'ai.service.plugin.';
const loop = (n: number) => `id: f\nnamespace: test\ntasks:\n  - id: loop\n    type: ${P}core.flow.ForEach\n    values: ${JSON.stringify(Array.from({ length: n }, (_, i) => `v${i}`))}\n`
  + `    tasks:\n      - id: r\n        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`;

/** What the store does to a written record: every run frozen. */
const written = (exec: Execution): Execution => { for (const r of exec.taskRunList) freezeData(r); return exec; };

/** Runs of `after` that are not the very objects of `before` at the same place (what the store writes). */
const changedRuns = (before: Execution, after: Execution): TaskRun[] => after.taskRunList.filter((r, i) => before.taskRunList[i] !== r);

describe('engine steps share what did not change', () => {
  it('a step of a sequential loop hands back every run it did not change as the same object', () => {
    const h = new EngineHarness(loop(50));
    h.send({ type: 'start', runningCount: 0 });
    for (let i = 0; i < 30; i++) {
      const before = written(h.exec);
      const running = before.taskRunList.find((r) => r.taskId === 'r' && r.state.current === 'RUNNING')!;
      h.send({ type: 'task-result', taskRunId: running.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: running.value } } });
      // The child that ended, and the next one: the loop's own run (RUNNING, unchanged) and the ended children are shared.
      expect(changedRuns(before, h.exec).map((r) => `${r.value}:${r.state.current}`)).toEqual([`v${i}:SUCCESS`, `v${i + 1}:RUNNING`]);
    }
    const ended = h.exec.taskRunList.find((r) => r.state.current === 'SUCCESS')!;
    expect(Object.isFrozen(ended)).toBe(true);
    expect(() => { ended.state.current = 'FAILED'; }).toThrow(TypeError);
  });

  it('the same outcome as copying everything: the loop ends with every value in order', () => {
    const h = new EngineHarness(loop(20)).drive();
    expect(h.exec.state.current).toBe('SUCCESS');
    expect(h.exec.taskRunList.filter((r) => r.taskId === 'r').map((r) => r.outputs?.value)).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
  });

  it('a restart changes ended runs: it copies them, leaving the record it was given as it was', () => {
    const h = new EngineHarness(loop(3)).drive({ r: (run) => (run.value === 'v1' ? { state: 'FAILED', error: 'boom' } : { state: 'SUCCESS' }) });
    expect(h.exec.state.current).toBe('FAILED');
    const before = written(h.exec);
    const failed = before.taskRunList.find((r) => r.state.current === 'FAILED' && r.taskId === 'r')!;
    h.send({ type: 'restart' });
    expect(h.exec.state.current).toBe('RUNNING');
    expect(failed.state.current).toBe('FAILED');
    expect(h.exec.taskRunList.find((r) => r.id === failed.id)!.state.current).toBe('RUNNING');
  });

  it('steps in place (stepOwned) over a record with written runs: no written run changes, the same record as on copies', () => {
    // A batch of the fast path: its first round steps the stored record (runs frozen as written) on a copy, which hands
    // the loop's own run back as the written object; the later rounds step that result in place, and the last one ends
    // the loop's run. The written runs must stay as written, and the record end as with a copy per round.
    const h = new EngineHarness(loop(6));
    h.send({ type: 'start', runningCount: 0 });
    const result = (exec: Execution): EngineEvent[] => exec.taskRunList
      .filter((r) => r.taskId === 'r' && r.state.current === 'RUNNING')
      .map((r) => ({ type: 'task-result', taskRunId: r.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: r.value } } }));
    for (let i = 0; i < 2; i++) h.send(result(h.exec)[0]!);
    const stored = written(h.exec);
    const asWritten = JSON.stringify(stored);
    const batch = (later: typeof stepMany) => {
      let ids = 0;
      const deps = { ...h.deps, newId: () => `batch${++ids}` }; // the same ids in both batches
      let { execution } = stepMany(h.flow, stored, result(stored), deps);
      const loopRun = execution.taskRunList.find((r) => r.taskId === 'loop')!;
      expect(loopRun).toBe(stored.taskRunList.find((r) => r.taskId === 'loop')); // handed back: the written object
      for (let events = result(execution); events.length; events = result(execution)) execution = later(h.flow, execution, events, deps).execution;
      return execution;
    };
    const copied = batch(stepMany);
    const owned = batch(stepOwned);
    expect(owned.state.current).toBe('SUCCESS');
    expect(owned.taskRunList.find((r) => r.taskId === 'loop')!.state.current).toBe('SUCCESS');
    expect(owned).toEqual(copied);
    expect(JSON.stringify(stored)).toBe(asWritten);
  });

  it('stepOwned steps a record no step made (e.g. as read from the store) on a copy', () => {
    const h = new EngineHarness(loop(2));
    h.send({ type: 'start', runningCount: 0 });
    const stored = written(JSON.parse(JSON.stringify(h.exec)) as Execution);
    const running = stored.taskRunList.find((r) => r.taskId === 'r')!;
    const r = stepOwned(h.flow, stored, [{ type: 'task-result', taskRunId: running.id, attempt: 1, outcome: { state: 'SUCCESS' } }], h.deps);
    expect(r.execution).not.toBe(stored);
    expect(running.state.current).toBe('RUNNING');
    expect(r.execution.taskRunList.find((x) => x.id === running.id)!.state.current).toBe('SUCCESS');
  });
});

describe('a step of task results copies only the runs its results change (shared-runs.ts)', () => {
  const fanOut = (n: number) => `id: f\nnamespace: test\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: ${JSON.stringify(Array.from({ length: n }, (_, i) => `v${i}`))}\n`
    + `    tasks:\n      - id: r\n        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`;
  const children = (exec: Execution) => exec.taskRunList.filter((r) => r.taskId === 'r');
  const result = (run: TaskRun, state: 'SUCCESS' | 'FAILED'): EngineEvent =>
    ({ type: 'task-result', taskRunId: run.id, attempt: 1, outcome: { state, ...(state === 'FAILED' ? { error: 'boom' } : { outputs: { value: run.value } }) } });

  it('the running children it did not touch are the written objects, in the record and in its index: no copy made', () => {
    const h = new EngineHarness(fanOut(200));
    h.send({ type: 'start', runningCount: 0 });
    const before = written(h.exec);
    const [a, b, ...rest] = children(before);
    const r = stepMany(h.flow, before, [result(a!, 'SUCCESS'), result(b!, 'SUCCESS')], h.deps);
    expect(changedRuns(before, r.execution).map((x) => `${x.value}:${x.state.current}`)).toEqual(['v0:SUCCESS', 'v1:SUCCESS']);
    const index = snapshotIndex(r.execution);
    // Copying every running child (the usual way) leaves the step's index holding equal copies; sharing leaves the originals.
    expect(rest.every((x) => index.byId.get(x.id) === x && index.children.get(x.parentTaskRunId!)!.includes(x))).toBe(true);
    expect(a!.state.current).toBe('RUNNING'); // the given record is as it was
  });

  it('a result that changes other running runs (an Exit kills them) steps the usual way: the same outcome', () => {
    const h = new EngineHarness(`id: f\nnamespace: test\ntasks:\n  - id: par\n    type: ${P}core.flow.Parallel\n    tasks:\n`
      + `      - id: r\n        type: ${P}core.debug.Return\n        format: x\n`
      + `      - id: seq\n        type: ${P}core.flow.Sequential\n        tasks:\n`
      + `          - id: s\n            type: ${P}core.debug.Return\n            format: y\n`
      + `          - id: exit\n            type: ${P}core.execution.Exit\n            state: KILLED\n`);
    h.send({ type: 'start', runningCount: 0 });
    const s = h.exec.taskRunList.find((x) => x.taskId === 's')!;
    const event = result(s, 'SUCCESS');
    // The same step on a record whose runs are not frozen (nothing to share: every run going is copied).
    const expected = stepMany(h.flow, JSON.parse(JSON.stringify(h.exec)) as Execution, [event], h.deps).execution;
    const before = written(h.exec);
    const r = stepMany(h.flow, before, [event], h.deps);
    // The Exit kills the running Return 'r', a frozen run shared by the results-only path: that path threw, the step
    // ran on copies, and the given record is as it was.
    expect(r.execution.taskRunList.find((x) => x.taskId === 'r')!.state.current).not.toBe('RUNNING');
    // The same record but for the ids of the runs the step created (the aborted try drew some ids already).
    const shape = (e: Execution) => ({ ...e, taskRunList: e.taskRunList.map(({ id: _id, ...rest }) => rest) });
    expect(shape(r.execution)).toEqual(shape(expected));
    expect(before.taskRunList.find((x) => x.taskId === 'r')!.state.current).toBe('RUNNING');
  });

  it('drives a fan-out to the same end as before: every child SUCCESS with its value', () => {
    const h = new EngineHarness(fanOut(300)).drive();
    expect(h.exec.state.current).toBe('SUCCESS');
    expect(children(h.exec).map((r) => r.outputs?.value)).toEqual(Array.from({ length: 300 }, (_, i) => `v${i}`));
  });

  it('stepsInPlace: a record sharing more than 64 running runs is not stepped in place (the fast path leaves it to events)', () => {
    const wide = new EngineHarness(fanOut(200));
    wide.send({ type: 'start', runningCount: 0 });
    const [a] = children(written(wide.exec));
    const r = stepMany(wide.flow, wide.exec, [result(a!, 'SUCCESS')], wide.deps);
    expect(stepsInPlace(r.execution)).toBe(false);
    const narrow = new EngineHarness(fanOut(20));
    narrow.send({ type: 'start', runningCount: 0 });
    const [b] = children(written(narrow.exec));
    expect(stepsInPlace(stepMany(narrow.flow, narrow.exec, [result(b!, 'SUCCESS')], narrow.deps).execution)).toBe(true);
  });
});
