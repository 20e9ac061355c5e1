// Template variables built from names a flow author chose (input ids, loop values, label keys) never reach a prototype.
import { afterEach, describe, expect, it } from 'vitest';
import { createRenderer } from '../expr/index.js';
import { buildOutputs, buildVariables, nestInputs, setRunOutputs, valuePath } from './context.js';
import { addRun, forkIndex, indexRuns } from './run-index.js';
import { newExecution } from './execution.js';
import type { Execution, Flow, TaskRun } from './types.js';

const clean = () => {
  for (const k of ['polluted', 'disabled', 'x']) delete (Object.prototype as Record<string, unknown>)[k];
};
afterEach(clean);

const flow: Flow = { id: 'f', namespace: 'ns', tasks: [{ id: 't', type: 'ai.service.plugin.core.debug.Return' }] } as Flow;

function run(id: string, taskId: string, extra: Partial<TaskRun> = {}): TaskRun {
  return { id, executionId: 'e', namespace: 'ns', flowId: 'f', taskId, attempts: [], state: { current: 'SUCCESS', histories: [], startDate: '2026-01-01T00:00:00Z' }, ...extra } as TaskRun;
}

describe('prototype-free variables', () => {
  it.each([
    ['a.__proto__.disabled', true],
    ['__proto__.polluted', 'yes'],
    ['constructor.prototype.x', 1],
    ['a.constructor.prototype.polluted', 1],
  ])('nestInputs(%s) pollutes nothing and keeps the dotted key readable', (id, value) => {
    const nested = nestInputs({ [id]: value, plain: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).disabled).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(nested[id]).toBe(value);
    expect(nested.plain).toBe(1);
  });

  it('nests dotted ids into maps, replacing a scalar parent', () => {
    const nested = nestInputs({ a: 'scalar', 'a.b': 2, 'a.c.d': 3 });
    expect(JSON.parse(JSON.stringify(nested))).toEqual({ a: { b: 2, c: { d: 3 } }, 'a.b': 2, 'a.c.d': 3 });
  });

  it('loop values such as __proto__ become plain keys of the outputs map', () => {
    const exec: Execution = { ...newExecution({ id: 'e', flow, inputs: {}, now: new Date('2026-01-01T00:00:00Z') }) };
    exec.taskRunList = [
      run('p', 'each', { value: '__proto__' }),
      run('c', 'inner', { parentTaskRunId: 'p', outputs: { value: 1 } }),
      run('p2', 'each', { value: 'constructor' }),
      run('q', 'deeper', { parentTaskRunId: 'p2', value: 'polluted' }),
      run('c2', 'leaf', { parentTaskRunId: 'q', outputs: { value: 2 } }),
    ];
    const outputs = buildOutputs(exec) as Record<string, Record<string, unknown>>;
    expect(({} as Record<string, unknown>).value).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(outputs)).toBe('{"inner":{"__proto__":{"value":1}},"leaf":{"constructor":{"polluted":{"value":2}}}}');
  });

  it('label keys are plain keys', () => {
    const exec = newExecution({ id: 'e', flow, inputs: {}, now: new Date(), labels: [{ key: '__proto__', value: 'x' }] });
    const vars = buildVariables(flow, exec);
    expect(Object.getPrototypeOf(vars.labels)).toBeNull();
    expect((vars.labels as Record<string, unknown>)['__proto__']).toBe('x');
  });
});

