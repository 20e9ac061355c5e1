// Fan-out figures of the orchestration bench, through the HTTP API of the server process: one loop (EachParallel,
// ForEach with concurrencyLimit 0, or the default sequential ForEach) over N items of a Return child, with /healthz
// probed and the server's RSS sampled meanwhile; the bytes the execution added to the SQLite file; reads of the record.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isTerminal, type State } from '../../operator/core/types.js';
import { cpuSecondsOf } from './load.js';
import { parseProbeLines, type ProbeFigures } from './probe-line.js';
import { median } from './stats.js';

export type LoopKind = 'EachParallel' | 'ForEach c=0' | 'ForEach c=1';

const loopTask: Record<LoopKind, (n: number) => string> = {
  'EachParallel': (n) => `type: io.kestra.plugin.core.flow.EachParallel\n    value: "{{ range(1, ${n}) }}"`,
  'ForEach c=0': (n) => `type: io.kestra.plugin.core.flow.ForEach\n    values: "{{ range(1, ${n}) }}"\n    concurrencyLimit: 0`,
  'ForEach c=1': (n) => `type: io.kestra.plugin.core.flow.ForEach\n    values: "{{ range(1, ${n}) }}"`, // the default limit, 1
};

const flowIdOf = (kind: LoopKind, n: number) => `${kind.replace(/[^A-Za-z0-9]/g, '').toLowerCase()}${n}`;

const loopFlow = (kind: LoopKind, n: number) => `id: ${flowIdOf(kind, n)}
namespace: bench
tasks:
  - id: loop
    ${loopTask[kind](n)}
    tasks:
      - id: r
        type: io.kestra.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`;

export async function post(url: string, body: string, type: string): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** Resident set size of a process in bytes (Linux /proc), or 0 where it cannot be read. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

/**
 * Bytes of live data in the server's SQLite database (the payload of every table and index row, from SQLite's dbstat
 * table), read through a read-only connection of this process: the difference around one execution is what storing
 * it cost, whatever the schema.
 */
export function storedBytes(dataDir: string): number {
  const db = new Database(join(dataDir, 'store.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT coalesce(sum(payload), 0) AS bytes FROM dbstat').get() as { bytes: number }).bytes;
  } finally { db.close(); }
}

export interface FanOutFigures {
  kind: LoopKind;
  items: number;
  executionId: string;
  taskRuns: number;
  totalMs: number;
  msPerItem: number;
  worstHealthzMs: number;
  /** Probes left out because this process, not the server, held them (see fanOut), and all probes. */
  skippedProbes: number;
  probes: number;
  failedProbes: number;
  peakRssMb: number;
  /** The server's RSS when the run started: the peak includes what earlier runs left in its heap. */
  startRssMb: number;
  /** CPU seconds the server used from the creation request to the end (its /healthz answers included): less noisy than the total on a shared machine. */
  serverCpuS: number;
  storedBytes: number;
  /** The server's longest event-loop delay and its GC pauses while the loop ran (loop-delay-probe.ts), or undefined without the probe. */
  probe?: ProbeFigures;
}

/** Node arguments that load the event-loop probe into the server process (loop-delay-probe.ts). */
export const LOOP_DELAY_PROBE_ARGS = ['--import', 'tsx', '--import', new URL('./loop-delay-probe.ts', import.meta.url).pathname];

/**
 * Reads what the server's probe saw since the previous read (or its start): sends SIGUSR2 and waits for the line it
 * prints (probe-line.ts). `output` is everything the server printed so far.
 */
export function loopDelayReader(pid: number, output: () => string): () => Promise<ProbeFigures> {
  return async () => {
    const seen = parseProbeLines(output()).length;
    process.kill(pid, 'SIGUSR2');
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
      const all = parseProbeLines(output());
      if (all.length > seen) return all[all.length - 1]!;
    }
    throw new Error('the server did not print its event-loop delay within 30 s (is loop-delay-probe.ts loaded?)');
  };
}

/** A hold of the bench's own event loop longer than this (a 5 ms timer firing late) leaves out the probes it overlaps. */
const OWN_BLOCK_MS = 25;

/**
 * One loop of `kind` over `items` items of a Return task, end to end (the record's end date minus its start date):
 * meanwhile `/healthz` is called every 20 ms (worst latency kept) and the server's RSS sampled every 20 ms (peak kept).
 * Throws unless the execution ends SUCCESS with one child task run per item.
 */
