// Test support: real external services from Debian's packages (PostgreSQL with logical decoding, Redis, Mosquitto,
// NATS), each started as a child process on a free port in a temporary directory and stopped after the tests.
// `scripts/install-services.sh` (run by `npm test` and `.ci/run`) installs the packages.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Starts a service process in `dir` and waits until it listens on `port`; `stop` ends it and removes `dir`. */
export function run(name: string, cmd: string, args: string[], port: number, dir: string, opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Service> {
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

/** TLS of a test PostgreSQL: the server certificate and key (PEM); `hostsslOnly` refuses connections without TLS. */
export interface PostgresTls { cert: string; key: string; hostsslOnly?: boolean }

/**
 * PostgreSQL with `wal_level=logical`; user `postgres`, trust auth on 127.0.0.1 (and ::1); `url` is a postgres:// URL.
 * With `tls`, `ssl=on` with the given certificate and key. With `passwordAuth`, TCP logins of users other than `postgres`
 * need their password (scram-sha-256).
 */
export async function startPostgres(opts: { tls?: PostgresTls; passwordAuth?: boolean } = {}): Promise<Service & { user: string; database: string }> {
  requireBinary(`${PG_BIN}/postgres`, 'postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  // PostgreSQL refuses to run as root: run it as the `postgres` account the package creates.
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) } : {};
  if (asRoot) chownSync(dir, ids.uid!, ids.gid!);
  execFileSync(`${PG_BIN}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], { stdio: 'pipe', ...ids });
  const tlsArgs: string[] = [];
  if (opts.tls) {
    // The key must belong to the server's account and be private to it.
    for (const [name, pem, mode] of [['server.crt', opts.tls.cert, 0o644], ['server.key', opts.tls.key, 0o600]] as const) {
      writeFileSync(join(data, name), pem, { mode });
      if (asRoot) chownSync(join(data, name), ids.uid!, ids.gid!);
    }
    tlsArgs.push('-c', 'ssl=on', '-c', `ssl_cert_file=${join(data, 'server.crt')}`, '-c', `ssl_key_file=${join(data, 'server.key')}`);
    if (opts.tls.hostsslOnly) {
      writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n'
        + 'hostssl replication all 127.0.0.1/32 trust\nhostssl replication all ::1/128 trust\n');
      if (asRoot) chownSync(join(data, 'pg_hba.conf'), ids.uid!, ids.gid!);
    }
  }
  if (opts.passwordAuth && !opts.tls?.hostsslOnly) {
    writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust\n'
      + 'host all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n');
    if (asRoot) chownSync(join(data, 'pg_hba.conf'), ids.uid!, ids.gid!);
  }
  const port = await freePort();
  const svc = await run('postgres', `${PG_BIN}/postgres`, [
    '-D', data, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
    '-c', 'wal_level=logical', '-c', 'max_replication_slots=20', '-c', 'max_wal_senders=20', '-c', 'fsync=off',
    '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200', ...tlsArgs,
  ], port, dir, ids);
  // The port accepts connections a moment before the server accepts logins (longer on a loaded machine).
  for (const deadline = Date.now() + 60_000; ;) {
    try { execFileSync(`${PG_BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'pipe' }); break; } catch (err) {
      if (Date.now() > deadline || svc.proc.exitCode !== null) { await svc.stop(); throw new Error(`postgres does not accept logins on ${port}: ${String(err)}`); }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { ...svc, url: `postgres://postgres@127.0.0.1:${port}/postgres`, user: 'postgres', database: 'postgres' };
}

const MARIADB_BIN = '/usr/sbin/mariadbd';

/**
 * MariaDB (Debian's `mariadb-server`) in a temporary data directory on a free port (127.0.0.1) and its own socket, with
 * the grant tables on: `user` / `password` is an account created at start with a password, all privileges on the
 * database `database`. Runs as the package's `mysql` account when started as root. `url` is a jdbc:mysql:// URL.
 */
export async function startMariaDB(): Promise<Service & { user: string; password: string; database: string }> {
  requireBinary(MARIADB_BIN, 'mariadb-server');
  const dir = mkdtempSync(join(tmpdir(), 'mariadb-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'mysql']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'mysql']).toString().trim()) } : {};
  if (asRoot) chownSync(dir, ids.uid!, ids.gid!);
  const userArgs = asRoot ? ['--user=mysql'] : [];
  execFileSync('/usr/bin/mariadb-install-db', ['--no-defaults', `--datadir=${data}`, '--skip-test-db', '--auth-root-authentication-method=socket', ...userArgs],
    { stdio: 'pipe', ...ids });
  const [user, password, database] = ['kestra', `pw-${Math.random().toString(36).slice(2)}`, 'kestra'];
  writeFileSync(join(dir, 'init.sql'), `CREATE DATABASE IF NOT EXISTS ${database};\n`
    + `CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY '${password}';\n`
    + `GRANT ALL PRIVILEGES ON *.* TO '${user}'@'%';\n`);
  if (asRoot) chownSync(join(dir, 'init.sql'), ids.uid!, ids.gid!);
  const port = await freePort();
  const svc = await run('mariadb', MARIADB_BIN, [
    '--no-defaults', `--datadir=${data}`, `--socket=${join(dir, 'mysqld.sock')}`, `--port=${port}`, '--bind-address=127.0.0.1',
    `--pid-file=${join(dir, 'mysqld.pid')}`, `--init-file=${join(dir, 'init.sql')}`, '--skip-name-resolve', '--skip-log-bin',
    '--innodb-buffer-pool-size=32M', '--innodb-log-file-size=16M', '--max-connections=100', ...userArgs,
  ], port, dir, ids);
  return { ...svc, url: `jdbc:mysql://127.0.0.1:${port}/${database}`, user, password, database };
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

/** A RabbitMQ node of the tests; `stopBroker`/`startBroker` restart it on the same ports and data (reconnect tests). */
export interface RabbitMQ extends Service { stopBroker(): Promise<void>; startBroker(): Promise<void> }

const RABBIT_BIN = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/**
 * RabbitMQ (Debian's package) on free ports in a temporary directory: its own epmd on a free port (parallel test files
 * never share one), its own node name, data, logs and Erlang cookie, no plugins (no management listener), the AMQP
 * listener on 127.0.0.1 only, user guest/guest allowed from the loopback. Runs as the package's `rabbitmq` account when
 * started as root. Booting takes several seconds: start one per test file. `url` is amqp://guest:guest@127.0.0.1:port.
 */
export async function startRabbitMQ(): Promise<RabbitMQ> {
  requireBinary(RABBIT_BIN, 'rabbitmq-server');
  const { connect: amqpConnect } = await import('amqplib');
  const dir = mkdtempSync(join(tmpdir(), 'rabbitmq-'));
  chmodSync(dir, 0o755);
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: Number(execFileSync('id', ['-u', 'rabbitmq']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'rabbitmq']).toString().trim()) } : {};
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.default = 127.0.0.1:${port}\nloopback_users = none\nlog.console = true\nlog.console.level = warning\nlog.file = false\n`);
  if (asRoot) for (const f of ['', 'enabled_plugins', 'rabbitmq-env.conf', 'rabbitmq.conf']) chownSync(join(dir, f), ids.uid!, ids.gid!);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir, // the Erlang cookie is written here
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODENAME: `rabbit-${port}@localhost`,
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, 'plugins-expand'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
  };
  const spawnOpts = { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] as ('ignore' | 'pipe')[], ...ids };
  let out = '';
  const collect = (p: ChildProcess) => {
    p.stdout!.on('data', (d) => { out = (out + d).slice(-4000); });
    p.stderr!.on('data', (d) => { out = (out + d).slice(-4000); });
  };
  // Our own epmd in the foreground (the node would otherwise start a daemon we could not tell apart from others).
  const epmd = spawn('epmd', ['-port', String(epmdPort)], spawnOpts);
  collect(epmd);
  const stopProc = async (p: ChildProcess | undefined) => {
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(t);
  };
  let node: ChildProcess | undefined;
  const startBroker = async () => {
    // rabbitmq-server execs erl, which execs the emulator: this pid is the node (SIGTERM shuts it down cleanly).
    node = spawn(RABBIT_BIN, [], spawnOpts);
    collect(node);
    await waitForPort(port, node, 'rabbitmq', () => out, 120_000);
    // The listener accepts TCP a moment before the broker accepts AMQP sessions.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const c = await amqpConnect(`amqp://guest:guest@127.0.0.1:${port}`);
        await c.close();
        return;
      } catch (err) {
        if (Date.now() > deadline || node.exitCode !== null) throw new Error(`rabbitmq does not accept AMQP sessions: ${String(err)}: ${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const stopBroker = () => stopProc(node);
  const stop = async () => {
    await stopBroker();
    await stopProc(epmd);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await startBroker();
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: '127.0.0.1', port, url: `amqp://guest:guest@127.0.0.1:${port}`, proc: node!, stop, stopBroker, startBroker };
}

/**
 * s3rver (a real S3-protocol server from npm) in a child node process, so that synchronous reads from the calling
 * thread (S3Storage.getSync) cannot deadlock against it; `url` is its http endpoint.
 */
export async function startS3rver(): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  const code = `import S3rver from 's3rver';
    const server = new S3rver({ address: '127.0.0.1', port: 0, directory: process.argv[1], silent: true });
    const addr = await server.run();
    console.log('PORT=' + addr.port);
    process.on('SIGTERM', () => server.close().then(() => process.exit(0)));`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code, dir], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise<number>((res, rej) => {
    proc.stdout!.on('data', (d) => { out += d; const m = /PORT=(\d+)/.exec(out); if (m) res(Number(m[1])); });
    proc.stderr!.on('data', (d) => { out += d; });
    proc.once('exit', (c) => rej(new Error(`s3rver exited with ${c}: ${out}`)));
  });
  const stop = async () => {
    if (proc.exitCode === null) { const e = new Promise((r) => proc.once('exit', r)); proc.kill('SIGTERM'); setTimeout(() => proc.kill('SIGKILL'), 3000).unref(); await e; }
    rmSync(dir, { recursive: true, force: true });
  };
  return { host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, stop, proc };
}

/** A test CA, a certificate for `localhost` (DNS name only, no IP) signed by it with its key, and an unrelated CA (PEM). */
export interface TestCertificates { ca: string; otherCa: string; cert: string; key: string }

/** Generates TestCertificates with the `openssl` binary (EC P-256, valid two days) in a temporary directory. */
export function testCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'certs-'));
  try {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=flowpilot test CA');
    openssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.crt', '-days', '2', '-subj', '/CN=another CA');
    openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'ext'), 'subjectAltName=DNS:localhost\n');
    openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'ext');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return { ca: read('ca.crt'), otherCa: read('other.crt'), cert: read('server.crt'), key: read('server.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
