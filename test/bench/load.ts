// Load generation for the orchestration bench: autocannon (in this process, 16 connections by default) against one
// URL for a fixed duration, and the floor it is compared with (test/bench/floor-server.ts in its own process).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import autocannon from 'autocannon';

const ROOT = resolve(import.meta.dirname, '../..');

/** The same settings for every figure of one run: BENCH_CONNECTIONS (16) connections for BENCH_DURATION_S (10) seconds. */
export interface LoadSettings { connections: number; durationS: number }

export const loadSettings = (env = process.env): LoadSettings => ({
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  durationS: Number(env.BENCH_DURATION_S ?? 10),
});

export interface LoadFigures {
  /** 2xx answers per second over the run. */
  rps: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  start: Date;
  finish: Date;
  /** CPU time used during the run per second of it (1 = one core busy): the load generator's (this process) and the server's. */
  clientCores: number;
  serverCores: number;
}

/** CPU seconds (user + system) a process used so far, from /proc (Linux; USER_HZ is 100 there); NaN where unreadable. */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: fields 14 and 15 of stat(5)
  } catch { return NaN; }
}

/**
 * Drives `url` with `settings` (POST `{}` as JSON when `post`, else GET) and returns what autocannon measured, with the
 * CPU used meanwhile by this process and by the server process `serverPid`: a load generator near one core while the
 * server is not would be the bottleneck.
 */
export async function load(url: string, serverPid: number, settings: LoadSettings, post: boolean, durationS = settings.durationS): Promise<LoadFigures> {
  const client0 = process.cpuUsage();
  const server0 = cpuSecondsOf(serverPid);
  const t0 = performance.now();
  const r = await autocannon({
    url,
    connections: settings.connections,
    duration: durationS,
    ...(post ? { method: 'POST' as const, body: '{}', headers: { 'content-type': 'application/json' } } : {}),
  });
  const wall = (performance.now() - t0) / 1000;
  const client = process.cpuUsage(client0);
  return {
    clientCores: (client.user + client.system) / 1e6 / wall,
    serverCores: (cpuSecondsOf(serverPid) - server0) / wall,
    rps: r['2xx'] / r.duration,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    maxMs: r.latency.max,
    start: r.start,
    finish: r.finish,
  };
}

export const describeLoad = (f: LoadFigures): string =>
  `${f.rps.toFixed(0)} req/s (${f.ok} answered 2xx${f.non2xx ? `, ${f.non2xx} NOT 2xx` : ''}${f.errors ? `, ${f.errors} errors` : ''}; `
  + `latency p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms, max ${f.maxMs} ms; CPU: load generator ${f.clientCores.toFixed(2)}, server ${f.serverCores.toFixed(2)} cores)`;

/** Starts the floor server on a database file, resolving with its process and URL once it listens. */
export function startFloor(dbFile: string): Promise<{ proc: ChildProcess; url: string }> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'test/bench/floor-server.ts', dbFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) res({ proc, url: `${m[1]}/rows` });
    });
    proc.once('exit', (code) => rej(new Error(`floor server exited ${code}: ${out}`)));
  });
}

/** Stops a child process started here and waits for it to exit. */
export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

/** The floor: one durable SQLite row per request through a bare Koa route, measured with `settings`. */
export async function measureFloor(dbFile: string, settings: LoadSettings): Promise<LoadFigures> {
  const floor = await startFloor(dbFile);
  try {
    await load(floor.url, floor.proc.pid!, settings, true, 1); // warm-up: JIT, connections, the file's first pages
    const f = await load(floor.url, floor.proc.pid!, settings, true);
    if (f.non2xx) throw new Error(`floor: ${f.non2xx} answers were not 2xx`);
    return f;
  } finally {
    await stop(floor.proc);
  }
}
