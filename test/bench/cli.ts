// Start-up figures of the CLI (`BENCH=cli npm run bench`): wall time and peak RSS of `--help`, `kv list` against a
// real API (the Koa app over SQLite, in this process) and `flow validate` of a folder (examples/), each run as a child
// process the way a user runs it: from the build (cli/dist/, scripts/build-cli.mjs) and from the sources through tsx
// (FLOWPILOT_CLI_SOURCE=1), beside the floor of an empty `node -e 0`. BASELINE=<another checkout> also runs that
// checkout's bin/flowpilot.mjs (e.g. the main branch before the build). Variants alternate
// within each round so machine load affects them alike; BENCH_CLI_ROUNDS rounds (default 7), medians printed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildCli, currentBuild } from '../../scripts/build-cli.mjs';
import { createFlow, simpleFlow, startTestApi } from '../api/helpers.js';
import { median } from './stats.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

/** `bin` '': the floor, an empty `node -e 0` (measured beside --help). */
interface Variant { label: string; bin: string; env: NodeJS.ProcessEnv }

/** Runs `node bin ...args`; resolves with its wall time (ms) and peak RSS (MB, reported by the child at exit). */
function runOnce(v: Variant, args: string[], dir: string): Promise<{ ms: number; rssMb: number; code: number }> {
  const rssFile = join(dir, `rss-${process.hrtime.bigint()}`);
  const hook = `data:text/javascript,${encodeURIComponent(`import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));`)}`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLOWPILOT_')));
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--import', hook, ...(v.bin ? [v.bin, ...args] : ['-e', '0'])], { cwd: ROOT, env: { ...env, ...v.env }, stdio: 'ignore' });
  return new Promise((res, rej) => {
    child.once('error', rej);
    child.once('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      let rssMb = NaN;
      try { rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024; } catch { /* killed before exit: not measured */ }
      res({ ms, rssMb, code: code ?? -1 });
    });
  });
}

export async function runCliBench(): Promise<void> {
  if (!currentBuild()) await buildCli();
  const rounds = Number(process.env.BENCH_CLI_ROUNDS ?? 7);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_CLI_ROUNDS must be a positive integer, not '${process.env.BENCH_CLI_ROUNDS}'`);
  const bin = join(ROOT, 'bin/flowpilot.mjs');
  const variants: Variant[] = [
    { label: 'build', bin, env: {} },
    { label: 'source', bin, env: { FLOWPILOT_CLI_SOURCE: '1' } },
  ];
  if (process.env.BASELINE) variants.push({ label: 'baseline', bin: resolve(process.env.BASELINE, 'bin/flowpilot.mjs'), env: {} });
  const dir = mkdtempSync(join(tmpdir(), 'flowpilot-cli-bench-'));
  const api = await startTestApi();
  try {
    await createFlow(api, simpleFlow('bench.cli', 'hello'));
    const commands: [string, string[]][] = [
      ['--help', ['--help']],
      ['kv list', ['kv', 'list', 'bench.cli', '--server', api.url]],
      ['flow validate examples/', ['flow', 'validate', join(ROOT, 'examples')]],
    ];
    console.log(`cli: start-up of bin/flowpilot.mjs, ${rounds} rounds, medians (variants: ${variants.map((v) => v.label).join(', ')}${process.env.BASELINE ? '' : '; BASELINE=<another checkout> adds its bin'})`);
    for (const [name, args] of commands) {
      const these = name === '--help' ? [...variants, { label: 'node -e 0', bin: '', env: {} }] : variants;
      const samples = new Map(these.map((v) => [v.label, { ms: [] as number[], rss: [] as number[] }]));
      for (let r = 0; r < rounds; r++) {
        for (const v of these) {
          const s = await runOnce(v, args, dir);
          if (s.code !== 0) throw new Error(`${v.label}: flowpilot ${args.join(' ')} exited ${s.code}`);
          samples.get(v.label)!.ms.push(s.ms);
          samples.get(v.label)!.rss.push(s.rssMb);
        }
      }
      const build = median(samples.get('build')!.ms);
      for (const [label, s] of samples) {
        const ms = median(s.ms);
        console.log(`${name.padEnd(24)} ${label.padEnd(9)} ${ms.toFixed(0).padStart(6)} ms  ${median(s.rss).toFixed(0).padStart(4)} MB RSS${label === 'build' ? '' : `  (${(ms / build).toFixed(1)}x the build's time)`}`);
      }
    }
  } finally {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
