// The start-up sweep on real process groups and the real SQLite registry, as a crash leaves them: recorded groups
// still alive are killed whole (with descendants that left the group but carry the marker), and a record whose pid now
// names another process (recycled: other start time) or belongs to another boot never gets anything killed.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isAlive } from '../../../test/support/processes.js';
import { until } from '../../../test/support/wait.js';
import { DEFAULT_LIMITS, LimitError } from '../../core/limits.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import type { TaskProcess } from '../../store/types.js';
import { killOrphanProcesses } from './orphans.js';
import { bootId, MARKER_ENV, readStat } from './proc.js';

let dir: string;
let stores: EmbeddedStores;
const started: number[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'orphans-'));
  stores = openEmbeddedStores(join(dir, 'data'));
});
afterEach(async () => {
  for (const pid of started.splice(0)) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A task-like process group left behind: `script` runs in its own group with the marker; returns its record. */
async function orphan(script: string, attempt = 1): Promise<TaskProcess> {
  const id = randomUUID();
  const child = spawn('/bin/sh', ['-c', script], { cwd: dir, detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, [MARKER_ENV]: id } });
  child.unref();
  const pid = child.pid!;
  started.push(pid);
  const rec: TaskProcess = {
    id, executionId: 'exec1', taskRunId: `tr-${pid}`, attempt, pid, startTime: readStat(pid)!.startTime, bootId: bootId()!,
    created: new Date().toISOString(),
  };
  stores.processes.add(rec);
  return rec;
}

/** Pids a script wrote to `file` (one per line), once it has written `count` of them. */
async function pidsIn(file: string, count: number): Promise<number[]> {
  return until(() => {
    try {
      const pids = readFileSync(join(dir, file), 'utf8').trim().split('\n').filter(Boolean).map(Number);
      return pids.length >= count && pids;
    } catch { return undefined; }
  }, `${count} pids in ${file}`);
}

it('kills every process of a recorded group left alive, logs it, and drops the record', async () => {
  const rec = await orphan('sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; wait', 2);
  const [a, b] = await pidsIn('pids', 2);
  const logs: string[] = [];
  const swept = await killOrphanProcesses(stores.processes, { log: (m) => logs.push(m) });
  expect(swept.map((r) => r.id)).toEqual([rec.id]);
  for (const pid of [rec.pid, a!, b!]) expect(isAlive(pid), `pid ${pid}`).toBe(false);
  expect(logs).toHaveLength(1);
  expect(logs[0]).toContain(`task process group ${rec.pid} (execution exec1, task run ${rec.taskRunId}, attempt 2)`);
  expect(logs[0]).toMatch(new RegExp(`pids .*\\b${a}\\b`));
  expect(stores.processes.list()).toEqual([]);
});

it('kills a descendant that left the group with setsid and outlived its leader, by the marker it carries', async () => {
  const rec = await orphan('setsid sleep 300 & echo $! > pids');
  const [escaped] = await pidsIn('pids', 1);
  await until(() => !isAlive(rec.pid), 'the leader to exit');
  await until(() => readStat(escaped!)?.pgrp === escaped, 'the descendant to leave the group (setsid)');
  expect(isAlive(escaped!)).toBe(true);
  await killOrphanProcesses(stores.processes, { log: () => {} });
  expect(isAlive(escaped!)).toBe(false);
  expect(stores.processes.list()).toEqual([]);
});

it('leaves alone a live process whose pid was recycled (other start time), and one recorded in another boot', async () => {
  const recycled = await orphan('sleep 300');
  const otherBoot = await orphan('sleep 300');
  // The records now describe other processes: one that started earlier under the same pid, one from another boot,
  // both without the marker the live processes carry.
  const db = stores.processes;
  for (const r of [recycled, otherBoot]) db.remove(r.id);
  db.add({ ...recycled, id: randomUUID(), startTime: recycled.startTime - 1 });
  db.add({ ...otherBoot, id: randomUUID(), bootId: randomUUID() });
  const logs: string[] = [];
  expect(await killOrphanProcesses(db, { log: (m) => logs.push(m) })).toEqual([]);
  expect(isAlive(recycled.pid)).toBe(true);
  expect(isAlive(otherBoot.pid)).toBe(true);
  expect(logs).toEqual([]);
  expect(db.list()).toEqual([]);
});

it('refuses to go on, naming TASK_KILL_WAIT_MS, while a recorded process outlives the wait (forced: already expired)', async () => {
  const rec = await orphan('exec sleep 300');
  const limits = { ...DEFAULT_LIMITS, taskKillWaitMs: -1 };
  const err = await killOrphanProcesses(stores.processes, { limits, log: () => {} }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LimitError);
  expect((err as LimitError).setting).toBe('TASK_KILL_WAIT_MS');
  expect((err as Error).message).toBe(`The task process group ${rec.pid} (execution exec1, task run ${rec.taskRunId}, attempt 1) left by a crash `
    + `is still alive after SIGKILL (pids ${rec.pid}); not starting beside it: over the limit of -1 (time the processes of a task, `
    + 'once sent SIGKILL, may take to disappear, in milliseconds; setting TASK_KILL_WAIT_MS)');
  // The record stays, so the next start tries again.
  expect(stores.processes.list().map((r) => r.id)).toEqual([rec.id]);
});

it('does nothing without a registry (cluster runner)', async () => {
  expect(await killOrphanProcesses(undefined)).toEqual([]);
});
