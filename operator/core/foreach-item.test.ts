// Engine tables for ForEachItem and Subflow child executions: the three ForEachItem task runs, one child per batch
// with `taskrun.items`/`taskrun.iteration`, iterations by state, failures carrying the child's reason, kill, restart
// of the failed batches only, limits; Subflow's Kestra spellings (transmitFailed without wait, deprecated outputs).
import { describe, expect, it } from 'vitest';
import type { Action, SubflowRequest } from './engine-types.js';
import { EngineHarness } from './engine-harness.js';
import { DISABLED_MESSAGE } from './execution.js';
import { iterationCounts } from './foreach-item.js';
import { DEFAULT_LIMITS } from './limits.js';

const P = 'ai.service.plugin.';
const SPLITS = 'kestra:///test/f/executions/exec1/tasks/each_split/run2/splits.txt';

function forEach(extra = ''): EngineHarness {
  return new EngineHarness(`id: f\nnamespace: test\ntasks:\n  - id: each\n    type: ${P}core.flow.ForEachItem\n    items: "kestra:///x"\n`
    + `    namespace: test\n    flowId: child\n    inputs:\n      file: "{{ taskrun.items }}"\n      at: "{{ taskrun.iteration }}"\n${extra}`
    + `  - id: after\n    type: ${P}core.debug.Return\n    format: "{{ outputs.each_items.iterations.SUCCESS }}"\n`);
}

const requests = (actions: Action[]): SubflowRequest[] =>
  actions.filter((a): a is Extract<Action, { type: 'create-subflow' }> => a.type === 'create-subflow').map((a) => a.request);

/** Starts the flow and answers the split with `n` batches: the requests of the `_items` run. */
function split(h: EngineHarness, n: number): SubflowRequest[] {
  h.send({ type: 'start', runningCount: 0 });
  const run = h.runsOf('each_split')[0]!;
  return requests(h.send({ type: 'task-result', taskRunId: run.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { splits: SPLITS, numberOfBatches: n } } }));
}

function end(h: EngineHarness, r: SubflowRequest, state: 'SUCCESS' | 'FAILED' | 'WARNING' | 'KILLED', extra: { error?: string; outputs?: Record<string, unknown> } = {}): Action[] {
  return h.send({ type: 'subflow-ended', taskRunId: r.taskRunId, iteration: r.iteration!, child: { id: r.executionId, state, ...extra } });
}

