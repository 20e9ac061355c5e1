// Bench preload for the server process (`node --import tsx --import ./test/bench/loop-delay-probe.ts`): records the
// event loop's delays (perf_hooks.monitorEventLoopDelay, 10 ms resolution) and the GC pauses (perf_hooks 'gc'
// entries: the longest, their sum and count, the highest heap used seen as they are reported, and as major ones are) and, on SIGUSR2, prints
// them since the previous signal as one line (probe-line.ts) on stdout, then starts over. The bench reads that line.
// PROBE_HEAP_SNAPSHOT_MIB=<n>: the first time the heap used exceeds n MiB as a collection is reported, the probe writes
// a heap snapshot (v8.writeHeapSnapshot, into the temporary directory) and prints its file name.
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatProbeLine } from './probe-line.js';

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
const fresh = () => ({ maxMs: 0, maxKind: '-', totalMs: 0, count: 0, heapPeak: 0, heapLive: 0 });
let gc = fresh();
/** The collection the probe forces before printing (with --expose-gc) is not the server's: entries inside it are left out. */
let forced = { start: -1, end: -1 };
let snapshotAt = Number(process.env.PROBE_HEAP_SNAPSHOT_MIB ?? Infinity) * 2 ** 20;
new PerformanceObserver((list) => {
  const used = getHeapStatistics().used_heap_size;
  for (const e of list.getEntries()) {
    if (e.startTime >= forced.start && e.startTime <= forced.end) continue;
    gc.count++;
    gc.totalMs += e.duration;
    const kind = KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
    if (e.duration > gc.maxMs) { gc.maxMs = e.duration; gc.maxKind = kind; }
    if (kind === 'major') gc.heapLive = Math.max(gc.heapLive, used);
  }
  gc.heapPeak = Math.max(gc.heapPeak, used);
  if (used > snapshotAt) {
    snapshotAt = Infinity;
    process.stdout.write(`[loop-delay] heap snapshot at ${(used / 2 ** 20).toFixed(0)} MiB: ${writeHeapSnapshot(join(tmpdir(), `heap-${process.pid}-${Date.now()}.heapsnapshot`))}\n`);
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  const collect = (globalThis as { gc?: () => void }).gc; // with --expose-gc: the heap still reachable, not what awaits collection
  if (collect) { forced = { start: performance.now(), end: Infinity }; collect(); forced.end = performance.now(); }
  process.stdout.write(`${formatProbeLine({
    maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, heapMb: process.memoryUsage().heapUsed / 2 ** 20,
    gcMaxMs: gc.maxMs, gcMaxKind: gc.maxKind, gcTotalMs: gc.totalMs, gcCount: gc.count, heapPeakMb: gc.heapPeak / 2 ** 20, heapLiveMb: gc.heapLive / 2 ** 20,
  })}\n`);
  histogram.reset();
  gc = fresh();
});

// PROBE_BLOCK_TRACE_MS=<n>: every event-loop block of more than n ms (a 5 ms timer firing that late) is printed on stderr as
// `[block] <end, µs of the monotonic clock> <ms>`: the clock of V8's CPU profiles, so a block can be matched to the
// profile's samples (BENCH_CPU_PROF) to say what ran.
const traceMs = Number(process.env.PROBE_BLOCK_TRACE_MS ?? 0);
if (traceMs > 0) {
  let last = process.hrtime.bigint();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const late = Number(now - last) / 1e6 - 5;
    if (late > traceMs) process.stderr.write(`[block] ${now / 1000n} ${late.toFixed(1)}\n`);
    last = now;
  }, 5).unref();
}
