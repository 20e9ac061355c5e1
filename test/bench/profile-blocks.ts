// What ran during each long event-loop block of the server: the block trace of its probe (PROBE_BLOCK_TRACE_MS,
// loop-delay-probe.ts) matched to its CPU profile (BENCH_CPU_PROF) by time, both on the monotonic clock. Prints, per
// block of at least `min` ms, the functions with the most time in it (inclusive, generic frames left out).
//
//   PROBE_BLOCK_TRACE_MS=60 BENCH_CPU_PROF=/tmp/prof BENCH=orchestration ... npm run bench 2> blocks.txt
//   npx tsx test/bench/profile-blocks.ts /tmp/prof/<the larger .cpuprofile> blocks.txt 100
//
// The profiler samples about once a millisecond and slows the server by a third or so: read the figures as shares.
import { readFileSync } from 'node:fs';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] }

const GENERIC = /^\((root|program|idle)\)|^(runMicrotasks|processTicksAndRejections|processImmediate|runNextTicks|listOnTimeout|processTimers|\(anon\))@/;

export function blockReport(profile: Profile, trace: string, minMs: number, top = 12): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anon)'}@${n.callFrame.url.split('/').pop()}`;
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const blocks = [...trace.matchAll(/^\[block\] (\d+) ([\d.]+)$/gm)].map((m) => ({ end: Number(m[1]), ms: Number(m[2]) })).filter((b) => b.ms >= minMs);
  return blocks.map(({ end, ms }) => {
    const from = end - (ms + 5) * 1000; // the probe's 5 ms timer: the block began at most its period before
    const inclusive = new Map<string, number>();
    for (let i = 0; i < times.length; i++) {
      if (times[i]! < from || times[i]! > end) continue;
      const dt = (times[i + 1] ?? times[i]!) - times[i]!;
      const seen = new Set<string>();
      for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
        const k = name(byId.get(id)!);
        if (!seen.has(k)) { seen.add(k); inclusive.set(k, (inclusive.get(k) ?? 0) + dt); }
      }
    }
    const shares = [...inclusive].filter(([k]) => !GENERIC.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top);
    return `+${((end - profile.startTime) / 1e6).toFixed(2)} s, ${ms.toFixed(0)} ms: ${shares.map(([k, v]) => `${k} ${(v / 1000).toFixed(0)}`).join(', ')}`;
  });
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [profileFile, traceFile, min = '100'] = process.argv.slice(2);
  if (!profileFile || !traceFile) {
    console.error('usage: npx tsx test/bench/profile-blocks.ts <server .cpuprofile> <bench output with [block] lines> [min ms]');
    process.exit(2);
  }
  const lines = blockReport(JSON.parse(readFileSync(profileFile, 'utf8')) as Profile, readFileSync(traceFile, 'utf8'), Number(min));
  console.log(lines.length ? lines.join('\n') : `no block of ${min} ms or more in ${traceFile}`);
}
