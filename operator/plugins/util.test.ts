// Tests of the plugin helpers that build maps from rendered data: string maps (env, headers) keep any rendered key
// as an ordinary key of a prototype-free map.
import { afterEach, expect, it } from 'vitest';
import { makeTestContext, type TestContext } from './testing.js';
import { renderStringMap } from './util.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

it('renders keys and values of a string map, stringifying values and skipping nulls', () => {
  t = makeTestContext({ task: { id: 't', type: 'x' } });
  expect(renderStringMap(t.ctx, { '{{ task.id }}': '{{ flow.id }}', n: 1, o: { a: 1 }, none: null }))
    .toEqual({ t: 'flow1', n: '1', o: '{"a":1}' });
});

it('keeps `__proto__` and `constructor` keys of a JSON map as own keys, without a prototype', () => {
  t = makeTestContext({ task: { id: 't', type: 'x' } });
  const map = renderStringMap(t.ctx, '{"__proto__": "p", "constructor": "c"}');
  expect(Object.getPrototypeOf(map)).toBeNull();
  expect(Object.entries(map)).toEqual([['__proto__', 'p'], ['constructor', 'c']]);
});
