// Orchestration benchmarks (issue 12's targets) through the HTTP API of a real embedded server process (durable SQLite
// store), all measured in the same run: the floor (bare Koa + one SQLite row per request), executions/s of a 3-task
// Return flow driven by autocannon, create-to-SUCCESS latency, ms per task of a 100-task sequential flow, fan-out
// (EachParallel, ForEach) at growing sizes, the read and stored size of large executions, then a summary table.
// How to run and what each figure means: docs/performance.md. Printed, never asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ExecutionStates, isTerminal } from '../../operator/core/types.js';
import { startServerProcess } from '../support/server-process.js';
import { describeFanOut, fanOut, LOOP_DELAY_PROBE_ARGS, loopDelayReader, post, readExecution, type FanOutFigures, type LoopKind } from './fanout.js';
import { describeLoad, load, loadSettings, measureFloor, stop, type LoadFigures, type LoadSettings } from './load.js';
import type { ProbeFigures } from './probe-line.js';
import { check, formatSummary, gcTotals, growth, median, percentile, type GcTotals, type SummaryRow } from './stats.js';

const returnFlow = (id: string, n: number) => `id: ${id}
namespace: bench
tasks:
${Array.from({ length: n }, (_, i) => `  - id: t${i}
    type: io.kestra.plugin.core.debug.Return
    format: "{{ execution.id }}-${i}"
`).join('')}`;

/** A list of sizes from the environment (`"1000,10000"`); an empty value selects none. */
const sizes = (value: string): number[] => value.split(',').map((s) => Number(s.trim())).filter((n) => n > 0);

const NOT_SUCCESS_TERMINAL = ExecutionStates.filter((s) => isTerminal(s) && s !== 'SUCCESS');

