// WeightedLru (weighted-lru.ts): within its bounds of weight and entries, least recently set first out, the value
// just set never let go.
import { describe, expect, it } from 'vitest';
import { WeightedLru } from './weighted-lru.js';

describe('WeightedLru', () => {
  it.each([
    // [max weight, max entries, values set in this order (key:weight), keys kept after, weight kept, keys let go in order]
    [100, undefined, ['a:40', 'b:40', 'c:40'], ['b', 'c'], 80, ['a']],
    [100, undefined, ['a:40', 'b:40', 'a:10', 'c:60'], ['a', 'c'], 70, ['b']],
    [100, undefined, ['a:40', 'b:40', 'c:150'], ['c'], 150, ['a', 'b']],
    [100, undefined, ['a:100', 'b:0'], ['a', 'b'], 100, []],
    [100, undefined, ['a:60', 'a:70', 'a:20'], ['a'], 20, []],
    [100, 2, ['a:1', 'b:1', 'c:1'], ['b', 'c'], 2, ['a']],
  ] as const)('max weight %i, max entries %s, set %j: keeps %j (weight %i), lets go %j', (maxWeight, maxEntries, sets, kept, weight, letGo) => {
    const lru = new WeightedLru<number>((n) => n, maxEntries === undefined ? { maxWeight } : { maxWeight, maxEntries });
    const gone: string[] = [];
    for (const s of sets) { const [key, n] = s.split(':'); gone.push(...lru.set(key!, Number(n))); }
    expect(['a', 'b', 'c'].filter((key) => lru.has(key))).toEqual(kept);
    expect(lru.weight).toBe(weight);
    expect(gone).toEqual(letGo);
  });

  it('a value deleted leaves the weight, and deleting a missing key changes nothing', () => {
    const lru = new WeightedLru<number>((n) => n, { maxWeight: 100 });
    lru.set('a', 60);
    lru.delete('a');
    lru.delete('missing');
    expect([lru.size, lru.weight]).toEqual([0, 0]);
  });
});
