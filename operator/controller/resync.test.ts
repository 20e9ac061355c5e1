// The resync's memory of recently processed executions: an entry older than the interval is dropped at the next pass
// (it decided nothing an absent one would not), so executions that ended without being forgotten do not pile up.
import { afterEach, expect, it, vi } from 'vitest';
import type { Stores } from '../store/types.js';
import { Resync } from './resync.js';

afterEach(() => { vi.useRealTimers(); });

it('forgets processed executions once the interval has passed, and skips those processed within it', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(0);
  const active = [{ id: 'recent' }, { id: 'old' }];
  const stores = { executions: { listActiveSummaries: async () => active, pendingCommands: async () => [] } } as unknown as Stores;
  const handed: string[] = [];
  const resync = new Resync(stores, 1_000, { busy: () => false, resync: (s) => { handed.push(s.id); }, command: () => {} });
  for (let i = 0; i < 5_000; i++) resync.processed(`ended-${i}`); // ended in their first batch, never forgotten
  resync.processed('old');
  vi.setSystemTime(1_500);
  resync.processed('recent');
  expect(resync.remembered).toBe(5_002);
  expect(await resync.run()).toBe(true);
  expect(resync.remembered).toBe(1);
  expect(handed).toEqual(['old']); // 'recent' was processed within the interval
});
