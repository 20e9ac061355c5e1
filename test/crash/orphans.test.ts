// Crash safety of task processes: the real server is killed with SIGKILL while a shell task sleeps, and restarted on
// the same DATA_DIR. The process the crash left running must be dead before the attempt runs again (never two live
// copies of one task), the execution must end SUCCESS, and no process record may remain.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { isAlive } from '../support/processes.js';
import { startServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';

const root = mkdtempSync(join(tmpdir(), 'crash-orphans-'));
const dataDir = join(root, 'data');
/** Outside the working directory (removed with the execution): each copy of the task appends its lines here. */
const marks = join(root, 'marks');
let proc: ChildProcess | undefined;
const leftovers: number[] = [];

afterAll(() => {
  proc?.kill('SIGKILL');
  for (const pid of leftovers) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  rmSync(root, { recursive: true, force: true });
});

// The first copy sleeps 30 s, a rerun 1 s. Each copy notes its shell and sleep pids with the time, and a rerun first
// notes which processes of the first copy are still alive at that moment ("alive <pid>"; none when killed in time).
const FLOW = `id: long
namespace: crash
tasks:
  - id: sleeper
    type: ai.service.plugin.scripts.shell.Commands
    commands:
      - 'if [ -s ${marks} ]; then nap=1; else nap=30; fi'
      - 'for p in $(head -n 1 ${marks} 2>/dev/null | cut -d" " -f2,3); do if kill -0 $p 2>/dev/null && [ "$(cut -d" " -f3 /proc/$p/stat)" != Z ]; then echo "alive $p" >> ${marks}; fi; done'
      - 'sleep $nap & echo "start $$ $! $(date +%s%N)" >> ${marks}'
      - 'wait'
      - 'echo "end $$ $(date +%s%N)" >> ${marks}'
`;

const lines = (): string[][] => {
  try { return readFileSync(marks, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ')); } catch { return []; }
};
const starts = () => lines().filter((l) => l[0] === 'start');
const records = (): { pid: number; execution_id: string; attempt: number }[] => {
  const db = new Database(join(dataDir, 'store.db'), { readonly: true });
  try { return db.prepare('SELECT pid, execution_id, attempt FROM task_processes').all() as never; } finally { db.close(); }
};

it('kills the task process a crash left running before re-running its attempt, then ends SUCCESS', async () => {
  let server = await startServerProcess(dataDir);
  proc = server.proc;
  const created = await fetch(`${server.base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: FLOW });
  expect(created.status).toBe(200);
  const exec = await (await fetch(`${server.base}/executions/crash/long`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).json() as { id: string };

  const [first] = await until(() => starts().length === 1 && starts(), 'the first copy to start');
  const [shell1, sleep1] = [Number(first![1]), Number(first![2])];
  leftovers.push(shell1, sleep1);
  expect(records()).toEqual([{ pid: shell1, execution_id: exec.id, attempt: 1 }]);

  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGKILL');
  await exited;
  const crashedAt = BigInt(Date.now()) * 1_000_000n; // ns, like `date +%s%N`
  // The crash leaves the first copy running (reparented), as the review saw.
  expect(isAlive(shell1) && isAlive(sleep1)).toBe(true);

  server = await startServerProcess(dataDir);
  proc = server.proc;
  const [, second] = await until(() => starts().length === 2 && starts(), 'the rerun to start');
  // Seen from here too, the first copy is dead once the rerun has started; the rerun saw none of it alive.
  expect(isAlive(shell1) || isAlive(sleep1)).toBe(false);
  expect(lines().filter((l) => l[0] === 'alive')).toEqual([]);
  expect(Number(second![1])).not.toBe(shell1);

  const done = await until(async () => {
    const e = await (await fetch(`${server.base}/executions/${exec.id}`)).json() as { state: { current: string }; taskRunList: { id: string; attempts: unknown[] }[] };
    return ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current) && e;
  }, 'the execution to end');
  expect(done.state.current).toBe('SUCCESS');
  expect(done.taskRunList).toHaveLength(1);
  const run = done.taskRunList[0]!;
  // Only the rerun ended; its start came after the crash and after the sweep, which names what it killed.
  expect(lines().map((l) => l[0])).toEqual(['start', 'start', 'end']);
  expect(lines()[2]![1]).toBe(second![1]);
  expect(BigInt(second![3]!)).toBeGreaterThan(crashedAt);
  expect(server.output()).toContain(`killed the task process group ${shell1} (execution ${exec.id}, task run ${run.id}, attempt 1)`);
  // Both copies ran as attempt 1 of the one task run.
  const logs = await (await fetch(`${server.base}/logs/${exec.id}?minLevel=DEBUG`)).json() as { message: string; taskRunId: string; attemptNumber: number }[];
  const startsLogged = logs.filter((l) => l.message.startsWith('Starting command with pid'));
  expect(startsLogged.map((l) => [l.taskRunId, l.attemptNumber])).toEqual([[run.id, 1], [run.id, 1]]);
  expect(records()).toEqual([]);
}, 120_000);