describe('ForEachItem', () => {
  it('records _split, one _items run starting a child per batch (taskrun.items, taskrun.iteration), then _merge', () => {
    const h = forEach();
    const reqs = split(h, 3);
    expect(reqs.map((r) => [r.iteration, r.inputs])).toEqual([0, 1, 2].map((i) => [i, { file: SPLITS.replace('splits.txt', `batch-${i + 1}.txt`), at: String(i) }]));
    expect(new Set(reqs.map((r) => r.executionId)).size).toBe(3);
    expect(h.runsOf('each_items')).toHaveLength(1);
    expect(reqs.every((r) => r.taskRunId === h.runsOf('each_items')[0]!.id && r.taskId === 'each_items')).toBe(true);
    expect(h.runsOf('each_items')[0]!.outputs).toEqual({ numberOfBatches: 3, iterations: { CREATED: 3, RUNNING: 0 } });
    for (const r of reqs) h.send({ type: 'subflow-created', taskRunId: r.taskRunId, executionId: r.executionId, iteration: r.iteration! });
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ CREATED: 0, RUNNING: 3 });
    for (const r of reqs) end(h, r, 'SUCCESS', { outputs: { v: r.iteration } });
    const items = h.runsOf('each_items')[0]!;
    expect(items.state.current).toBe('SUCCESS');
    expect(items.attempts.map((a) => a.state.current)).toEqual(['SUCCESS']);
    expect(items.outputs).toEqual({ numberOfBatches: 3, iterations: { CREATED: 0, RUNNING: 0, SUCCESS: 3 } });
    expect(h.runsOf('each_merge')).toHaveLength(1);
    expect(h.runsOf('each')[0]!.outputs).toBeUndefined(); // Kestra: ForEachItem itself has no outputs
  });

  it("a failed batch fails _items with the child's reason; no merge; the others count as SUCCESS", () => {
    const h = forEach();
    const [a, b, c] = split(h, 3);
    end(h, a!, 'SUCCESS');
    end(h, b!, 'FAILED', { error: 'check: item b is not allowed' });
    expect(h.runsOf('each_items')[0]!.state.current).toBe('RUNNING');
    end(h, c!, 'SUCCESS');
    const items = h.runsOf('each_items')[0]!;
    expect(items.state.current).toBe('FAILED');
    expect(items.error).toBe(`1 of 3 subflow executions failed; first: Subflow execution '${b!.executionId}' ended FAILED: check: item b is not allowed`);
    expect(items.outputs?.iterations).toEqual({ CREATED: 0, RUNNING: 0, SUCCESS: 2, FAILED: 1 });
    expect(h.runsOf('each_merge')).toHaveLength(0);
    expect(h.state).toBe('FAILED');
  });

  it('without transmitFailed every ended batch counts as SUCCESS and the execution goes on', () => {
    const h = forEach('    transmitFailed: false\n');
    const reqs = split(h, 2);
    end(h, reqs[0]!, 'FAILED');
    end(h, reqs[1]!, 'KILLED');
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ CREATED: 0, RUNNING: 0, SUCCESS: 2 });
    expect(h.stateOf('each_items')).toBe('SUCCESS');
    expect(h.runsOf('each_merge')).toHaveLength(1);
  });

  it('a disabled subflow fails its batch whatever transmitFailed says', () => {
    const h = forEach('    transmitFailed: false\n');
    const [r] = split(h, 1);
    end(h, r!, 'FAILED', { error: DISABLED_MESSAGE });
    expect(h.stateOf('each_items')).toBe('FAILED');
    expect(h.runsOf('each_items')[0]!.error).toContain(DISABLED_MESSAGE);
  });

  it('without wait a batch is done once its child exists (iterations as Kestra: RUNNING, SUCCESS)', () => {
    const h = forEach('    wait: false\n');
    const reqs = split(h, 2);
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ RUNNING: 2 });
    for (const r of reqs) h.send({ type: 'subflow-created', taskRunId: r.taskRunId, executionId: r.executionId, iteration: r.iteration! });
    expect(h.stateOf('each_items')).toBe('SUCCESS');
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ RUNNING: 0, SUCCESS: 2 });
  });

  it('a report for another child of the same batch (stale) is ignored', () => {
    const h = forEach();
    const [r] = split(h, 1);
    h.send({ type: 'subflow-ended', taskRunId: r!.taskRunId, iteration: 0, child: { id: 'someone-else', state: 'FAILED' } });
    expect(h.stateOf('each_items')).toBe('RUNNING');
  });

  it('a child that could not be created fails its batch with the reason', () => {
    const h = forEach();
    const [r, s] = split(h, 2);
    h.send({ type: 'subflow-error', taskRunId: r!.taskRunId, iteration: 0, error: 'Subflow test.child not found' });
    end(h, s!, 'SUCCESS');
    expect(h.runsOf('each_items')[0]!.error).toBe('1 of 2 subflow executions failed; first: Subflow test.child not found');
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ CREATED: 0, RUNNING: 0, SUCCESS: 1, FAILED: 1 });
  });

  it('kill stops every live child and the _items run', () => {
    const h = forEach();
    const [a, b, c] = split(h, 3);
    end(h, a!, 'SUCCESS');
    const actions = h.send({ type: 'kill' });
    expect(actions.filter((x) => x.type === 'kill-execution').map((x) => (x as { executionId: string }).executionId).sort()).toEqual([b!.executionId, c!.executionId].sort());
    expect(h.stateOf('each_items')).toBe('KILLED');
    expect(h.state).toBe('KILLED');
  });

  it('a restart starts new children for the failed batches only', () => {
    const h = forEach();
    const [a, b] = split(h, 2);
    end(h, a!, 'SUCCESS');
    end(h, b!, 'FAILED');
    expect(h.state).toBe('FAILED');
    const again = requests(h.send({ type: 'restart' }));
    expect(again.map((r) => r.iteration)).toEqual([1]);
    expect(again[0]!.executionId).not.toBe(b!.executionId);
    expect(h.runsOf('each_items')[0]!.outputs?.iterations).toEqual({ CREATED: 1, RUNNING: 0, SUCCESS: 1 });
    end(h, again[0]!, 'SUCCESS');
    expect(h.stateOf('each_items')).toBe('SUCCESS');
    expect(h.runsOf('each_items')[0]!.attempts.map((x) => x.state.current)).toEqual(['FAILED', 'SUCCESS']);
  });

  it.each([
    ['RETRY_FAILED', [1]],
    ['NEW_EXECUTION', [0, 1]],
  ])('restartBehavior %s: a restart starts new children for batches %j', (behavior, iterations) => {
    const h = forEach(`    restartBehavior: ${behavior}\n`);
    const [a, b] = split(h, 2);
    end(h, a!, 'SUCCESS');
    end(h, b!, 'FAILED');
    const again = requests(h.send({ type: 'restart' }));
    expect(again.map((r) => r.iteration)).toEqual(iterations);
    expect(again.map((r) => r.executionId)).not.toContain(a!.executionId);
    for (const r of again) end(h, r, 'SUCCESS');
    expect(h.stateOf('each_items')).toBe('SUCCESS');
  });

  it('restartBehavior NEW_EXECUTION does not widen a retry of _items: only the failed batch runs again', () => {
    const h = forEach('    restartBehavior: NEW_EXECUTION\n    retry:\n      type: constant\n      interval: PT1S\n      maxAttempt: 2\n');
    const [a, b] = split(h, 2);
    end(h, a!, 'SUCCESS');
    end(h, b!, 'FAILED');
    expect(h.stateOf('each_items')).toBe('RETRYING');
    h.advanceClock(1000);
    const again = requests(h.send({ type: 'timer', kind: 'retry', taskRunId: h.runsOf('each_items')[0]!.id }));
    expect(again.map((r) => r.iteration)).toEqual([1]);
  });

  it('scheduleDate, rendered, is on every batch request (as UTC ISO); a date without an offset fails _items by name', () => {
    const h = forEach('    scheduleDate: "{{ \'2030-01-02T03:04:05+02:00\' }}"\n');
    expect(split(h, 2).map((r) => r.scheduleDate)).toEqual(['2030-01-02T01:04:05.000Z', '2030-01-02T01:04:05.000Z']);
    const bad = forEach('    scheduleDate: "2030-01-02 03:04"\n');
    expect(split(bad, 1)).toEqual([]);
    expect(bad.runsOf('each_items')[0]!.error).toContain("scheduleDate: expected an ISO 8601 date-time with an offset");
  });

  it('batches count against MAX_TASK_RUNS_PER_EXECUTION: too many fail _items before any child is asked for', () => {
    const h = forEach();
    h.limits = { ...DEFAULT_LIMITS, maxTaskRuns: 20 };
    expect(split(h, 50)).toEqual([]);
    expect(h.stateOf('each_items')).toBe('FAILED');
    expect(h.runsOf('each_items')[0]!.error).toContain('MAX_TASK_RUNS_PER_EXECUTION');
    expect(h.runsOf('each_items')[0]!.error).toContain('cannot start 50 subflow executions');
  });

  it.each([
    ['waiting, mixed', true, true, [{}, { requested: true, created: true }, { ended: true, childState: 'WARNING' }, { ended: true, childState: 'CANCELLED' }],
      { CREATED: 1, RUNNING: 1, WARNING: 1, FAILED: 1 }],
    ['waiting, not transmitted', true, false, [{ ended: true, childState: 'FAILED' }], { CREATED: 0, RUNNING: 0, SUCCESS: 1 }],
    ['not waiting', false, false, [{ requested: true }, { requested: true, created: true }], { RUNNING: 1, SUCCESS: 1 }],
  ])('iterations: %s', (_n, wait, transmit, slots, expected) => {
    expect(iterationCounts(slots, wait, transmit)).toEqual(expected);
  });
});

