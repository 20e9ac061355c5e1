// Test support: real external services from Debian's packages (PostgreSQL with logical decoding, Redis, Mosquitto,
// NATS), each started as a child process on a free port in a temporary directory and stopped after the tests.
// `scripts/install-services.sh` (run by `npm test` and `.ci/run`) installs the packages.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Service { host: string; port: number; url: string; stop(): Promise<void>; proc: ChildProcess }

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => res(p)); });
  });
}

async function waitForPort(port: number, proc: ChildProcess, name: string, log: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((res) => {
      const c = connect(port, '127.0.0.1', () => { c.end(); res(true); });
      c.once('error', () => res(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms: ${log()}`);
}

function requireBinary(path: string, pkg: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package '${pkg}' (scripts/install-services.sh does)`);
}

function run(name: string, cmd: string, args: string[], port: number, dir: string, opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Service> {
  let out = '';
  const proc = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env }, ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}) });
  proc.stdout!.on('data', (d) => { out = (out + d).slice(-4000); });
  proc.stderr!.on('data', (d) => { out = (out + d).slice(-4000); });
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return waitForPort(port, proc, name, () => out).then(
    () => ({ host: '127.0.0.1', port, url: '', stop, proc }),
    async (e) => { await stop(); throw e; },
  );
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** PostgreSQL with `wal_level=logical`; user `postgres`, trust auth on 127.0.0.1; `url` is a postgres:// URL. */
export async function startPostgres(): Promise<Service & { user: string; database: string }> {
  requireBinary(`${PG_BIN}/postgres`, 'postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  // PostgreSQL refuses to run as root: run it as the `postgres` account the package creates.
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) } : {};
  if (asRoot) chownSync(dir, ids.uid!, ids.gid!);
  execFileSync(`${PG_BIN}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], { stdio: 'pipe', ...ids });
  const port = await freePort();
  const svc = await run('postgres', `${PG_BIN}/postgres`, [
    '-D', data, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
    '-c', 'wal_level=logical', '-c', 'max_replication_slots=20', '-c', 'max_wal_senders=20', '-c', 'fsync=off',
    '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200',
  ], port, dir, ids);
  // The port accepts connections a moment before the server accepts logins.
  for (let i = 0; i < 100; i++) {
    try { execFileSync(`${PG_BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'pipe' }); break; } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  return { ...svc, url: `postgres://postgres@127.0.0.1:${port}/postgres`, user: 'postgres', database: 'postgres' };
}

export async function startRedis(): Promise<Service> {
  requireBinary('/usr/bin/redis-server', 'redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'redis-'));
  const port = await freePort();
  const svc = await run('redis', '/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], port, dir);
  return { ...svc, url: `redis://127.0.0.1:${port}` };
}

export async function startMosquitto(): Promise<Service> {
  requireBinary('/usr/sbin/mosquitto', 'mosquitto');
  const dir = mkdtempSync(join(tmpdir(), 'mqtt-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  const svc = await run('mosquitto', '/usr/sbin/mosquitto', ['-c', conf], port, dir);
  return { ...svc, url: `mqtt://127.0.0.1:${port}` };
}

export async function startNats(): Promise<Service> {
  requireBinary('/usr/sbin/nats-server', 'nats-server');
  const dir = mkdtempSync(join(tmpdir(), 'nats-'));
  const port = await freePort();
  const svc = await run('nats', '/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port)], port, dir);
  return { ...svc, url: `nats://127.0.0.1:${port}` };
}
