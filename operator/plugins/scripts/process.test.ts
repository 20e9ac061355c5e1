// runProcess with a durable process registry (embedded mode), on real processes and the real SQLite registry: the
// group is recorded before the command may do anything, forgotten once gone, and never outlives its leader.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isAlive } from '../../../test/support/processes.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import type { ProcessRegistry, TaskProcess } from '../../store/types.js';
import type { ProcessTracking } from '../types.js';
import { bootId, readStat } from './proc.js';
import { runProcess, type ProcessSpec } from './process.js';

let dir: string;
let stores: EmbeddedStores;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'process-'));
  stores = openEmbeddedStores(join(dir, 'data'));
});
afterEach(async () => {
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Blocks the event loop, as a slow disk would: an ungated process has ample time to run its first command. */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const owner = { executionId: 'exec1', taskRunId: 'tr1', attempt: 3 };

function spec(script: string, registry: ProcessRegistry, lines: string[] = []): ProcessSpec {
  const track: ProcessTracking = { registry, owner };
  return {
    command: ['/bin/sh', '-c', script], cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    signal: new AbortController().signal, onStdout: (l) => lines.push(l), onStderr: (l) => lines.push(l), track,
  };
}

it('records the group (owner, pid, start time, boot id) before the command runs, and forgets it once gone', async () => {
  const marker = join(dir, 'ran');
  const seen: { rec: TaskProcess; ranBefore: boolean; startTime?: number }[] = [];
  const registry: ProcessRegistry = {
    add(rec) {
      pause(300);
      seen.push({ rec, ranBefore: existsSync(marker), startTime: readStat(rec.pid)?.startTime });
      stores.processes.add(rec);
    },
    remove: (id) => stores.processes.remove(id),
    list: () => stores.processes.list(),
  };
  const lines: string[] = [];
  const outcome = await runProcess(spec(`touch ${marker}; echo "$$ $FLOWPILOT_TASK_PROCESS"`, registry, lines));
  expect(outcome.exitCode).toBe(0);
  expect(seen).toHaveLength(1);
  const { rec, ranBefore, startTime } = seen[0]!;
  expect(ranBefore).toBe(false);
  expect(existsSync(marker)).toBe(true);
  expect(rec).toMatchObject({ ...owner, pid: outcome.pid, startTime, bootId: bootId() });
  // The command runs as the recorded process itself (same pid) and carries the record's marker.
  expect(lines).toEqual([`${outcome.pid} ${rec.id}`]);
  expect(stores.processes.list()).toEqual([]);
});

it('kills what is left of the group when its leader exits, then forgets the record', async () => {
  const lines: string[] = [];
  const outcome = await runProcess(spec('sleep 300 & echo $!', stores.processes, lines));
  expect(outcome.exitCode).toBe(0);
  const background = Number(lines[0]);
  expect(background).toBeGreaterThan(0);
  expect(isAlive(background)).toBe(false);
  expect(stores.processes.list()).toEqual([]);
});

it('does not run a command whose record cannot be written', async () => {
  const marker = join(dir, 'ran');
  const registry: ProcessRegistry = { add() { pause(300); throw new Error('disk full'); }, remove() {}, list: () => [] };
  await expect(runProcess(spec(`touch ${marker}`, registry))).rejects.toThrow('Unable to record the task process before running it: disk full');
  expect(existsSync(marker)).toBe(false);
});

it('hands the command no descriptor of the gate it waited at', async () => {
  const lines: string[] = [];
  await runProcess(spec('[ -e /proc/$$/fd/3 ] && echo fd3-open || echo fd3-closed', stores.processes, lines));
  expect(lines).toEqual(['fd3-closed']);
});
