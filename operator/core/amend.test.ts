// Tables for the events that amend an ended execution (set-labels, change-state): applied to an ended record with
// nothing else moving, change-state ignored while it runs, and other late events still dropped.
import { describe, expect, it } from 'vitest';
import { EngineHarness } from './engine-harness.js';

const FLOW = `id: f
namespace: amend
tasks:
  - id: a
    type: ai.service.plugin.core.debug.Return
    format: x
`;

function ended(): EngineHarness {
  const h = new EngineHarness(FLOW).drive();
  expect(h.exec.state.current).toBe('SUCCESS');
  return h;
}

describe('amending an ended execution', () => {
  it('set-labels replaces the labels; nothing else changes and nothing runs', () => {
    const h = ended();
    const runs = structuredClone(h.exec.taskRunList);
    const actions = h.send({ type: 'set-labels', labels: [{ key: 'team', value: 'data' }] });
    expect(actions).toEqual([]);
    expect(h.exec.labels).toEqual([{ key: 'team', value: 'data' }]);
    expect(h.exec.state.current).toBe('SUCCESS');
    expect(h.exec.taskRunList).toEqual(runs);
  });

  it.each([['FAILED'], ['CANCELLED'], ['KILLED']] as const)('change-state moves SUCCESS to %s with a history entry', (state) => {
    const h = ended();
    h.advanceClock(1000);
    expect(h.send({ type: 'change-state', state })).toEqual([]);
    expect(h.exec.state.current).toBe(state);
    expect(h.exec.state.histories.at(-1)).toEqual({ state, date: '2026-01-01T00:00:01.000Z' });
    expect(h.exec.taskRunList.map((r) => r.state.current)).toEqual(['SUCCESS']);
  });

  it('change-state to a running state, or of a running execution, changes nothing', () => {
    const h = ended();
    h.send({ type: 'change-state', state: 'RUNNING' });
    expect(h.exec.state.current).toBe('SUCCESS');
    const running = new EngineHarness(FLOW);
    running.send({ type: 'start', runningCount: 0 });
    running.send({ type: 'change-state', state: 'FAILED' });
    expect(running.exec.state.current).toBe('RUNNING');
  });

  it('other events stay dropped once ended', () => {
    const h = ended();
    const before = structuredClone(h.exec);
    expect(h.send({ type: 'kill' })).toEqual([]);
    expect(h.exec).toEqual(before);
  });
});
