// Fault injection (the "done when"): while a burst of executions runs through the API of the real server
// process, a second process opens the same SQLite database and holds its write lock (BEGIN IMMEDIATE) past the store's
// busy timeout. Meanwhile the server keeps answering (/healthz); after the release every accepted execution ends SUCCESS
// with each task run recorded once.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { reasonOf, retryTransient } from '../../operator/faults.js';
import { BUSY_TIMEOUT_MS } from '../../operator/store/sqlite/index.js';
import { startServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'store-lock-'));
// better-sqlite3 waits synchronously: each write that meets the lock blocks the server's event loop for the busy
// timeout (STORE_BUSY_TIMEOUT_MS, short for that reason), then fails as transient and is retried later. Holding the
// lock for many timeouts makes many of the controller's writes fail.
const HOLD_MS = Math.max(Math.round(BUSY_TIMEOUT_MS * 2.5), 3000);
/** Worst /healthz answer time allowed while the lock is held: a few busy waits, far from the lock's duration. */
const HEALTH_BOUND_MS = Math.max(BUSY_TIMEOUT_MS * 6, 1500);
const procs: ChildProcess[] = [];

afterAll(() => { for (const p of procs) p.kill('SIGKILL'); rmSync(dataDir, { recursive: true, force: true }); });

// Timers, loop fan-out and plain tasks: every kind of write the controller makes per execution. The Pause keeps them
// running until the lock is taken: its clock starts before the API answers (the first step is taken at creation), and
// the lock holder is a new process, so it lasts well beyond the time to spawn one on a loaded machine.
const FLOW = `id: burst
namespace: lock
tasks:
  - id: first
    type: ai.service.plugin.core.debug.Return
    format: "first-{{ execution.id }}"
  - id: wait
    type: ai.service.plugin.core.flow.Pause
    delay: PT2S
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: ["a", "b"]
    tasks:
      - id: item
        type: ai.service.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
  - id: last
    type: ai.service.plugin.core.log.Log
    message: "done {{ outputs.first.value }}"
`;
const TASK_RUNS = ['each', 'first', 'item', 'item', 'last', 'wait'];

/** Another process holding the database's write lock for `ms`; resolves once it holds it. */
function holdWriteLock(ms: number): Promise<{ released: Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    setTimeout(() => { db.exec('COMMIT'); db.close(); console.log('released'); }, Number(process.argv[2]));`;
  const proc = spawn(process.execPath, ['-e', script, join(dataDir, 'store.db'), String(ms)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  procs.push(proc);
  let out = '';
  const released = new Promise<void>((res, rej) => proc.once('exit', (code) => (code === 0 && out.includes('released') ? res() : rej(new Error(`lock holder exited ${code}: ${out}`)))));
  return new Promise((res, rej) => {
    proc.stdout!.on('data', (d) => { out += d; if (out.includes('locked')) res({ released }); });
    proc.once('exit', (code) => rej(new Error(`lock holder exited ${code} before locking: ${out}`)));
  });
}

it('holding the write lock past the busy timeout loses no accepted execution and records each task run once', async () => {
  const server = await startServerProcess(dataDir);
  procs.push(server.proc);
  const post = (path: string, body: string, type: string) => fetch(`${server.base}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });
  expect((await post('/flows', FLOW, 'application/x-yaml')).status).toBe(200);

  const accepted: string[] = [];
  const refused: (number | string)[] = [];
  const submit = async () => {
    try {
      const r = await post('/executions/lock/burst', '{}', 'application/json');
      if (r.status === 200) accepted.push(((await r.json()) as { id: string }).id); else refused.push(r.status);
    } catch (err) {
      refused.push(reasonOf(err)); // no answer: not accepted
    }
  };
  // Reads are idempotent: one that meets a kept-alive connection the server closed while its event loop was blocked
  // (ECONNRESET) is simply sent again.
  const getJson = (path: string): Promise<any> => retryTransient(async () => (await fetch(`${server.base}${path}`)).json(), { baseMs: 100, maxMs: 1000 });
  await Promise.all(Array.from({ length: 40 }, submit));
  expect(accepted).toHaveLength(40);

  // The executions are running (the Pause keeps them busy): lock the store under them.
  const lock = await holdWriteLock(HOLD_MS);
  let locked = true;
  const healthTimes: number[] = [];
  const health = (async () => {
    while (locked) {
      const t0 = performance.now();
      await retryTransient(async () => (await fetch(`${server.base.replace(/\/api\/v1$/, "")}/healthz`)).text(), { baseMs: 20, maxMs: 100 });
      healthTimes.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const during = await getJson('/executions/search?namespace=lock&flowId=burst&size=100') as { results: { state: { current: string } }[] };
  const active = during.results.filter((e) => !['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current)).length;
  expect(active, 'executions still running when the lock is taken').toBeGreaterThan(0);
  await lock.released;
  locked = false;
  await health;
  // The server kept serving while its store was locked (before: each write blocked it 5 s, one after another).
  expect(healthTimes.length).toBeGreaterThan(3);
  expect(Math.max(...healthTimes), `worst /healthz while locked: ${Math.round(Math.max(...healthTimes))} ms`).toBeLessThan(HEALTH_BOUND_MS);
  await Promise.all(Array.from({ length: 10 }, submit));

  for (const id of accepted) {
    const exec = await until(async () => { const e = await getJson(`/executions/${id}`); return ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state?.current) && e; },
      () => `execution ${id} to end`, 120_000);
    expect(exec.state.current, `${id}: ${JSON.stringify(exec.taskRunList?.map((r: any) => [r.taskId, r.state.current]))}`).toBe('SUCCESS');
    expect(exec.taskRunList.map((r: { taskId: string }) => r.taskId).sort()).toEqual(TASK_RUNS);
    const runnable = exec.taskRunList.filter((r: { taskId: string }) => ['first', 'item', 'last'].includes(r.taskId));
    expect(runnable.map((r: { attempts: unknown[] }) => r.attempts.length)).toEqual([1, 1, 1, 1]);
    expect(exec.taskRunList.find((r: { taskId: string }) => r.taskId === 'first').outputs.value).toBe(`first-${id}`);
  }
  expect(accepted.length + refused.length).toBe(50);
}, 240_000);