describe('Subflow child outcomes', () => {
  const sub = (props: string) => new EngineHarness(`id: f\nnamespace: test\ntasks:\n  - id: sub\n    type: ${P}core.flow.Subflow\n    namespace: test\n    flowId: child\n${props}`);
  const start = (h: EngineHarness) => requests(h.send({ type: 'start', runningCount: 0 }))[0]!;

  it.each([
    ['2030-01-02T03:04:05Z', '2030-01-02T03:04:05.000Z'],
    ['2030-01-02T03:04:05.123-05:00[America/New_York]', '2030-01-02T08:04:05.123Z'],
  ])('scheduleDate %s: the child is requested for %s', (date, iso) => {
    expect(start(sub(`    scheduleDate: "${date}"\n`)).scheduleDate).toBe(iso);
  });

  it('without scheduleDate the request has none', () => {
    expect(start(sub('')).scheduleDate).toBeUndefined();
  });

  it("a failed child's reason is the parent run's error and an ERROR log line", () => {
    const h = sub('    wait: true\n    transmitFailed: true\n');
    const r = start(h);
    const actions = h.send({ type: 'subflow-ended', taskRunId: r.taskRunId, child: { id: r.executionId, state: 'FAILED', error: 'bad: boom' } });
    const message = `Subflow execution '${r.executionId}' ended FAILED: bad: boom`;
    expect(h.runsOf('sub')[0]!.error).toBe(message);
    expect(actions).toContainEqual({ type: 'log', level: 'ERROR', message, taskRunId: r.taskRunId });
  });

  it('a disabled child fails the parent run even without wait (reported ended at once)', () => {
    const h = sub('');
    const r = start(h);
    h.send({ type: 'subflow-ended', taskRunId: r.taskRunId, child: { id: r.executionId, state: 'FAILED', error: DISABLED_MESSAGE } });
    expect(h.stateOf('sub')).toBe('FAILED');
    expect(h.runsOf('sub')[0]!.error).toContain(DISABLED_MESSAGE);
    expect(h.runsOf('sub')[0]!.outputs).toMatchObject({ executionId: r.executionId, state: 'FAILED' });
  });

  it('transmitFailed without wait: accepted, a warning, nothing transmitted', () => {
    const h = sub('    transmitFailed: true\n');
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(actions.some((a) => a.type === 'log' && a.level === 'WARN' && a.message.includes('`transmitFailed: true` has no effect without `wait: true`'))).toBe(true);
    const r = requests(actions)[0]!;
    h.send({ type: 'subflow-created', taskRunId: r.taskRunId, executionId: r.executionId });
    expect(h.stateOf('sub')).toBe('SUCCESS');
    expect(h.runsOf('sub')[0]!.outputs).toEqual({ executionId: r.executionId });
  });

  it('deprecated outputs ride with the request (same namespace) and earn a warning', () => {
    const h = sub('    wait: true\n    outputs:\n      v: "{{ outputs.calc.value }}"\n');
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(requests(actions)[0]!.outputs).toEqual({ v: '{{ outputs.calc.value }}' }); // rendered by the child, not here
    expect(actions.some((a) => a.type === 'log' && a.level === 'WARN' && a.message.includes('`outputs` is deprecated'))).toBe(true);
  });

  it('deprecated outputs towards another namespace are refused before the child exists', () => {
    const h = new EngineHarness(`id: f\nnamespace: test\ntasks:\n  - id: sub\n    type: ${P}core.flow.Subflow\n    namespace: other\n    flowId: child\n    wait: true\n    outputs:\n      v: x\n`);
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(requests(actions)).toEqual([]);
    expect(h.stateOf('sub')).toBe('FAILED');
    expect(h.runsOf('sub')[0]!.error).toContain('allowed only for a subflow of the same namespace');
  });

  it('deprecated outputs without wait: a warning that they are not read, and no outputs asked of the child', () => {
    const h = sub('    outputs:\n      v: x\n');
    const actions = h.send({ type: 'start', runningCount: 0 });
    expect(requests(actions)[0]!.outputs).toBeUndefined();
    expect(actions.some((a) => a.type === 'log' && a.message.includes('`outputs` has no effect without `wait: true`'))).toBe(true);
  });
});

describe('a child rendering the deprecated outputs of its parent', () => {
  it('renders them as its outputs when its flow declares none, and prefers its own outputs otherwise', () => {
    const child = (outputs: string) => `id: child\nnamespace: test\ntasks:\n  - id: calc\n    type: ${P}core.debug.Return\n    format: "7"\n${outputs}`;
    const legacy = { v: '{{ outputs.calc.value }}' };
    const bare = new EngineHarness(child(''));
    bare.exec.legacyOutputs = legacy;
    bare.drive({ calc: { state: 'SUCCESS', outputs: { value: '7' } } });
    expect(bare.exec.outputs).toEqual({ v: '7' });
    const own = new EngineHarness(child('outputs:\n  - id: mine\n    type: INT\n    value: "{{ outputs.calc.value }}"\n'));
    own.exec.legacyOutputs = legacy;
    own.drive({ calc: { state: 'SUCCESS', outputs: { value: '7' } } });
    expect(own.exec.outputs).toEqual({ mine: 7 });
    expect(own.actions.some((a) => a.type === 'log' && a.level === 'WARN' && a.message.includes('declares its own outputs'))).toBe(true);
  });
});
