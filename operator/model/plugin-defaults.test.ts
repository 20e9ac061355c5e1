// Tests of plugin defaults: non-forced vs forced, deep merge of maps, prefix matching, aliases, reserved keys, and the
// precedence between the flow's defaults and those of its namespace and the namespace's parents.
import { describe, expect, it } from 'vitest';
import type { Flow, PluginDefault, Task } from '../core/types.js';
import { applyFlowDefaults, applyPluginDefaults, deepMerge } from './plugin-defaults.js';

const LOG = 'ai.service.plugin.core.log.Log';
const REQ = 'ai.service.plugin.core.http.Request';

describe('applyPluginDefaults', () => {
  it.each<[string, Task, PluginDefault[] | undefined, Task]>([
    ['no defaults', { id: 'a', type: LOG, message: 'm' }, undefined, { id: 'a', type: LOG, message: 'm' }],
    ['fills missing values', { id: 'a', type: LOG, message: 'm' }, [{ type: LOG, values: { level: 'WARN' } }],
      { id: 'a', type: LOG, message: 'm', level: 'WARN' }],
    ['task values win when not forced', { id: 'a', type: LOG, message: 'm', level: 'INFO' },
      [{ type: LOG, values: { level: 'WARN', message: 'default' } }], { id: 'a', type: LOG, message: 'm', level: 'INFO' }],
    ['forced defaults win', { id: 'a', type: LOG, message: 'm', level: 'INFO' }, [{ type: LOG, values: { level: 'ERROR' }, forced: true }],
      { id: 'a', type: LOG, message: 'm', level: 'ERROR' }],
    ['other types untouched', { id: 'a', type: LOG, message: 'm' }, [{ type: REQ, values: { uri: 'x' } }], { id: 'a', type: LOG, message: 'm' }],
    ['maps merged deeply (task wins)', { id: 'r', type: REQ, uri: 'u', headers: { A: '1' }, options: { x: { y: 1 } } },
      [{ type: REQ, values: { headers: { A: '0', B: '2' }, options: { x: { z: 2 } } } }],
      { id: 'r', type: REQ, uri: 'u', headers: { A: '1', B: '2' }, options: { x: { y: 1, z: 2 } } }],
    ['maps merged deeply (forced wins)', { id: 'r', type: REQ, uri: 'u', headers: { A: '1', C: '3' } },
      [{ type: REQ, values: { headers: { A: '0', B: '2' } }, forced: true }],
      { id: 'r', type: REQ, uri: 'u', headers: { A: '0', B: '2', C: '3' } }],
    ['lists are replaced, not merged', { id: 'a', type: LOG, message: ['x'] }, [{ type: LOG, values: { message: ['y', 'z'] } }],
      { id: 'a', type: LOG, message: ['x'] }],
    ['type prefix matches a package', { id: 'r', type: REQ }, [{ type: 'ai.service.plugin.core.http', values: { uri: 'u' } }],
      { id: 'r', type: REQ, uri: 'u' }],
    ['prefix only at a segment boundary', { id: 'r', type: REQ }, [{ type: 'ai.service.plugin.core.ht', values: { uri: 'u' } }],
      { id: 'r', type: REQ }],
    ['Kestra alias in the default type', { id: 'a', type: LOG, message: 'm' }, [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'DEBUG' } }],
      { id: 'a', type: LOG, message: 'm', level: 'DEBUG' }],
    ['exact type beats prefix', { id: 'r', type: REQ },
      [{ type: REQ, values: { method: 'PUT' } }, { type: 'ai.service.plugin.core', values: { method: 'GET', uri: 'u' } }],
      { id: 'r', type: REQ, method: 'PUT', uri: 'u' }],
    ['later default of same specificity wins', { id: 'a', type: LOG, message: 'm' },
      [{ type: LOG, values: { level: 'WARN' } }, { type: LOG, values: { level: 'ERROR' } }], { id: 'a', type: LOG, message: 'm', level: 'ERROR' }],
    ['id and type always from the task', { id: 'a', type: LOG, message: 'm' }, [{ type: LOG, values: { id: 'zz', type: 'x' }, forced: true }],
      { id: 'a', type: LOG, message: 'm' }],
  ])('%s', (_name, task, defaults, expected) => {
    const before = structuredClone(task);
    expect(applyPluginDefaults(task, defaults)).toEqual(expected);
    expect(task).toEqual(before);
  });

  it('does not share default values between tasks', () => {
    const defaults: PluginDefault[] = [{ type: REQ, values: { headers: { A: '1' } } }];
    const a = applyPluginDefaults({ id: 'a', type: REQ }, defaults);
    (a.headers as Record<string, string>).A = 'changed';
    expect(applyPluginDefaults({ id: 'b', type: REQ }, defaults).headers).toEqual({ A: '1' });
  });
});