export async function fanOut(base: string, pid: number, dataDir: string, kind: LoopKind, items: number, loopDelay?: () => Promise<ProbeFigures>, timeoutMs = 30 * 60_000): Promise<FanOutFigures> {
  await post(`${base}/flows`, loopFlow(kind, items), 'application/x-yaml');
  await loopDelay?.(); // starts the server's count over
  const bytesBefore = storedBytes(dataDir);
  const health = `${base.replace(/\/api\/v1$/, '')}/healthz`;
  let done = false;
  let worst = 0;
  let failedProbes = 0;
  let skipped = 0;
  let total = 0;
  const startRss = rssOf(pid);
  let peak = startRss;
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 20);
  // A probe measures this process too: while it reads a record (the ?wait=true answer of a 100,000-run loop is ~80 MB
  // of JSON, parsed here in one piece) or collects the garbage of one (a ~0.7 s pause after the parse, seen here), a
  // probe in flight waits for it, not for the server (a worst of ~0.7-2 s against a server whose longest block was
  // ~60-90 ms). Such probes are left out (counted as `skipped`): those that overlap a read, and those during which this
  // process's own event loop was held more than OWN_BLOCK_MS (a 5 ms timer firing late). The server's own probe
  // (longest event-loop block, printed beside) still covers all of its work.
  const probes: { from: number; to: number; ms: number }[] = [];
  const ownBlocks: { from: number; to: number }[] = [];
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > OWN_BLOCK_MS) ownBlocks.push({ from: lastTick, to: now });
    lastTick = now;
  }, 5);
  let reading = 0;
  let reads = 0;
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      const readsBefore: number = reads;
      // A keep-alive connection the server closed meanwhile fails once (ECONNRESET): the probe is counted and repeated.
      try { await (await fetch(health)).arrayBuffer(); } catch { failedProbes++; continue; } finally {
        const t1 = performance.now();
        total++;
        if (!reading && reads === readsBefore) probes.push({ from: t0, to: t1, ms: t1 - t0 }); else skipped++;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  /** The body of an answer, read with the probes paused (see above). */
  const readJson = async (r: Response): Promise<any> => {
    reading++;
    reads++;
    try {
      if (r.status >= 300) throw new Error(`${r.url}: ${r.status} ${await r.text()}`);
      return await r.json();
    } finally { reading--; }
  };
  let e: any;
  const cpuBefore = cpuSecondsOf(pid);
  let serverCpuS = NaN;
  try {
    e = await readJson(await fetch(`${base}/executions/bench/${flowIdOf(kind, items)}?wait=true`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }));
    for (const end = Date.now() + timeoutMs; !isTerminal(e.state.current as State);) {
      if (Date.now() > end) throw new Error(`${kind} over ${items} items did not end within ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 5_000));
      e = await readJson(await fetch(`${base}/executions/${e.id}`));
    }
  } finally {
    serverCpuS = cpuSecondsOf(pid) - cpuBefore;
    done = true;
    clearInterval(sampler);
    await poller;
    clearInterval(ticker);
  }
  for (const p of probes) {
    if (ownBlocks.some((b) => b.to > p.from && b.from < p.to)) skipped++;
    else worst = Math.max(worst, p.ms);
  }
  const probe = await loopDelay?.();
  const children = (e.taskRunList as { taskId: string }[]).filter((r) => r.taskId === 'r').length;
  if (e.state.current !== 'SUCCESS' || children !== items) {
    throw new Error(`${kind} over ${items} items ended ${e.state.current} with ${children} child task runs`);
  }
  const totalMs = Date.parse(e.state.endDate) - Date.parse(e.state.startDate);
  return {
    kind, items, executionId: e.id, taskRuns: e.taskRunList.length, totalMs, msPerItem: totalMs / items,
    worstHealthzMs: Math.round(worst), failedProbes, skippedProbes: skipped, probes: total, peakRssMb: Math.round(peak / 2 ** 20), startRssMb: Math.round(startRss / 2 ** 20), serverCpuS, storedBytes: storedBytes(dataDir) - bytesBefore,
    ...(probe ? { probe } : {}),
  };
}

export function describeFanOut(f: FanOutFigures): string {
  return `  ${f.kind.padEnd(12)} ${String(f.items).padStart(7)} items: ${String(f.totalMs).padStart(7)} ms, `
    + `${f.msPerItem.toFixed(4)} ms per item, server CPU ${f.serverCpuS.toFixed(1)} s (${Math.round((f.serverCpuS * 1e6) / f.items)} µs per item), worst /healthz ${f.worstHealthzMs} ms (${f.probes} probes${f.skippedProbes ? `, ${f.skippedProbes} left out: the bench's own block` : ''}${f.failedProbes ? `, ${f.failedProbes} reset` : ''}), `
    + (f.probe ? `longest event-loop block ${Math.round(f.probe.maxMs)} ms, GC: longest pause ${Math.round(f.probe.gcMaxMs)} ms (${f.probe.gcMaxKind}), `
      + `${Math.round(f.probe.gcTotalMs)} ms in ${f.probe.gcCount} pauses, heap peak ${f.probe.heapPeakMb} MiB (after a major GC ${f.probe.heapLiveMb}), ` : '')
    + `peak RSS ${f.peakRssMb} MiB (${f.startRssMb} at start), stored ${(f.storedBytes / 2 ** 20).toFixed(1)} MiB (${Math.round(f.storedBytes / f.taskRuns)} bytes per task run)`;
}

/** Median wall time of `reads` reads of GET /executions/{id} (until the whole body arrived) and the body's size. */
export async function readExecution(base: string, id: string, reads: number): Promise<{ medianMs: number; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  await (await fetch(`${base}/executions/${id}`)).arrayBuffer(); // warm-up: connection, first read
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    const r = await fetch(`${base}/executions/${id}`);
    bytes = (await r.arrayBuffer()).byteLength;
    ms.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`GET /executions/${id}: ${r.status}`);
  }
  return { medianMs: median(ms), bytes };
}
