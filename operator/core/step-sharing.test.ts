// A step copies only the runs still going: ended runs (frozen) are shared with the record it was given, a copied run
// the step left as it was comes back as the very object given, so a sequential loop's step costs O(changed), and the
// store (which compares runs by identity) writes only what changed. Mutating an ended run is refused (frozen).
import { describe, expect, it } from 'vitest';
import { EngineHarness } from './engine-harness.js';
import { freezeData } from './keyed.js';
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
});
