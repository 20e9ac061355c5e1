// Bench preload for the server process (`node --import tsx --import ./test/bench/loop-delay-probe.ts`): records the
// event loop's delays (perf_hooks.monitorEventLoopDelay, 10 ms resolution) and, on SIGUSR2, prints the longest delay
// since the previous signal as `[loop-delay] max <ms> p99 <ms> heap <MiB used>` on stdout, then starts over. The bench reads that line.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
process.on('SIGUSR2', () => {
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  (globalThis as { gc?: () => void }).gc?.(); // with --expose-gc: the heap still reachable, not what awaits collection
  const heap = (process.memoryUsage().heapUsed / 2 ** 20).toFixed(0);
  process.stdout.write(`[loop-delay] max ${ms(histogram.max)} p99 ${ms(histogram.percentile(99))} heap ${heap}\n`);
  histogram.reset();
});
