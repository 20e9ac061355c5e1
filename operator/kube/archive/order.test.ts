// The merge of live and archived search results: for random live/archived sets, every page read through
// archiveWindow + mergePage equals the same page of the full merged, sorted list (dates collide on purpose).
import { describe, expect, it } from 'vitest';
import type { Execution } from '../../core/types.js';
import { archiveWindow, mergePage, newestFirst } from './order.js';

const exec = (id: string, startSecond: number): Execution => ({
  id, namespace: 'n', flowId: 'f', flowRevision: 1, originalId: id, labels: [], inputs: {}, taskRunList: [],
  state: { current: 'SUCCESS', histories: [], startDate: new Date(Date.UTC(2026, 0, 1, 0, 0, startSecond)).toISOString() },
});

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('mergePage', () => {
  it('reads every page of live + archived exactly as the full merge would', () => {
    const random = rng(42);
    for (let round = 0; round < 300; round++) {
      const nLive = Math.floor(random() * 8);
      const nArch = Math.floor(random() * 40);
      const all = Array.from({ length: nLive + nArch }, (_, i) => exec(`e${String(Math.floor(random() * 1e6)).padStart(6, '0')}-${i}`, Math.floor(random() * 10)));
      const live = all.slice(0, nLive).sort(newestFirst);
      const archived = all.slice(nLive).sort(newestFirst);
      const merged = [...all].sort(newestFirst);
      for (const limit of [1, 3, 10, undefined]) {
        for (let offset = 0; offset <= all.length + 2; offset++) {
          const w = archiveWindow(offset, limit, live.length);
          const window = archived.slice(w.offset, w.limit === undefined ? undefined : w.offset + w.limit);
          const page = mergePage(live, window, w.offset, offset, limit);
          const want = merged.slice(offset, limit === undefined ? undefined : offset + limit);
          expect(page.map((e) => e.id), `round ${round} offset ${offset} limit ${limit}`).toEqual(want.map((e) => e.id));
        }
      }
    }
  });

  it('orders newest start first, then id descending; unreadable dates last', () => {
    const bad = { ...exec('z', 0), state: { ...exec('z', 0).state, startDate: 'never' } };
    expect([exec('a', 1), bad, exec('b', 1), exec('c', 5)].sort(newestFirst).map((e) => e.id)).toEqual(['c', 'b', 'a', 'z']);
  });
});
