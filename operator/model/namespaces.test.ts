// Tests of the namespace tree, of what a flow inherits from the stored namespaces (variables merged, the nearest
// winning; one plugin-default layer per namespace) and of the check of a namespace document.
import { describe, expect, it } from 'vitest';
import type { Flow } from '../core/types.js';
import { buildVariables } from '../core/context.js';
import { newExecution } from '../core/execution.js';
import { namespaceChain, namespaceContextOf, namespaceTree, validateNamespace, withNamespaceContext } from './namespaces.js';

describe('namespace tree', () => {
  it.each([
    ['a', ['a']],
    ['a.b.c', ['a', 'a.b', 'a.b.c']],
  ])('%s', (ns, tree) => {
    expect(namespaceTree(ns)).toEqual(tree);
    expect(namespaceChain(ns)).toEqual([...tree].reverse());
  });
});

describe('namespaceContextOf (stored namespaces, nearest first)', () => {
  it('is undefined when nothing is stored', () => expect(namespaceContextOf([])).toBeUndefined());

  it('merges variables (the nearest wins, maps merged deeply) and keeps one defaults layer per namespace', () => {
    const ctx = namespaceContextOf([
      { id: 'a.b', variables: { env: 'b', db: { host: 'hb' } }, pluginDefaults: [{ type: 'x', values: { v: 1 } }] },
      { id: 'a', variables: { env: 'a', db: { host: 'ha', port: 5432 }, only: 'a' }, pluginDefaults: [] },
    ]);
    expect(ctx!.variables).toEqual({ env: 'b', db: { host: 'hb', port: 5432 }, only: 'a' });
    expect(ctx!.pluginDefaults).toEqual([[{ type: 'x', values: { v: 1 } }], []]);
  });

  it('reaches templates as `namespace` only when a namespace is stored', () => {
    const flow: Flow = { id: 'f', namespace: 'a.b', tasks: [{ id: 't', type: 'x' }] };
    const exec = newExecution({ id: 'e', flow, inputs: {}, now: new Date(0) });
    expect(buildVariables(flow, exec).namespace).toBeUndefined();
    const resolved = withNamespaceContext(flow, namespaceContextOf([{ id: 'a', variables: { k: 'v' }, pluginDefaults: [] }]));
    expect(buildVariables(resolved, exec).namespace).toEqual({ k: 'v' });
    expect(withNamespaceContext(flow, undefined)).toBe(flow);
  });
});

describe('validateNamespace', () => {
  it('normalizes a document: id from the path, defaults for missing maps and lists, forced only when true', () => {
    expect(validateNamespace({ pluginDefaults: [{ type: 't', values: {}, forced: false }], description: null }, 'a.b')).toEqual({
      spec: { id: 'a.b', variables: {}, pluginDefaults: [{ type: 't', values: {} }] },
    });
  });

  it.each<[unknown, string]>([
    ['text', ''],
    [{ id: '.a' }, 'id'],
    [{ id: 'a', description: 3 }, 'description'],
    [{ id: 'a', pluginDefaults: {} }, 'pluginDefaults'],
    [{ id: 'a', pluginDefaults: ['x'] }, 'pluginDefaults[0]'],
    [{ id: 'a', pluginDefaults: [{ values: {} }] }, 'pluginDefaults[0].type'],
    [{ id: 'a', deleted: true }, 'deleted'],
    [{ id: 'a', secretType: 'vault' }, 'secretType'],
    [{ id: 'a', pluginDefaults: [{ type: 't', values: JSON.parse('{"constructor": 1}') }] }, 'pluginDefaults[0].values.constructor'],
  ])('refuses %j naming %s', (doc, path) => {
    const r = validateNamespace(doc);
    expect('issues' in r && r.issues.map((i) => i.path)).toContain(path);
  });
});
