// The probe's report line (probe-line.ts) read back as written, and the probe itself (loop-delay-probe.ts) loaded into
// a node process that allocates: it reports its collections beside the event-loop delay. No timing is asserted.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { formatProbeLine, parseProbeLines, type ProbeFigures } from './probe-line.js';
import { LOOP_DELAY_PROBE_ARGS } from './fanout.js';

const figures: ProbeFigures = {
  maxMs: 252.4, p99Ms: 30, heapMb: 59, gcMaxMs: 153.2, gcMaxKind: 'minor', gcTotalMs: 5158.7, gcCount: 185, heapPeakMb: 563, heapLiveMb: 301,
};

describe('probe line', () => {
  it('reads back what it wrote, to its printed precision', () => {
    expect(parseProbeLines(`noise\n${formatProbeLine(figures)}\nmore noise\n`)).toEqual([figures]);
  });

  it('finds every line in order among other output, none in output without one', () => {
    const second = { ...figures, maxMs: 1, gcCount: 0, gcMaxMs: 0, gcMaxKind: '-', gcTotalMs: 0 };
    expect(parseProbeLines(`${formatProbeLine(figures)}\n[server] listening\n${formatProbeLine(second)}\n`)).toEqual([figures, second]);
    expect(parseProbeLines('[loop-delay] max 1.0 p99 1.0 heap 3\n')).toEqual([]);
  });
});

describe('loop-delay probe in a process', () => {
  it('reports the collections of a process that allocates, on SIGUSR2', async () => {
    // Allocates short-lived and retained objects until told to stop, so scavenges and a major collection happen.
    const script = `const keep = []; let n = 0;
      const t = setInterval(() => { for (let i = 0; i < 50000; i++) { const o = { i, s: 'x' + i }; if (i % 10 === 0) keep.push(o); } if (++n === 40) console.log('allocated'); }, 1);
      process.on('SIGTERM', () => { clearInterval(t); process.exit(0); });`;
    const proc = spawn(process.execPath, ['--expose-gc', ...LOOP_DELAY_PROBE_ARGS, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout!.on('data', (d) => { out += d; });
    const until = async (ok: () => boolean) => { while (!ok()) await new Promise((r) => setTimeout(r, 20)); };
    try {
      await until(() => out.includes('allocated'));
      process.kill(proc.pid!, 'SIGUSR2');
      await until(() => parseProbeLines(out).length === 1);
      const [f] = parseProbeLines(out);
      expect(f!.gcCount).toBeGreaterThan(0);
      expect(['minor', 'major', 'incremental', 'weakcb']).toContain(f!.gcMaxKind);
      expect(f!.gcMaxMs).toBeLessThanOrEqual(f!.gcTotalMs);
      expect(f!.heapPeakMb).toBeGreaterThan(0);
    } finally {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
  });
});
