// The line the server's event-loop probe (loop-delay-probe.ts) prints on SIGUSR2 and the bench reads back (fanout.ts):
// one definition of its fields for both sides. Pure; tested in probe-line.test.ts.

/** What the probe saw since its previous report: event-loop delays, heap, and the collections (perf_hooks 'gc' entries). */
export interface ProbeFigures {
  /** Longest event-loop delay (monitorEventLoopDelay, 10 ms resolution), ms. */
  maxMs: number;
  p99Ms: number;
  /** Heap used when the report was printed (after a full collection with --expose-gc), MiB. */
  heapMb: number;
  /** Longest single GC pause, ms, and its kind (`minor`, `major`, `incremental`, `weakcb`; `-` when none). */
  gcMaxMs: number;
  gcMaxKind: string;
  /** Sum of every GC pause and their count. */
  gcTotalMs: number;
  gcCount: number;
  /** Highest heap used seen as the collections were reported (garbage not collected yet included), MiB. */
  heapPeakMb: number;
  /** Highest heap used seen as a major collection was reported: about the live data at its largest, MiB. */
  heapLiveMb: number;
}

export function formatProbeLine(f: ProbeFigures): string {
  return `[loop-delay] max ${f.maxMs.toFixed(1)} p99 ${f.p99Ms.toFixed(1)} heap ${f.heapMb.toFixed(0)} gc-max ${f.gcMaxMs.toFixed(1)} ${f.gcMaxKind}`
    + ` gc-total ${f.gcTotalMs.toFixed(1)} gc-count ${f.gcCount} heap-peak ${f.heapPeakMb.toFixed(0)} heap-live ${f.heapLiveMb.toFixed(0)}`;
}

const LINE = /\[loop-delay\] max ([\d.]+) p99 ([\d.]+) heap (\d+) gc-max ([\d.]+) (\S+) gc-total ([\d.]+) gc-count (\d+) heap-peak (\d+) heap-live (\d+)/g;

/** Every probe line in `text` (a process's output), in order. */
export function parseProbeLines(text: string): ProbeFigures[] {
  return [...text.matchAll(LINE)].map((m) => ({
    maxMs: Number(m[1]), p99Ms: Number(m[2]), heapMb: Number(m[3]), gcMaxMs: Number(m[4]), gcMaxKind: m[5]!,
    gcTotalMs: Number(m[6]), gcCount: Number(m[7]), heapPeakMb: Number(m[8]), heapLiveMb: Number(m[9]),
  }));
}
