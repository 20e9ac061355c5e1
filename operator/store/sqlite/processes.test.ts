// The task process registry on SQLite: records survive closing and reopening the database (as after a crash) and go
// once removed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { TaskProcess } from '../types.js';
import { openEmbeddedStores } from './index.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

const proc = (id: string, pid: number): TaskProcess => ({
  id, executionId: 'e1', taskRunId: 'tr1', attempt: 2, pid, startTime: 123456, bootId: 'b-1', created: `2024-01-01T00:00:0${pid % 10}.000Z`,
});

it('keeps records across a reopen of the database and forgets removed ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'procs-'));
  dirs.push(dir);
  let stores = openEmbeddedStores(dir);
  stores.processes.add(proc('a', 101));
  stores.processes.add(proc('b', 102));
  stores.processes.remove('a');
  stores.processes.remove('absent');
  await stores.close();
  stores = openEmbeddedStores(dir);
  expect(stores.processes.list()).toEqual([proc('b', 102)]);
  expect(() => stores.processes.add(proc('b', 102))).toThrow(/UNIQUE/);
  await stores.close();
});
