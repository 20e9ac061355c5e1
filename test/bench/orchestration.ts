// Orchestration benchmarks through the HTTP API of a real embedded server process (durable SQLite store):
// executions/s of a 3-task flow under 16 concurrent clients, per-task latency of a 100-task sequential flow, and
// EachParallel fan-out at 1k/10k/100k items (ms per item, worst /healthz latency meanwhile, peak RSS of the server).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerProcess } from '../support/server-process.js';

const KESTRA_EXEC_PER_S = 1500 / 60; // Kestra's published figure: 1,500 executions/minute for a 2-task flow

const returnFlow = (id: string, n: number) => `id: ${id}
namespace: bench
tasks:
${Array.from({ length: n }, (_, i) => `  - id: t${i}
    type: ai.service.plugin.core.debug.Return
    format: "{{ execution.id }}-${i}"
`).join('')}`;

async function post(url: string, body: string, type: string): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function waitAll(base: string, ids: string[]): Promise<any[]> {
  const out: any[] = [];
  for (const id of ids) {
    for (;;) {
      const e = await (await fetch(`${base}/executions/${id}`)).json();
      if (['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current)) { out.push(e); break; }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  return out;
}

async function throughput(base: string, total: number, clients: number): Promise<number> {
  await post(`${base}/flows`, returnFlow('three', 3), 'application/x-yaml');
  const ids: string[] = [];
  let next = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total) {
      next++;
      ids.push((await post(`${base}/executions/bench/three`, '{}', 'application/json')).id);
    }
  }));
  const execs = await waitAll(base, ids);
  const bad = execs.filter((e) => e.state.current !== 'SUCCESS').length;
  if (bad) throw new Error(`${bad} executions did not succeed`);
  const last = Math.max(...execs.map((e) => Date.parse(e.state.endDate)));
  return total / ((last - t0) / 1000);
}

async function sequentialLatency(base: string, tasks: number, runs: number): Promise<number> {
  await post(`${base}/flows`, returnFlow('hundred', tasks), 'application/x-yaml');
  const perTask: number[] = [];
  for (let i = 0; i < runs; i++) {
    const e = await post(`${base}/executions/bench/hundred?wait=true`, '{}', 'application/json');
    if (e.state.current !== 'SUCCESS') throw new Error(`sequential run ended ${e.state.current}`);
    perTask.push((Date.parse(e.state.endDate) - Date.parse(e.state.startDate)) / tasks);
  }
  perTask.sort((a, b) => a - b);
  return perTask[Math.floor(perTask.length / 2)]!;
}

const wideFlow = (id: string, width: number) => `id: ${id}
namespace: bench
tasks:
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: "{{ range(1, ${width}) }}"
    tasks:
      - id: r
        type: ai.service.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`;

/** Resident set size of a process in bytes (Linux /proc), or 0 where it cannot be read. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

export interface FanOutFigures { items: number; totalMs: number; msPerItem: number; worstHealthzMs: number; failedProbes: number; peakRssMb: number }

/**
 * One EachParallel over `width` items of a Return task, end to end: while it runs, `/healthz` is called every 20 ms
 * (worst latency kept) and the server's RSS sampled every 20 ms from /proc (peak kept).
 */
export async function fanOut(base: string, pid: number, width: number, timeoutMs = 30 * 60_000): Promise<FanOutFigures> {
  const id = `wide${width}`;
  await post(`${base}/flows`, wideFlow(id, width), 'application/x-yaml');
  const health = `${base.replace(/\/api\/v1$/, '')}/healthz`;
  let done = false;
  let worst = 0;
  let failedProbes = 0;
  let peak = rssOf(pid);
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 20);
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      // A keep-alive connection the server closed meanwhile fails once (ECONNRESET): the probe is counted and repeated.
      try { await (await fetch(health)).arrayBuffer(); } catch { failedProbes++; continue; } finally { worst = Math.max(worst, performance.now() - t0); }
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  try {
    let e = await post(`${base}/executions/bench/${id}?wait=true`, '{}', 'application/json');
    for (const end = Date.now() + timeoutMs; !['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current);) {
      if (Date.now() > end) throw new Error(`${width}-item loop did not end within ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 5_000));
      e = await (await fetch(`${base}/executions/${e.id}`)).json();
    }
    if (e.state.current !== 'SUCCESS' || e.taskRunList.length !== width + 1) {
      throw new Error(`${width}-item loop ended ${e.state.current} with ${e.taskRunList.length} task runs`);
    }
    const totalMs = Date.parse(e.state.endDate) - Date.parse(e.state.startDate);
    return { items: width, totalMs, msPerItem: totalMs / width, worstHealthzMs: Math.round(worst), failedProbes, peakRssMb: Math.round(peak / 2 ** 20) };
  } finally {
    done = true;
    clearInterval(sampler);
    await poller;
  }
}

/** Sizes of the fan-out runs: BENCH_FANOUT="1000,10000,100000" (the default). */
export const fanOutSizes = (env = process.env): number[] =>
  (env.BENCH_FANOUT ?? '1000,10000,100000').split(',').map((s) => Number(s.trim())).filter((n) => n > 0);

export function printFanOut(f: FanOutFigures): void {
  console.log(`  EachParallel ${String(f.items).padStart(7)} items: ${String(f.totalMs).padStart(7)} ms, `
    + `${f.msPerItem.toFixed(3)} ms per item, worst /healthz ${f.worstHealthzMs} ms${f.failedProbes ? ` (${f.failedProbes} probes reset)` : ''}, peak RSS ${f.peakRssMb} MiB`);
}

export async function runOrchestrationBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const { proc, base } = await startServerProcess(dataDir, 'inherit');
  try {
    // BENCH_EXECUTIONS=0 skips the throughput and latency figures (fan-out only).
    const total = Number(process.env.BENCH_EXECUTIONS ?? 2000);
    if (total > 0) {
      await throughput(base, 100, 16); // warm-up
      const rate = await throughput(base, total, 16);
      console.log(`orchestration: ${total} executions of a 3-task Return flow, 16 concurrent clients over HTTP`);
      console.log(`  throughput            ${rate.toFixed(1)} executions/s (target >= 100)`);
      console.log(`  vs Kestra 1,500/min   ${(rate / KESTRA_EXEC_PER_S).toFixed(2)}x (Kestra: ${KESTRA_EXEC_PER_S.toFixed(1)}/s, 2-task flow)`);
      const perTask = await sequentialLatency(base, 100, 5);
      console.log(`  100-task sequential   ${perTask.toFixed(2)} ms per task end to end (median of 5; target < 10 ms)`);
    }
    console.log('  fan-out (BENCH_FANOUT sizes): EachParallel over range(1, N) of a Return task; /healthz polled every 20 ms meanwhile');
    for (const n of fanOutSizes()) printFanOut(await fanOut(base, proc.pid!, n));
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
