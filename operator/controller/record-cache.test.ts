// The controller's records between batches (record-cache.ts): within their bound of task runs, least recently kept
// first out, the record just kept never let go.
import { describe, expect, it } from 'vitest';
import type { Execution } from '../core/types.js';
import type { StoredExecution } from '../store/types.js';
import { RecordCache } from './record-cache.js';

const record = (id: string, runs: number): StoredExecution => ({
  execution: { id, taskRunList: Array.from({ length: runs }, () => ({})) } as unknown as Execution, resourceVersion: 1,
});

describe('RecordCache', () => {
  it.each([
    // [bound, records kept in this order (id:runs), ids kept after, runs kept, ids let go in order]
    [100, ['a:40', 'b:40', 'c:40'], ['b', 'c'], 80, ['a']],
    [100, ['a:40', 'b:40', 'a:10', 'c:60'], ['a', 'c'], 70, ['b']],
    [100, ['a:40', 'b:40', 'c:150'], ['c'], 150, ['a', 'b']],
    [100, ['a:100', 'b:0'], ['a', 'b'], 100, []],
    [100, ['a:60', 'a:70', 'a:20'], ['a'], 20, []],
  ] as const)('bound %i, kept %j: keeps %j (%i runs), lets go %j', (bound, sets, kept, runs, letGo) => {
    const gone: string[] = [];
    const cache = new RecordCache(bound, (id) => gone.push(id));
    for (const s of sets) { const [id, n] = s.split(':'); cache.set(id!, record(id!, Number(n))); }
    expect(['a', 'b', 'c'].filter((id) => cache.has(id))).toEqual(kept);
    expect(cache.taskRuns).toBe(runs);
    expect(gone).toEqual(letGo);
  });

  it('a record deleted is not told as let go, and its runs leave the count', () => {
    const gone: string[] = [];
    const cache = new RecordCache(100, (id) => gone.push(id));
    cache.set('a', record('a', 60));
    cache.delete('a');
    cache.delete('missing');
    expect([cache.size, cache.taskRuns, gone]).toEqual([0, 0, []]);
  });
});
