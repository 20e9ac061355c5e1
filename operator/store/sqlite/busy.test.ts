// The embedded stores while another connection holds the write lock (real SQLITE_BUSY), and with a corrupt record:
// log appends never throw and their lines are written once the lock goes; KV reads do not fail on their purge;
// writes fail with an error classified transient; one unparsable record does not stop listActive.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { isTransient } from '../../faults.js';
import { until } from '../../../test/support/wait.js';
import { openDatabase } from './db.js';
import { openEmbeddedStores, type EmbeddedStores } from './index.js';
import { sampleExecution, tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;
let lock: ReturnType<typeof openDatabase> | undefined;

function setup(): void {
  tmp = tempDir('busy-');
  stores = openEmbeddedStores(tmp.dir, { busyTimeoutMs: 10 });
  lock = openDatabase(join(tmp.dir, 'store.db'));
}

afterEach(async () => {
  if (lock?.inTransaction) lock.exec('ROLLBACK');
  lock?.close();
  await stores.close();
  tmp.remove();
});

const line = (i: number) => ({ executionId: 'e1', namespace: 'n', flowId: 'f', level: 'INFO' as const, timestamp: new Date().toISOString(), message: `line ${i}` });

it('log appends never throw while the database is locked; their lines are written after it is released', async () => {
  setup();
  lock!.exec('BEGIN IMMEDIATE');
  for (let i = 0; i < 6000; i++) stores.logs.append([line(i)]); // past the buffer size that forces a flush
  await new Promise((r) => setTimeout(r, 50));
  expect(await stores.logs.forExecution('e1')).toEqual([]); // a read does not fail either
  lock!.exec('COMMIT');
  const lines = await until(async () => { const l = await stores.logs.forExecution('e1'); return l.length === 6000 && l; }, 'the buffered lines to be written');
  expect(lines[0]!.message).toBe('line 0');
  expect(lines[5999]!.message).toBe('line 5999');
});

it('a write refused by the lock is a transient error; a KV read of an expired key still answers', async () => {
  setup();
  await stores.kv.set({ namespace: 'n', key: 'old', value: 1, ttl: 'PT0.001S' });
  await new Promise((r) => setTimeout(r, 10));
  lock!.exec('BEGIN IMMEDIATE');
  const err = await stores.executions.create(sampleExecution('x1')).then(() => undefined, (e: unknown) => e);
  expect((err as { code?: string })?.code).toMatch(/^SQLITE_BUSY/);
  expect(isTransient(err)).toBe(true);
  expect(await stores.kv.get('n', 'old')).toBeUndefined();
  expect(await stores.kv.list('n')).toEqual([]);
});

it('listActive (and its summaries) leaves out a record that does not parse, and returns the others', async () => {
  setup();
  await stores.executions.create(sampleExecution('good', { state: 'RUNNING' }));
  await stores.executions.create(sampleExecution('bad', { state: 'RUNNING' }));
  lock!.prepare('UPDATE execution_bodies SET body = ? WHERE seq = (SELECT seq FROM executions WHERE id = ?)').run('{"id": "bad", truncated', 'bad');
  expect((await stores.executions.listActive()).map((s) => s.execution.id)).toEqual(['good']);
  expect((await stores.executions.listActiveSummaries()).map((s) => s.id)).toEqual(['good']);
});
