// Crash safety: the real server process is killed with SIGKILL while executions run and while requests arrive, then
// restarted on the same DATA_DIR. Every accepted execution must finish, and every task result be recorded once.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startServerProcess } from '../support/server-process.js';

const dataDir = mkdtempSync(join(tmpdir(), 'crash-'));
let proc: ChildProcess | undefined;

afterAll(() => { proc?.kill('SIGKILL'); rmSync(dataDir, { recursive: true, force: true }); });

const startServer = () => startServerProcess(dataDir);

const SLOW = `id: slow
namespace: crash
tasks:
${Array.from({ length: 8 }, (_, i) => `  - id: step${i}
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 0.3", "echo step ${i}"]
`).join('')}`;

const FAST = `id: fast
namespace: crash
tasks:
${['a', 'b', 'c'].map((id) => `  - id: ${id}
    type: ai.service.plugin.core.debug.Return
    format: "${id}-{{ execution.id }}"
`).join('')}`;

async function post(url: string, body: string, type: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
}

it('loses no accepted execution and records each task result once across kill -9', async () => {
  let server = await startServer();
  proc = server.proc;
  for (const f of [SLOW, FAST]) expect((await post(`${server.base}/flows`, f, 'application/x-yaml')).status).toBe(200);

  const accepted = new Map<string, string>();
  const submit = async (flow: string) => {
    try {
      const r = await post(`${server.base}/executions/crash/${flow}`, '{}', 'application/json');
      if (r.status === 200) accepted.set(((await r.json()) as { id: string }).id, flow);
    } catch { /* refused while the server is down: not accepted */ }
  };
  for (let i = 0; i < 4; i++) await submit('slow');
  await Promise.all(Array.from({ length: 40 }, () => submit('fast')));
  await new Promise((r) => setTimeout(r, 500));
  // a burst of submissions racing with the kill
  const burst = Promise.all(Array.from({ length: 40 }, (_, i) => new Promise((r) => setTimeout(r, i * 3)).then(() => submit('fast'))));
  await new Promise((r) => setTimeout(r, 40));
  const before = await (await fetch(`${server.base}/executions/search?namespace=crash&flowId=slow&size=100`)).json() as { results: { state: { current: string }; taskRunList: unknown[] }[] };
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGKILL');
  await burst;
  await exited;
  expect(before.results.some((e) => e.state.current === 'RUNNING' && e.taskRunList.length > 0 && e.taskRunList.length < 8), JSON.stringify(before.results.map((e) => [e.state.current, e.taskRunList?.length]))).toBe(true);

  server = await startServer();
  proc = server.proc;
  const deadline = Date.now() + 60_000;
  for (const [id, flow] of accepted) {
    let exec: any;
    for (;;) {
      exec = await (await fetch(`${server.base}/executions/${id}`)).json();
      if (['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(exec.state?.current) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(exec.state.current, `${flow} ${id}`).toBe('SUCCESS');
    const ids = exec.taskRunList.map((r: { taskId: string }) => r.taskId);
    expect(ids.length).toBe(flow === 'slow' ? 8 : 3);
    expect(new Set(ids).size).toBe(ids.length);
    if (flow === 'fast') expect(exec.taskRunList[0].outputs.value).toBe(`a-${id}`);
  }
  expect(accepted.size).toBeGreaterThan(44);
}, 120_000);
