// `flowpilot server` starts embedded mode (the real operator/main.ts, as npm start) and the CLI authenticates to it
// with a bearer token (--token, FLOWPILOT_TOKEN) or basic credentials (--user); without them it exits 7 with one line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, ROOT } from './run-cli.js';

let server: ChildProcess;
let url: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'flowpilot-cli-server-'));
  server = spawn(process.execPath, [BIN, 'server', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SAMPLE_FLOW: 'false', TRIGGERS: 'false', API_TOKENS: 'cli-test-token', BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'pw-123' },
  });
  url = await new Promise<string>((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`server did not start: ${out}`)), 60_000);
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^ ]+:\d+)/.exec(out);
      if (m) { clearTimeout(timer); res(m[1]!); }
    });
    server.stderr!.on('data', (d) => { out += d; });
    server.once('exit', (code) => { clearTimeout(timer); rej(new Error(`server exited ${code}: ${out}`)); });
  });
});
afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('flowpilot server and authentication', { timeout: 120_000 }, () => {
  it('refuses without credentials (exit 7, one line saying what to give)', async () => {
    const r = await cli(['flow', 'list', '--server', url]);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/^error: GET \/flows\/search refused \(401\): .*Give a token \(--token or FLOWPILOT_TOKEN\)/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect((await cli(['flow', 'list', '--server', url, '--token', 'wrong'])).code).toBe(7);
  });

  it('accepts a bearer token (option or FLOWPILOT_TOKEN) and basic credentials', async () => {
    expect((await cli(['flow', 'list', '--server', url, '--token', 'cli-test-token'])).code).toBe(0);
    const viaEnv = await cli(['kv', 'set', 'auth.test', 'k', 'v'], { FLOWPILOT_URL: url, FLOWPILOT_TOKEN: 'cli-test-token' });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const basic = await cli(['kv', 'get', 'auth.test', 'k', '--server', url, '--user', 'admin:pw-123']);
    expect(basic.code, basic.stderr).toBe(0);
    expect(basic.stdout).toBe('v\n');
  });
});
