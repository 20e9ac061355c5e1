// Fan-out cost per child stays flat: an engine step over a 20,000-child loop costs per child about what it costs over
// 2,000 (no lookup walks the whole run list per child). Timing ratio with a wide margin: quadratic work gives ~10×.
import { describe, expect, it } from 'vitest';
import { createRenderer } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { stepMany } from './engine.js';
import type { EngineDeps, EngineEvent } from './engine-types.js';
import { newExecution } from './execution.js';
import type { Flow } from './types.js';

const P = 'ai.service.plugin.';
const renderer = createRenderer({ secret: () => undefined });

/** A loop of Sequential blocks (nested flowables resolve their children every pass) over `n` values. */
function loopFlow(type: string, n: number): Flow {
  // ForEach names its list `values` and runs one value at a time unless told otherwise.
  const values = type === 'ForEach' ? `values: "{{ range(1, ${n}) }}"\n    concurrencyLimit: 0` : `value: "{{ range(1, ${n}) }}"`;
  return { ...parseFlow(`id: f\nnamespace: test\ntasks:
  - id: each
    type: ${P}core.flow.${type}
    ${values}
    tasks:
      - id: block
        type: ${P}core.flow.Sequential
        tasks:
          - { id: a, type: ${P}core.debug.Return, format: "{{ taskrun.value }}" }
          - { id: b, type: ${P}core.debug.Return, format: "{{ outputs.a[taskrun.value].value }}" }
`), revision: 1 };
}

/** Runs every child of a parallel loop to its end, answering all launches of a step in the next one: ms per value. */
function runParallel(n: number, type = 'EachParallel'): number {
  const flow = loopFlow(type, n);
  let ids = 0;
  const deps: EngineDeps = { now: new Date('2026-01-01T00:00:00Z'), newId: () => `r${++ids}`, random: () => 0.5, renderer };
  const t0 = performance.now();
  let { execution, actions } = stepMany(flow, newExecution({ id: 'e', flow, inputs: {}, now: deps.now }), [{ type: 'start', runningCount: 0 }], deps);
  while (actions.some((a) => a.type === 'launch' || a.type === 'continue')) {
    // A step creates at most RUNS_PER_STEP runs and asks for another (`continue`): the controller sends a tick.
    const events: EngineEvent[] = actions.flatMap((a): EngineEvent[] => (a.type === 'launch'
      ? [{ type: 'task-result', taskRunId: a.taskRunId, attempt: a.attempt, outcome: { state: 'SUCCESS', outputs: { value: a.taskRunId } } }]
      : a.type === 'continue' ? [{ type: 'tick' }] : []));
    ({ execution, actions } = stepMany(flow, execution, events, deps));
  }
  expect(execution.state.current).toBe('SUCCESS');
  expect(execution.taskRunList).toHaveLength(1 + 3 * n);
  return (performance.now() - t0) / n;
}

const best = (f: () => number, times = 3) => Math.min(...Array.from({ length: times }, f));

describe('fan-out cost per child', () => {
  it('an EachParallel of Sequential blocks: flat from 2,000 to 20,000 values', () => {
    runParallel(500); // warm-up (JIT)
    const small = best(() => runParallel(2_000));
    const large = best(() => runParallel(20_000), 2);
    expect(large / small, `${small.toFixed(3)} ms per value at 2,000, ${large.toFixed(3)} at 20,000`).toBeLessThan(4);
  }, 120_000);

  it('a ForEach with concurrencyLimit 0 (the same value loop as EachSequential): flat from 2,000 to 20,000 values', () => {
    runParallel(500, 'ForEach');
    const small = best(() => runParallel(2_000, 'ForEach'));
    const large = best(() => runParallel(20_000, 'ForEach'), 2);
    expect(large / small, `${small.toFixed(3)} ms per value at 2,000, ${large.toFixed(3)} at 20,000`).toBeLessThan(4);
  }, 120_000);
});
