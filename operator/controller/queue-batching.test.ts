// The keyed queue batches events of one key that arrive from separate callbacks (task results of a fan-out, each from
// its own I/O or timer callback) and lets other work run between batches, even when a key's work never stops coming.
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './queue.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('KeyedQueue batching', () => {
  it('events pushed from 100 separate callbacks of one turn are handed over as one batch', async () => {
    const batches: number[][] = [];
    const q = new KeyedQueue<number>(async (_k, events) => { batches.push(events); }, (_k, e) => { throw e; });
    for (let i = 0; i < 100; i++) setImmediate(() => q.push('exec', i));
    await turn();
    await q.whenIdle();
    expect(batches).toEqual([Array.from({ length: 100 }, (_, i) => i)]);
  });

  it('a key whose handler keeps pushing more work (an in-process chain) lets other work run between batches', async () => {
    let batches = 0;
    const q = new KeyedQueue<number>(async (key, [n]) => {
      batches++;
      if (n! < 1000) q.push(key, n! + 1);
    }, (_k, e) => { throw e; });
    let seenByOtherWork: number | undefined;
    q.push('chain', 1);
    setImmediate(() => setImmediate(() => { seenByOtherWork = batches; }));
    await q.whenIdle();
    expect(batches).toBe(1000);
    expect(seenByOtherWork).toBeLessThan(10);
  });

  it('keys run one batch at a time each, in arrival order, and whenIdle waits for scheduled work', async () => {
    const log: string[] = [];
    const q = new KeyedQueue<string>(async (key, events) => {
      log.push(`${key}:${events.join('')}:start`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${key}:end`);
    }, (_k, e) => { throw e; });
    q.push('a', '1');
    q.push('b', '1');
    q.push('a', '2');
    expect(q.size).toBe(2);
    await q.whenIdle();
    expect(log.filter((l) => l.startsWith('a'))).toEqual(['a:12:start', 'a:end']);
    expect(log.filter((l) => l.startsWith('b'))).toEqual(['b:1:start', 'b:end']);
    expect(q.size).toBe(0);
  });

  it('maxBatch: 5,000 events that piled up are handed over 2,000 at a time, in order, with a turn for other work between', async () => {
    const batches: number[][] = [];
    const between: number[] = [];
    const q = new KeyedQueue<number>(async (_k, events) => {
      batches.push(events);
      setImmediate(() => between.push(batches.length));
    }, (_k, e) => { throw e; }, { maxBatch: 2_000 });
    for (let i = 0; i < 5_000; i++) q.push('exec', i);
    await q.whenIdle();
    expect(batches.map((b) => b.length)).toEqual([2_000, 2_000, 1_000]);
    expect(batches.flat()).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(between.slice(0, 2)).toEqual([1, 2]); // other work ran after each batch, before the next
  });

  it('maxBatch: a batch that fails transiently is handed over again first, and the cap still holds', async () => {
    const batches: number[][] = [];
    let fail = true;
    const q = new KeyedQueue<number>(async (_k, events) => {
      batches.push(events);
      if (fail) { fail = false; throw Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }); }
    }, (_k, e) => { throw e; }, { maxBatch: 3, delay: () => 0, transient: () => true });
    for (let i = 0; i < 7; i++) q.push('exec', i);
    await q.whenIdle();
    expect(batches).toEqual([[0, 1, 2], [0, 1, 2], [3, 4, 5], [6]]);
  });
});
