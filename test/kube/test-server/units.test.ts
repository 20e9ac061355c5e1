// Pure parts of the test server as tables: label / field selectors, JSON patch, merge and strategic merge patches.
import { describe, expect, it } from 'vitest';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { fieldPath } from './schema.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', 'flowpilot.io/execution-id': 'Ab3' };
  it.each([
    ['', true], ['app=web', true], ['app==web', true], ['app=db', false], ['app!=db', true], ['missing!=x', true],
    ['app in (web, db)', true], ['app notin (web)', false], ['missing notin (x)', true], ['tier', true], ['!tier', false],
    ['!missing', true], ['app=web,tier=front', true], ['app=web,tier=back', false], ['flowpilot.io/execution-id=Ab3', true],
    ['app in (db),tier', false],
  ])('%s → %s', (sel, want) => { expect(parseLabelSelector(sel)(labels)).toBe(want); });
  it('refuses malformed selectors with 400', () => {
    expect(() => parseLabelSelector('app=(x')).toThrow(/unable to parse requirement/);
  });
});

describe('field selectors', () => {
  const pod = { metadata: { name: 'p', namespace: 'n' }, status: { phase: 'Running' } };
  it.each([
    ['metadata.name=p', true], ['metadata.name!=p', false], ['status.phase=Running,metadata.namespace=n', true], ['status.phase==Pending', false],
  ])('%s → %s', (sel, want) => { expect(parseFieldSelector(sel, ['status.phase'])(pod)).toBe(want); });
  it('refuses unsupported fields', () => { expect(() => parseFieldSelector('spec.x=1', [])).toThrow(/field label not supported: spec.x/); });
});

describe('patches', () => {
  it('JSON patch: add / remove / replace / move / copy / test, escapes and append', () => {
    const doc = { a: { 'b/c': 1, '~d': 2 }, l: [1, 2] };
    expect(jsonPatch(doc, [
      { op: 'test', path: '/a/b~1c', value: 1 }, { op: 'replace', path: '/a/~0d', value: 3 }, { op: 'add', path: '/l/-', value: 9 },
      { op: 'add', path: '/l/0', value: 0 }, { op: 'remove', path: '/l/1' }, { op: 'copy', from: '/l', path: '/m' }, { op: 'move', from: '/a', path: '/z' },
    ])).toEqual({ l: [0, 2, 9], m: [0, 2, 9], z: { 'b/c': 1, '~d': 3 } });
    expect(doc).toEqual({ a: { 'b/c': 1, '~d': 2 }, l: [1, 2] });
    expect(() => jsonPatch(doc, [{ op: 'test', path: '/l', value: [2, 1] }])).toThrow(/test failed/);
    expect(() => jsonPatch(doc, [{ op: 'remove', path: '/nope' }])).toThrow(/nonexistent/);
    expect(() => jsonPatch(doc, [{ op: 'replace', path: '/x/y', value: 1 }])).toThrow(/missing/);
  });
  it('merge patch (RFC 7386): null deletes, objects merge, lists replace', () => {
    expect(mergePatch({ a: 1, b: { c: 1, d: 2 }, l: [1] }, { a: null, b: { c: null, e: 3 }, l: [2] })).toEqual({ b: { d: 2, e: 3 }, l: [2] });
  });
  it('strategic merge patch: containers by name, $patch delete, finalizers as a set', () => {
    const pod = { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }] }, metadata: { finalizers: ['x'] } };
    expect(strategicMergePatch(pod, { spec: { containers: [{ name: 'b', $patch: 'delete' }, { name: 'c', image: '2' }] }, metadata: { finalizers: ['y'] } }))
      .toEqual({ spec: { containers: [{ name: 'a', image: '1' }, { name: 'c', image: '2' }] }, metadata: { finalizers: ['x', 'y'] } });
  });
});

describe('field paths of validation errors', () => {
  it.each([['/spec/tasks/0/id', undefined, 'spec.tasks[0].id'], ['/spec', 'size', 'spec.size'], ['', 'spec', 'spec'], ['/spec/a~1b', undefined, 'spec.a/b']])(
    '%s + %s → %s', (p, extra, want) => { expect(fieldPath(p, extra)).toBe(want); });
});
