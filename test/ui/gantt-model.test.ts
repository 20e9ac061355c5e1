// The execution Gantt's model (ui/src/pages/executions/gantt-model.ts) as tables: tree order with depth, one bar per
// attempt (the run's own span for a flowable without attempts), running spans ending at `now`, collapsed parents
// hiding their descendants, runs in a parent cycle still shown once, and work linear in the task runs.
import { describe, expect, it } from 'vitest';
import { ganttModel, ticks, type GanttTaskRun } from '../../ui/src/pages/executions/gantt-model.js';

const T0 = Date.parse('2024-01-01T00:00:00.000Z');
const at = (ms: number): string => new Date(T0 + ms).toISOString();
const st = (current: string, start: number, end?: number) => ({ current, startDate: at(start), ...(end === undefined ? {} : { endDate: at(end) }) });
const run = (id: string, parent?: string, extra: Partial<GanttTaskRun> = {}): GanttTaskRun => ({
  id, taskId: id.replace(/-\d+$/, ''), ...(parent ? { parentTaskRunId: parent } : {}), state: st('SUCCESS', 0, 10), attempts: [{ state: st('SUCCESS', 0, 10) }], ...extra,
});

describe('ganttModel', () => {
  it('puts children under their parent in creation order, with their depth', () => {
    const runs = [run('a'), run('loop', undefined, { attempts: [] }), run('b'), run('x-1', 'loop', { value: '1' }), run('x-2', 'loop', { value: '2' }), run('y-1', 'x-1')];
    const m = ganttModel(runs, T0 + 100, at(0));
    expect(m.rows.map((r) => [r.id, r.depth, r.hasChildren])).toEqual([
      ['a', 0, false], ['loop', 0, true], ['x-1', 1, true], ['y-1', 2, false], ['x-2', 1, false], ['b', 0, false],
    ]);
    expect(m.rows.find((r) => r.id === 'x-2')!.value).toBe('2');
  });

  it('draws one bar per attempt, the run span for a flowable, and a running one up to now', () => {
    const runs = [
      run('retried', undefined, { state: st('SUCCESS', 0, 300), attempts: [{ state: st('FAILED', 0, 100) }, { state: st('SUCCESS', 200, 300) }] }),
      run('flowable', undefined, { state: st('RUNNING', 50), attempts: [] }),
      run('running', undefined, { state: st('RUNNING', 400), attempts: [{ state: st('RUNNING', 400) }] }),
    ];
    const m = ganttModel(runs, T0 + 1000, at(0));
    expect(m.rows.map((r) => r.bars.map((b) => [b.start - T0, b.end - T0, b.state, b.attempt]))).toEqual([
      [[0, 100, 'FAILED', 1], [200, 300, 'SUCCESS', 2]],
      [[50, 1000, 'RUNNING', undefined]],
      [[400, 1000, 'RUNNING', 1]],
    ]);
    expect([m.start - T0, m.end - T0]).toEqual([0, 1000]);
  });

  it('hides the descendants of a collapsed run, and shows runs of a parent cycle once as roots', () => {
    const runs = [run('p'), run('c-1', 'p'), run('g-1', 'c-1'), run('q'), run('u', 'v'), run('v', 'u')];
    expect(ganttModel(runs, T0, at(0), new Set(['p'])).rows.map((r) => r.id)).toEqual(['p', 'q', 'u', 'v']);
    expect(ganttModel(runs, T0, at(0)).rows.map((r) => r.id)).toEqual(['p', 'c-1', 'g-1', 'q', 'u', 'v']);
  });

  it('handles 100,000 task runs and a 10,000-deep nesting (no recursion)', () => {
    const wide = [run('each', undefined, { attempts: [] }), ...Array.from({ length: 100_000 }, (_, i) => run(`r-${i}`, 'each', { value: String(i) }))];
    const m = ganttModel(wide, T0, at(0));
    expect(m.rows).toHaveLength(100_001);
    expect(m.rows[100_000]!.value).toBe('99999');
    const deep = Array.from({ length: 10_000 }, (_, i) => run(`d-${i}`, i ? `d-${i - 1}` : undefined));
    expect(ganttModel(deep, T0).rows.at(-1)!.depth).toBe(9_999);
  });

  it('ticks cover the axis with round steps', () => {
    expect(ticks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(ticks(4000)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(ticks(0)).toEqual([0]);
  });
});
