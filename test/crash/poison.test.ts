// Poisoned recovery: the real server is killed with SIGKILL while executions run, and its store is then tampered with
// (one record gets a task run the engine throws on, another execution's flow revision is deleted). The restarted
// server must listen (/healthz) whatever recovery finds; the poisoned executions end FAILED with the reason, the
// healthy one finishes.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { retryTransient } from '../../operator/faults.js';
import { openDatabase } from '../../operator/store/sqlite/db.js';
import { startServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';

const dataDir = mkdtempSync(join(tmpdir(), 'poison-'));
let proc: ChildProcess | undefined;

afterAll(() => { proc?.kill('SIGKILL'); rmSync(dataDir, { recursive: true, force: true }); });

const slow = (id: string) => `id: ${id}
namespace: poison
tasks:
${Array.from({ length: 4 }, (_, i) => `  - id: step${i}
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 0.4", "echo step ${i}"]
`).join('')}`;

const ENDED = ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'];

it('a restarted server listens and fails only the poisoned executions, with the reason', async () => {
  let server = await startServerProcess(dataDir);
  proc = server.proc;
  // Reads are idempotent: sent again when a connection breaks (ECONNRESET).
  const getJson = (path: string, base = server.base): Promise<any> => retryTransient(async () => (await fetch(`${base}${path}`)).json(), { baseMs: 100, maxMs: 1000 });
  const health = () => getJson('/healthz', new URL(server.base).origin);
  const post = (path: string, body: string, type: string) => fetch(`${server.base}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });
  for (const f of ['slow', 'orphan']) expect((await post('/flows', slow(f), 'application/x-yaml')).status).toBe(200);
  const start = async (flow: string) => ((await (await post(`/executions/poison/${flow}`, '{}', 'application/json')).json()) as { id: string }).id;
  const [ghost, healthy, orphan] = [await start('slow'), await start('slow'), await start('orphan')];
  await until(async () => {
    const states = await Promise.all([ghost, healthy, orphan].map((id) => getJson(`/executions/${id}`)));
    return states.every((e) => e.state.current === 'RUNNING' && e.taskRunList.length > 0);
  }, 'the three executions to run');
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGKILL');
  await exited;

  // Tamper with the store while the server is down.
  const db = openDatabase(join(dataDir, 'store.db'));
  // A record's task runs are rows of execution_task_runs (operator/store/sqlite/schema.ts): one more at the end.
  const row = db.prepare('SELECT e.seq, count(r.idx) AS runs FROM executions e JOIN execution_task_runs r ON r.seq = e.seq WHERE e.id = ?').get(ghost) as { seq: number; runs: number };
  const now = new Date().toISOString();
  const running = { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now };
  const ghostRun = { id: 'ghost-run', executionId: ghost, namespace: 'poison', flowId: 'slow', taskId: 'ghost', state: running, attempts: [{ state: running }] };
  db.prepare('INSERT INTO execution_task_runs (seq, idx, body) VALUES (?, ?, ?)').run(row.seq, row.runs, JSON.stringify(ghostRun));
  db.prepare("DELETE FROM flows WHERE namespace = 'poison' AND id = 'orphan'").run();
  db.close();

  server = await startServerProcess(dataDir);
  proc = server.proc;
  expect(await health()).toEqual({ status: 'UP' });
  const end = (id: string) => until(async () => { const e = await getJson(`/executions/${id}`); return ENDED.includes(e.state?.current) && e; }, `execution ${id} to end`);

  const g = await end(ghost);
  expect(g.state.current).toBe('FAILED');
  expect(g.error).toBe("The engine failed on this execution: Task 'ghost' of task run 'ghost-run' is not in flow revision 1");
  const o = await end(orphan);
  expect(o.state.current).toBe('FAILED');
  expect(o.error).toBe('Flow poison.orphan revision 1 not found');
  const logs = (await getJson(`/logs/${orphan}`)) as { level: string; message: string }[];
  expect(logs.map((l) => `${l.level} ${l.message}`)).toContain('ERROR Execution failed: Flow poison.orphan revision 1 not found');
  const h = await end(healthy);
  expect(h.state.current).toBe('SUCCESS');
  expect(h.taskRunList.map((r: { taskId: string }) => r.taskId)).toEqual(['step0', 'step1', 'step2', 'step3']);
  expect((await health()).status).toBe('UP');
}, 120_000);
