// The keyed queue under failures: a transient failure keeps the batch and hands it over again (with what arrived
// meanwhile) after a backoff that grows per key and resets on success, while other keys keep flowing; a permanent
// failure goes to onError with its batch and nothing is retried.
import { describe, expect, it } from 'vitest';
import { ConflictError } from '../store/types.js';
import { until } from '../../test/support/wait.js';
import { KeyedQueue } from './queue.js';

describe('KeyedQueue', () => {
  it('requeues the events of a transiently failed batch, with later ones, until it succeeds; other keys keep flowing', async () => {
    const batches: [string, number[]][] = [];
    const delays: number[] = [];
    let failA = 3;
    const q = new KeyedQueue<number>(async (key, events) => {
      batches.push([key, [...events]]);
      if (key === 'a' && failA-- > 0) throw new ConflictError('store busy');
      if (key === 'b') q.push('a', 3); // b runs while a waits out its backoff: 3 joins a's retried batch
    }, () => { throw new Error('no permanent error expected'); }, { delay: (n) => { delays.push(n); return 40; } });
    q.push('a', 1);
    q.push('a', 2);
    q.push('b', 10);
    await until(() => batches.some(([k]) => k === 'b'), 'key b to run while a waits');
    await until(() => q.failuresOf('a') === 0 && !q.has('a'), 'key a to succeed');
    // Nothing is lost or reordered: the retried batch is the failed one followed by what arrived meanwhile.
    expect(batches.filter(([k]) => k === 'a').map(([, e]) => e)).toEqual([[1, 2], [1, 2, 3], [1, 2, 3], [1, 2, 3]]); // 1 and 2 arrive before the first turn: one batch
    expect(delays).toEqual([0, 1, 2]);
    expect(batches.filter(([k]) => k === 'b')).toEqual([['b', [10]]]);
  });

  it('hands a permanently failed batch to onError once, and resets the backoff of its key', async () => {
    const errors: [string, unknown, number[]][] = [];
    let calls = 0;
    const q = new KeyedQueue<number>(async () => { calls++; throw new Error('engine exploded'); }, (key, err, events) => errors.push([key, err, events]));
    q.push('x', 7);
    await q.whenIdle();
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]![2]).toEqual([7]);
    expect((errors[0]![1] as Error).message).toBe('engine exploded');
    expect(q.failuresOf('x')).toBe(0);
  });

  it('close() drops retries waiting out their backoff', async () => {
    let calls = 0;
    const q = new KeyedQueue<number>(async () => { calls++; throw new ConflictError('busy'); }, () => undefined, { delay: () => 60_000 });
    q.push('k', 1);
    await until(() => q.failuresOf('k') === 1, 'the first failure');
    expect(q.has('k')).toBe(true);
    await q.close();
    expect(q.has('k')).toBe(false);
    expect(calls).toBe(1);
  });
});
