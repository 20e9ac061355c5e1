// Template variables built from names a flow author chose (input ids, loop values, label keys) never reach a prototype.
import { afterEach, describe, expect, it } from 'vitest';
import { buildOutputs, buildVariables, nestInputs } from './context.js';
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