describe('the outputs tree, each task id\'s branch made on first read', () => {
  /** The tree as it was placed whole before (every run with outputs, in creation order, later runs winning). */
  function placedWhole(runs: TaskRun[]): Record<string, unknown> {
    const tree: Record<string, unknown> = {};
    for (const r of runs) place(tree, runs, r);
    return tree;
  }

  /** Places one run's outputs, as setting them placed them in a tree built whole. */
  function place(tree: Record<string, unknown>, runs: TaskRun[], r: TaskRun): void {
    if (!r.outputs) return;
    const path = valuePath(new Map(runs.map((x) => [x.id, x])), r);
    if (path.length === 0) { tree[r.taskId] = r.outputs; return; }
    let node = (tree[r.taskId] ??= {}) as Record<string, unknown>;
    for (const v of path.slice(0, -1)) node = (node[v] = typeof node[v] === 'object' && node[v] !== null ? node[v] : {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = r.outputs;
  }

  const runs = (): TaskRun[] => [
    run('t1', 'task', { outputs: { value: 'first' } }),
    run('each', 'each'),
    ...['a', 'b', 'c'].flatMap((v, i) => [
      run(`i${i}`, 'inner', { parentTaskRunId: 'each', value: v, outputs: { x: `x-${v}`, n: i } }),
      run(`d${i}`, 'deep', { parentTaskRunId: 'each', value: v }),
      run(`l${i}`, 'leaf', { parentTaskRunId: `d${i}`, value: `${v}${v}`, outputs: { y: i } }),
    ]),
    run('t2', 'task', { outputs: { value: 'second' } }),
    run('none', 'quiet'),
  ];
  const execOf = (list: TaskRun[]): Execution => ({ ...newExecution({ id: 'e', flow, inputs: {}, now: new Date('2026-01-01T00:00:00Z') }), taskRunList: list });
  const renderer = createRenderer();

  it.each([
    '{{ outputs | json }}',
    '{{ outputs.task.value }}',
    '{{ outputs.inner.b.x }}',
    '{% for v in ["a", "c"] %}{{ outputs.inner[v].x }},{% endfor %}',
    '{{ outputs.leaf.c.cc.y }}',
    '{% for k, v in outputs %}{{ k }}={{ v | json }};{% endfor %}',
    '{{ outputs | keys | json }}',
    '{{ outputs.quiet ?? "none" }}',
    '{{ outputs.inner is defined }} {{ outputs.missing is defined }}',
    '{{ "inner" in outputs }}',
    '{{ outputs.inner | length }}',
  ])('%s renders as with the tree placed whole', (template) => {
    const list = runs();
    const lazyVars = buildVariables(flow, execOf(list));
    const whole = { ...lazyVars, outputs: placedWhole(list) };
    expect(renderer.render(template, lazyVars)).toBe(renderer.render(template, whole));
  });

  it('keys keep their order, and JSON, entries and copies read every branch', () => {
    const list = runs();
    const outputs = buildOutputs(execOf(list));
    expect(Object.keys(outputs)).toEqual(['task', 'inner', 'leaf']);
    expect(JSON.parse(JSON.stringify(outputs))).toEqual(placedWhole(list));
    expect(Object.fromEntries(Object.entries(buildOutputs(execOf(runs()))))).toEqual(placedWhole(list));
    expect(structuredClone(buildOutputs(execOf(runs())))).toEqual(placedWhole(list));
  });

  it('a branch not read is not made', () => {
    const list = runs();
    const outputs = buildOutputs(execOf(list));
    expect(renderer.render('{{ outputs.task.value }}', { outputs })).toBe('second');
    expect(Object.getOwnPropertyDescriptor(outputs, 'task')).toHaveProperty('value');
    expect(Object.getOwnPropertyDescriptor(outputs, 'inner')).toHaveProperty('get');
  });

  // A branch not made yet when outputs are set reads the run list when it is made: the runs of one path in list order,
  // as a fresh build places them (a record read back from the store). One made already was given the outputs as set.
  it('outputs set on runs before their branch is read: the tree a fresh build of the run list gives', () => {
    const list = runs();
    const index = indexRuns(list);
    const outputs = buildOutputs(execOf(list), index);
    const late = run('i9', 'inner', { parentTaskRunId: 'each', value: 'a' }); // a later run at the path of inner 'a'
    list.push(late);
    addRun(index, late, list.length - 1);
    setRunOutputs(index, list[2]!, { x: 'again' }); // inner 'a', which had outputs
    setRunOutputs(index, list[3]!, { z: 1 }); // deep 'a': its first outputs
    setRunOutputs(index, late, { x: 'late' });
    setRunOutputs(index, list[0]!, { value: 'changed' }); // task: the earlier of its two runs
    expect(JSON.parse(JSON.stringify(outputs))).toEqual(JSON.parse(JSON.stringify(placedWhole(list))));
    expect(renderer.render('{{ outputs.inner.a.x }} {{ outputs.task.value }} {{ outputs.deep.a.z }}', { outputs })).toBe('late second 1');
    // The log the index keeps (handed on to forks) finds the same runs as a walk.
    expect(JSON.parse(JSON.stringify(buildOutputs(execOf(list), forkIndex(index, list))))).toEqual(JSON.parse(JSON.stringify(placedWhole(list))));
  });

  it('outputs set on runs after every branch is made: as set in the tree placed whole', () => {
    const list = runs();
    const index = indexRuns(list);
    const outputs = buildOutputs(execOf(list), index);
    const whole = placedWhole(list);
    JSON.stringify(outputs); // makes every branch
    const late = run('i9', 'inner', { parentTaskRunId: 'each', value: 'a' }); // a later run at the path of inner 'a'
    const sets: [TaskRun, Record<string, unknown>][] = [
      [list[2]!, { x: 'again' }],   // inner 'a', which had outputs
      [list[3]!, { z: 1 }],         // deep 'a': its first outputs
      [late, { x: 'late' }],
      [list[0]!, { value: 'changed' }], // task: the earlier of its two runs, now last set
    ];
    list.push(late);
    addRun(index, late, list.length - 1);
    for (const [r, o] of sets) {
      setRunOutputs(index, r, o);
      place(whole, list, r);
    }
    expect(JSON.parse(JSON.stringify(outputs))).toEqual(JSON.parse(JSON.stringify(whole)));
    expect(renderer.render('{{ outputs.inner.a.x }} {{ outputs.task.value }} {{ outputs.deep.a.z }}', { outputs })).toBe('late changed 1');
  });
});
