// `npm start` stops cleanly on SIGTERM and SIGINT sent to the process npm start created (as systemd or a container
// runtime does): the server, its shell and every task process under it are gone, and the port is closed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandOf, descendants, isAlive, killAll } from '../support/processes.js';
import { until } from '../support/wait.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

const SLEEPER = `id: sleeper
namespace: signals
tasks:
  - id: nap
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 300"]
`;

let cleanup: (() => void)[] = [];
/** Every process seen under npm start (task processes run in process groups of their own). */
let seen: number[] = [];
afterEach(() => { for (const c of cleanup) c(); cleanup = []; seen = []; });

/** `npm start` with a free port and a temporary data directory; resolves with the port once it serves /healthz. */
async function npmStart(): Promise<{ npm: ChildProcess; port: number; output: () => string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'signals-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DATA_DIR: dataDir, SAMPLE_FLOW: 'false', TRIGGERS: 'false' };
  for (const name of ['HOST', 'BASIC_AUTH_USERNAME', 'BASIC_AUTH_PASSWORD', 'API_TOKENS', 'API_TOKENS_FILE']) delete env[name];
  // Its own process group, so that a failed test can still end whatever it left (signals go to npm's pid only).
  const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  npm.stdout!.on('data', (d) => { out += d; });
  npm.stderr!.on('data', (d) => { out += d; });
  cleanup.push(() => {
    try { process.kill(-npm.pid!, 'SIGKILL'); } catch { /* group gone */ }
    killAll(seen);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const port = Number(await until(() => {
    if (npm.exitCode !== null) throw new Error(`npm start exited ${npm.exitCode}: ${out}`);
    return /listening on http:\/\/[^\s]+:(\d+)/.exec(out)?.[1];
  }, () => `npm start to listen: ${out}`));
  await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok, '/healthz');
  return { npm, port, output: () => out };
}

const portOpen = (port: number): Promise<boolean> => new Promise((res) => {
  const socket = connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.destroy(); res(true); });
  socket.once('error', () => res(false));
});

async function startSleeper(port: number): Promise<void> {
  const api = `http://127.0.0.1:${port}/api/v1`;
  const flow = await fetch(`${api}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: SLEEPER });
  expect(flow.status).toBe(200);
  const exec = await fetch(`${api}/executions/signals/sleeper`, { method: 'POST' });
  expect(exec.status).toBe(200);
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops with everything under it on %s to the npm process', async (signal) => {
    const { npm, port, output } = await npmStart();
    await startSleeper(port);
    // The task's `sleep 300` is running under the server.
    await until(() => descendants(npm.pid!).some((pid) => commandOf(pid) === 'sleep 300'), 'the task process to start');
    const tree = descendants(npm.pid!);
    seen = tree;
    const exited = new Promise<number | null>((res) => npm.once('exit', (code) => res(code)));

    npm.kill(signal);

    await until(() => tree.every((pid) => !isAlive(pid)), () =>
      `every process under npm start to end; still running: ${tree.filter(isAlive).map((p) => `${p} ${commandOf(p)}`).join(', ')}\n${output()}`, 15_000);
    await until(async () => !(await portOpen(port)), 'the port to close', 5_000);
    await exited;
    expect(output()).toContain(`[server] ${signal}: shutting down`);
  });
});