describe('deepMerge with reserved keys (parsed JSON has own `__proto__` keys)', () => {
  it('keeps `__proto__` an ordinary own key instead of swapping the prototype of the result', () => {
    const merged = deepMerge({ a: 1 }, JSON.parse('{"__proto__": {"disabled": true}}') as Record<string, unknown>);
    expect(Object.keys(merged)).toEqual(['a', '__proto__']);
    expect(merged.disabled).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBeNull();
  });

  it('merges nested maps without reading inherited members (`constructor`, `__proto__`)', () => {
    const before = Object.getOwnPropertyNames(Object.prototype);
    const over = JSON.parse('{"constructor": {"prototype": {"polluted": 1}}, "h": {"__proto__": {"polluted": 1}}}') as Record<string, unknown>;
    const merged = deepMerge({ h: { A: '1' } }, over);
    expect(Object.keys(merged.h as object)).toEqual(['A', '__proto__']);
    expect((merged.h as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('applyPluginDefaults with inherited layers (the namespace, then its parents): Kestra precedence', () => {
  const task: Task = { id: 'a', type: LOG, message: 'm', level: 'INFO' };
  const bare: Task = { id: 'a', type: LOG, message: 'm' };
  const d = (level: string, forced = false): PluginDefault => ({ type: LOG, values: { level }, ...(forced ? { forced } : {}) });
  it.each<[string, Task, PluginDefault[] | undefined, PluginDefault[][], unknown]>([
    ['a namespace default fills a missing value', bare, undefined, [[d('WARN')]], 'WARN'],
    ['the task value beats a non-forced namespace default', task, undefined, [[d('WARN')]], 'INFO'],
    ['a forced namespace default beats the task value', task, undefined, [[d('ERROR', true)]], 'ERROR'],
    ['the flow default beats the namespace default', bare, [d('DEBUG')], [[d('WARN')]], 'DEBUG'],
    ['the namespace beats its parent', bare, undefined, [[d('WARN')], [d('TRACE')]], 'WARN'],
    ['a parent fills what the namespace leaves out', bare, undefined, [[], [d('TRACE')]], 'TRACE'],
    ['a forced flow default beats a forced namespace default', task, [d('DEBUG', true)], [[d('ERROR', true)]], 'DEBUG'],
    ['a forced parent default beats the flow\'s non-forced one and the task', task, [d('DEBUG')], [[], [d('ERROR', true)]], 'ERROR'],
    ['a forced namespace default beats a forced parent default', task, undefined, [[d('WARN', true)], [d('ERROR', true)]], 'WARN'],
    ['the flow\'s prefix default beats the namespace\'s exact one', bare, [{ type: 'ai.service.plugin.core', values: { level: 'DEBUG' } }], [[d('WARN')]], 'DEBUG'],
  ])('%s', (_name, t, flowDefaults, inherited, level) => {
    expect(applyPluginDefaults(t, flowDefaults, inherited).level).toBe(level);
  });

  it('applyFlowDefaults reads the flow\'s own defaults and those its namespaces gave it', () => {
    const flow: Flow = {
      id: 'f', namespace: 'a.b', tasks: [bare], pluginDefaults: [{ type: LOG, values: { message: 'x' } }],
      namespaceContext: { variables: {}, pluginDefaults: [[d('WARN')]] },
    };
    expect(applyFlowDefaults(bare, flow)).toEqual({ id: 'a', type: LOG, message: 'm', level: 'WARN' });
    expect(applyFlowDefaults(bare, { ...flow, namespaceContext: undefined })).toEqual(bare);
  });
});