async function searchTotal(base: string, query: string): Promise<number> {
  const r = await fetch(`${base}/executions/search?namespace=bench&size=1&${query}`);
  if (r.status !== 200) throw new Error(`execution search ${query}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { total: number }).total;
}

/**
 * Waits until every execution of `flowId` started since `since` ended SUCCESS, the same count in two polls in a row:
 * the requests autocannon had in flight when it stopped are still served after it returned, and an execution is
 * created SUCCESS (eager start), so one poll may come before the last creations. Throws as soon as one ended
 * otherwise, or when the count of SUCCESS stopped growing for `stallMs`. Resolves with the count.
 */
async function waitAllSuccess(base: string, flowId: string, since: string, stallMs = 60_000): Promise<number> {
  const q = `flowId=${flowId}&startDate=${encodeURIComponent(since)}`;
  let last = -1;
  let before = -1;
  let progressAt = Date.now();
  for (;;) {
    const [all, ok, bad] = await Promise.all([searchTotal(base, q), searchTotal(base, `${q}&state=SUCCESS`),
      searchTotal(base, `${q}&${NOT_SUCCESS_TERMINAL.map((s) => `state=${s}`).join('&')}`)]);
    if (bad) throw new Error(`${bad} of ${all} executions of ${flowId} did not end SUCCESS`);
    if (ok === all && all === before) return all;
    before = ok === all ? all : -1;
    if (ok !== last) { last = ok; progressAt = Date.now(); }
    if (Date.now() - progressAt > stallMs) throw new Error(`${all - ok} of ${all} executions of ${flowId} still not ended after ${stallMs} ms without progress`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every execution of `flowId` started since `since`, read through the search in pages of 1,000 (after the timed window). */
async function readAll(base: string, flowId: string, since: string, total: number): Promise<any[]> {
  const byId = new Map<string, any>();
  for (let page = 1; (page - 1) * 1000 < total; page++) {
    const r = await fetch(`${base}/executions/search?namespace=bench&flowId=${flowId}&startDate=${encodeURIComponent(since)}&size=1000&page=${page}`);
    for (const e of ((await r.json()) as { results: any[] }).results) byId.set(e.id, e);
  }
  if (byId.size !== total) throw new Error(`read ${byId.size} executions of ${flowId} in pages, expected ${total}`);
  return [...byId.values()];
}

interface ThroughputFigures { load: LoadFigures; executions: number; perS: number; p50Ms: number; p99Ms: number; maxMs: number; gc?: GcTotals }

/**
 * autocannon on POST /executions/bench/three for the run's duration, then (untimed) until every created execution
 * ended SUCCESS; executions/s from the first creation to the last end, latency per execution from its record.
 */
async function throughput(base: string, pid: number, settings: LoadSettings, gcTrace?: () => string): Promise<ThroughputFigures> {
  await post(`${base}/flows`, returnFlow('three', 3), 'application/x-yaml');
  const url = `${base}/executions/bench/three`;
  const warmSince = new Date().toISOString();
  await load(url, pid, settings, true, 2); // warm-up: JIT, caches, connections
  await waitAllSuccess(base, 'three', warmSince);
  const since = new Date().toISOString();
  const traced = gcTrace?.().length ?? 0;
  const figures = await load(url, pid, settings, true);
  if (figures.non2xx) throw new Error(`3-task flow: ${figures.non2xx} creations were not answered 2xx`);
  const count = await waitAllSuccess(base, 'three', since);
  // The server's collections from the start of the load until every execution ended (BENCH_GC_TRACE).
  const gc = gcTrace && gcTotals(gcTrace().slice(traced));
  const execs = await readAll(base, 'three', since, count);
  const created = execs.map((e) => Date.parse(e.state.startDate));
  const ended = execs.map((e) => Date.parse(e.state.endDate));
  const latencies = execs.map((e, i) => ended[i]! - created[i]!);
  const span = (Math.max(...ended) - Math.min(...created)) / 1000;
  return { load: figures, executions: count, perS: count / span, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), maxMs: Math.max(...latencies), ...(gc ? { gc } : {}) };
}

/** Median over `runs` of the ms per task of a `tasks`-task sequential Return flow, end to end (record's end - start). */
async function sequential(base: string, tasks: number, runs: number): Promise<number> {
  await post(`${base}/flows`, returnFlow('hundred', tasks), 'application/x-yaml');
  const perTask: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const e = await post(`${base}/executions/bench/hundred?wait=true`, '{}', 'application/json');
    if (e.state.current !== 'SUCCESS') throw new Error(`sequential run ended ${e.state.current}`);
    if (i > 0) perTask.push((Date.parse(e.state.endDate) - Date.parse(e.state.startDate)) / tasks); // run 0 warms up
  }
  return median(perTask);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** The summary rows of one loop kind's runs: the issue's totals, growth of the cost per item, worst /healthz, peak RSS. */
function fanOutRows(kind: LoopKind, runs: FanOutFigures[]): SummaryRow[] {
  if (!runs.length) return [];
  const rows: SummaryRow[] = [];
  for (const [n, bound] of [[10_000, 2000], [100_000, 20_000]] as const) {
    const f = runs.find((r) => r.items === n);
    if (f) rows.push(check(`${kind} ${fmt(n)} items, total`, f.totalMs, '<', bound, ' ms', 0));
  }
  if (runs.length > 1) {
    const items = runs.map((r) => r.items);
    rows.push(check(`${kind} ms/item growth ${fmt(Math.min(...items))} -> ${fmt(Math.max(...items))}`, growth(runs), '<=', 1.5, 'x'));
  }
  rows.push(check(`${kind} worst /healthz meanwhile`, Math.max(...runs.map((r) => r.worstHealthzMs)), '<', 100, ' ms', 0));
  const probes = runs.flatMap((r) => (r.probe ? [r.probe] : []));
  if (probes.length) {
    rows.push({ figure: `${kind} longest event-loop block`, result: `${Math.round(Math.max(...probes.map((p) => p.maxMs)))} ms`, target: '' });
    rows.push({ figure: `${kind} longest GC pause`, result: `${Math.round(Math.max(...probes.map((p) => p.gcMaxMs)))} ms`, target: '' });
  }
  rows.push({ figure: `${kind} peak server RSS`, result: `${Math.max(...runs.map((r) => r.peakRssMb))} MiB`, target: 'bounded' });
  return rows;
}

/**
 * Every loop run, smallest sizes first (so a 100,000-item run's heap does not weigh on the small ones), with the read
 * of the EachParallel execution nearest 10,000 items right after it ran; then the summary rows.
 */
async function fanOuts(base: string, pid: number, dataDir: string, plan: [LoopKind, number][], reads: number, loopDelay: () => Promise<ProbeFigures>): Promise<SummaryRow[]> {
  const order = [...plan].sort((a, b) => a[1] - b[1]);
  const each = plan.filter(([k]) => k === 'EachParallel').map(([, n]) => n);
  const readAt = each.length ? each.reduce((a, b) => (Math.abs(b - 10_000) < Math.abs(a - 10_000) ? b : a)) : undefined;
  const runs: FanOutFigures[] = [];
  const rows: SummaryRow[] = [];
  for (const [kind, n] of order) {
    const f = await fanOut(base, pid, dataDir, kind, n, loopDelay);
    console.log(describeFanOut(f));
    runs.push(f);
    if (kind !== 'EachParallel' || n !== readAt || reads < 1) continue;
    const read = await readExecution(base, f.executionId, reads);
    console.log(`  GET /executions/{id} of ${fmt(f.taskRuns)} task runs: median ${read.medianMs.toFixed(1)} ms over ${reads} reads, ${(read.bytes / 2 ** 20).toFixed(2)} MiB of JSON`);
    const row = check(`read of ${fmt(f.taskRuns)} task runs (median)`, read.medianMs, '<', 100, ' ms', 1);
    // The target is about 10,000 task runs: a smaller record is printed, not judged.
    rows.push(n >= 10_000 ? row : { figure: row.figure, result: row.result, target: '< 100 ms at 10,000' });
  }
  const byKind = (kind: LoopKind) => runs.filter((r) => r.kind === kind);
  const stored = byKind('EachParallel');
  if (stored.length > 1) {
    const perRun = stored.map((f) => ({ items: f.taskRuns, msPerItem: f.storedBytes / f.taskRuns }));
    const span = `${fmt(Math.min(...stored.map((f) => f.taskRuns)))} -> ${fmt(Math.max(...stored.map((f) => f.taskRuns)))}`;
    rows.push(check(`stored bytes per task run growth ${span}`, growth(perRun), '<=', 1.5, 'x'));
  }
  return [...(['EachParallel', 'ForEach c=0', 'ForEach c=1'] as const).flatMap((k) => fanOutRows(k, byKind(k))), ...rows];
}

export async function runOrchestrationBench(): Promise<void> {
  const settings = loadSettings();
  const fanOutSizes = sizes(process.env.BENCH_FANOUT ?? '1000,10000,100000');
  const sequentialForEach = sizes(process.env.BENCH_FOREACH_SEQ ?? '1000,10000,100000');
  const seqRuns = Number(process.env.BENCH_SEQ_RUNS ?? 5);
  const reads = Number(process.env.BENCH_READS ?? 5);
  const rows: SummaryRow[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  console.log(`\n== Orchestration (embedded server process, durable SQLite store; autocannon ${settings.connections} connections, ${settings.durationS} s) ==`);
  try {
    let floor: LoadFigures | undefined;
    if (settings.durationS > 0) {
      floor = await measureFloor(join(dataDir, 'floor.db'), settings);
      console.log(`  floor: bare Koa, one SQLite row per POST     ${describeLoad(floor)}`);
      rows.push({ figure: 'floor (Koa + 1 SQLite row per request)', result: `${fmt(floor.rps)} req/s`, target: '' });
    }
    // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile of the whole group there when it stops (node --cpu-prof).
    const prof = process.env.BENCH_CPU_PROF;
    // BENCH_GC_TRACE=1: the server prints a line per collection (node --trace-gc-nvp); the 3-task figure adds them up.
    // The event-loop probe (loop-delay-probe.ts) reports the server's longest block during each loop run.
    const gcTrace = process.env.BENCH_GC_TRACE === '1';
    // BENCH_NODE_ARGS: more node arguments for the server, split on spaces (e.g. "--max-semi-space-size=32").
    const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const nodeArgs = [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${resolve(prof)}`] : []), ...(gcTrace ? ['--trace-gc-nvp'] : []), ...extra, ...LOOP_DELAY_PROBE_ARGS];
    const { proc, base, output } = await startServerProcess(dataDir, 'inherit', {}, nodeArgs);
    try {
      if (floor) {
        const health = await load(`${base.replace(/\/api\/v1$/, '')}/healthz`, proc.pid!, settings, false);
        console.log(`  load generator: GET /healthz of the server   ${describeLoad(health)}, ${(health.rps / floor.rps).toFixed(1)}x the floor`);
        rows.push({ figure: 'load generator vs GET /healthz', result: `${fmt(health.rps)} req/s`, target: '' });
        const t = await throughput(base, proc.pid!, settings, gcTrace ? output : undefined);
        const ratio = t.perS / floor.rps;
        console.log(`  3-task Return flow, POST /executions/bench/three: creations ${describeLoad(t.load)}`);
        console.log(`    ${t.executions} executions all SUCCESS: ${t.perS.toFixed(0)} executions/s from the first creation to the last end, `
          + `${ratio.toFixed(3)}x the floor`);
        console.log(`    create -> SUCCESS latency (records' end - start): p50 ${t.p50Ms} ms, p99 ${t.p99Ms} ms, max ${t.maxMs} ms`);
        // Less noisy than executions/s on a busy machine: the server's CPU over the load per execution created meanwhile.
        console.log(`    server CPU per execution: ${((t.load.serverCores / t.load.rps) * 1e6).toFixed(0)} µs (floor: ${((floor.serverCores / floor.rps) * 1e6).toFixed(0)} µs per request)`);
        if (t.gc) {
          console.log(`    server allocation per execution: ${(t.gc.allocatedBytes / t.executions / 1024).toFixed(1)} KiB, GC pauses ${((t.gc.pauseMs * 1000) / t.executions).toFixed(0)} µs `
            + `(${t.gc.collections} collections; BENCH_GC_TRACE)`);
        }
        rows.push({ figure: '3-task executions/s (all SUCCESS)', result: `${fmt(t.perS)}/s`, target: '' });
        rows.push(check('3-task executions/s / floor', ratio, '>=', 0.15, 'x', 3));
        rows.push({ figure: '3-task create -> SUCCESS p50 / p99', result: `${t.p50Ms} / ${t.p99Ms} ms`, target: '' });
      }
      if (seqRuns > 0) {
        const perTask = await sequential(base, 100, seqRuns);
        console.log(`  100-task sequential Return flow: ${perTask.toFixed(3)} ms per task end to end (median of ${seqRuns})`);
        rows.push(check('100-task sequential, per task', perTask, '<=', 0.3, ' ms', 3));
      }
      const plan: [LoopKind, number][] = [...fanOutSizes.flatMap((n) => [['EachParallel', n], ['ForEach c=0', n]] as [LoopKind, number][]),
        ...sequentialForEach.map((n) => ['ForEach c=1', n] as [LoopKind, number])];
      if (plan.length) {
        console.log('  fan-out over range(1, N) of a Return task (/healthz probed every 20 ms, RSS sampled; stored = bytes added to the SQLite file):');
        rows.push(...await fanOuts(base, proc.pid!, dataDir, plan, reads, loopDelayReader(proc.pid!, output)));
      }
    } finally {
      await stop(proc);
    }
    console.log(`\n-- Orchestration summary (targets of issue 12; "growth" = cost per item at the largest size / at the smallest, 1 = flat) --`);
    console.log(formatSummary(rows));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
