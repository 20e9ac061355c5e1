// Large-execution benchmark (issue 12): loops of n Return children through the HTTP API of a real embedded server
// process, sequential (ForEach with its default concurrencyLimit 1, EachSequential) and parallel (EachParallel,
// ForEach concurrencyLimit 0): ms per item, worst /healthz latency meanwhile, peak RSS, the time to read the finished
// execution back through the API and the size of the store file. Figures only, never asserted.
// Run: `npx tsx test/bench/big-executions.ts` with BIG_SEQ="500,1000,2000" BIG_PAR="1000,10000,100000"
// (BIG_KINDS="ForEach,EachSequential,EachParallel,ForEach0" selects loop kinds; SERVER_NODE_ARGS are node's arguments for
// the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", which NODE_OPTIONS does not take; BIG_ROOT: the checkout whose
// server runs, for A/B runs of two versions with the same script).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const KINDS: Record<string, { type: string; extra: string; sequential: boolean }> = {
  ForEach: { type: 'io.kestra.plugin.core.flow.ForEach', extra: '', sequential: true },
  EachSequential: { type: 'io.kestra.plugin.core.flow.EachSequential', extra: '', sequential: true },
  EachParallel: { type: 'io.kestra.plugin.core.flow.EachParallel', extra: '', sequential: false },
  ForEach0: { type: 'io.kestra.plugin.core.flow.ForEach', extra: '\n    concurrencyLimit: 0', sequential: false },
};

const loopFlow = (id: string, kind: string, n: number) => {
  const k = KINDS[kind]!;
  const key = kind.startsWith('ForEach') ? 'values' : 'value';
  return `id: ${id}
namespace: bench
tasks:
  - id: each
    type: ${k.type}
    ${key}: "{{ range(1, ${n}) }}"${k.extra}
    tasks:
      - id: r
        type: io.kestra.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`;
};

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

async function post(url: string, body: string, type: string): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': type }, body });
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

const ENDED = ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'];

async function loop(base: string, pid: number, dataDir: string, kind: string, n: number): Promise<void> {
  const id = `${kind.toLowerCase()}${n}`;
  await post(`${base}/flows`, loopFlow(id, kind, n), 'application/x-yaml');
  const health = `${base.replace(/\/api\/v1$/, '')}/healthz`;
  let done = false;
  let worst = 0;
  let peak = rssOf(pid);
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid)); }, 20);
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      try { await (await fetch(health)).arrayBuffer(); } catch { continue; } finally { worst = Math.max(worst, performance.now() - t0); }
      await new Promise((res) => setTimeout(res, 20));
    }
  })();
  let e: any;
  try {
    e = await post(`${base}/executions/bench/${id}`, '{}', 'application/json');
    for (;;) {
      await new Promise((res) => setTimeout(res, 1000));
      // polled once a second (the figures come from the record's dates): reading a large record is work for the server
      // A keep-alive connection the server closed meanwhile fails once (ECONNRESET): asked again a second later.
      const s = await fetch(`${base}/executions/search?flowId=${id}&namespace=bench`).then((r) => r.json(), () => undefined);
      if (ENDED.includes(s?.results?.[0]?.state?.current)) break;
    }
  } finally {
    done = true;
    clearInterval(sampler);
    await poller;
  }
  const t0 = performance.now();
  const text = await (await fetch(`${base}/executions/${e.id}`)).text();
  const readMs = performance.now() - t0;
  e = JSON.parse(text);
  if (e.state.current !== 'SUCCESS' || e.taskRunList.length !== n + 1) {
    throw new Error(`${kind} ${n}: ended ${e.state.current} with ${e.taskRunList.length} task runs`);
  }
  const totalMs = Date.parse(e.state.endDate) - Date.parse(e.state.startDate);
  const db = statSync(join(dataDir, 'store.db')).size + (statSync(join(dataDir, 'store.db-wal'), { throwIfNoEntry: false })?.size ?? 0);
  console.log(`  ${kind.padEnd(14)} ${String(n).padStart(7)} items: ${String(totalMs).padStart(7)} ms, ${(totalMs / n).toFixed(3)} ms/item, `
    + `worst /healthz ${Math.round(worst)} ms, peak RSS ${Math.round(peak / 2 ** 20)} MiB, GET ${Math.round(readMs)} ms `
    + `(${(text.length / 2 ** 20).toFixed(1)} MiB), store ${(db / 2 ** 20).toFixed(1)} MiB`);
}

const sizes = (v: string | undefined, d: string) => (v ?? d).split(',').map(Number).filter((x) => x > 0);

/** The embedded server (operator/main.ts) on a free port, started with `nodeArgs`; resolves once it listens. */
function startServer(dataDir: string, nodeArgs: string[]): Promise<{ proc: ReturnType<typeof spawn>; base: string }> {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'operator/main.ts'], {
    cwd: process.env.BIG_ROOT ?? new URL('../..', import.meta.url).pathname,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SAMPLE_FLOW: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((res, rej) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) res({ proc, base: `http://127.0.0.1:${m[1]}/api/v1` });
    });
    proc.once('exit', (code) => rej(new Error(`server exited ${code}: ${out}`)));
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'bench-big-'));
const { proc, base } = await startServer(dataDir, (process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean));
try {
  const kinds = (process.env.BIG_KINDS ?? 'ForEach,EachSequential,EachParallel,ForEach0').split(',');
  for (const kind of kinds) {
    const list = KINDS[kind]!.sequential ? sizes(process.env.BIG_SEQ, '500,1000,2000') : sizes(process.env.BIG_PAR, '1000,10000');
    for (const n of list) await loop(base, proc.pid!, dataDir, kind, n);
  }
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
