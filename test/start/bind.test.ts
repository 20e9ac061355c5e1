// Closed by default, on the real entry point (operator/main.ts as a child process): it listens on 127.0.0.1 unless told
// otherwise, refuses to start on another address without authentication, and with authentication serves and demands it
// on /api/v1 while /healthz and the inference routes keep their own rules.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServerProcess } from '../support/server-process.js';

const NO_AUTH = { BASIC_AUTH_USERNAME: '', BASIC_AUTH_PASSWORD: '', API_TOKENS: '', API_TOKENS_FILE: '' };

let dirs: string[] = [];
let procs: ChildProcess[] = [];
afterEach(() => {
  for (const p of procs) p.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = []; procs = [];
});

async function start(env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'bind-'));
  dirs.push(dir);
  const server = await startServerProcess(dir, 'pipe', { ...NO_AUTH, TRIGGERS: 'false', ...env });
  procs.push(server.proc);
  return server;
}

const reachable = (host: string, port: number): Promise<boolean> => new Promise((res) => {
  const socket = connect(port, host);
  socket.once('connect', () => { socket.destroy(); res(true); });
  socket.once('error', () => res(false));
});

/** A non-loopback IPv4 address of this machine, if it has one. */
const externalAddress = (): string | undefined =>
  Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe('embedded server binding', () => {
  it('listens on 127.0.0.1 by default, without authentication', async () => {
    const server = await start({ HOST: undefined });
    expect((await fetch(`${server.base}/flows/search`)).status).toBe(200);
    const outside = externalAddress();
    if (outside) expect(await reachable(outside, server.port)).toBe(false);
  });

  it('refuses to start on 0.0.0.0 without authentication, naming the settings', async () => {
    await expect(start({ HOST: '0.0.0.0' })).rejects.toThrow(
      /server exited 1: [\s\S]*HOST=0\.0\.0\.0 makes the API reachable from other machines, but no authentication is configured: set BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD, or API_TOKENS \(or API_TOKENS_FILE\)/);
  });

  it('with authentication, serves on 0.0.0.0 and demands it on /api/v1 only', async () => {
    const server = await start({ HOST: '0.0.0.0', BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'pw-for-the-test', API_TOKENS: 'tok-for-the-test' });
    const flows = `${server.base}/flows/search`;
    const noAuth = await fetch(flows);
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers.get('www-authenticate')).toContain('Basic realm="flowpilot"');
    const basic = `Basic ${Buffer.from('admin:pw-for-the-test').toString('base64')}`;
    expect((await fetch(flows, { headers: { Authorization: basic } })).status).toBe(200);
    expect((await fetch(flows, { headers: { Authorization: 'Bearer tok-for-the-test' } })).status).toBe(200);
    const origin = server.base.replace('/api/v1', '');
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    // The inference routes keep their own rules: /get_result is public, /v1/completions takes ACCESS_TOKENS (none here).
    expect((await fetch(`${origin}/get_result/no-such-task`)).status).toBe(404);
    const completions = await fetch(`${origin}/v1/completions`, { method: 'POST', headers: { Authorization: basic }, body: '{}' });
    expect(completions.status).toBe(401);
    expect(completions.headers.get('www-authenticate')).toBe('Bearer');
  });
});
