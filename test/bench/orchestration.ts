// Orchestration benchmarks through the HTTP API of a real embedded server process (durable SQLite store):
// executions/s of a 3-task flow under 16 concurrent clients, and per-task latency of a 100-task sequential flow.
import { mkdtempSync, rmSync } from 'node:fs';
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

async function wideLoop(base: string, width: number): Promise<number> {
  await post(`${base}/flows`, `id: wide
namespace: bench
tasks:
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: "{{ range(1, ${width}) }}"
    tasks:
      - id: r
        type: ai.service.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`, 'application/x-yaml');
  const e = await post(`${base}/executions/bench/wide?wait=true`, '{}', 'application/json');
  if (e.state.current !== 'SUCCESS' || e.taskRunList.length !== width + 1) throw new Error(`wide loop ended ${e.state.current}`);
  return Date.parse(e.state.endDate) - Date.parse(e.state.startDate);
}

export async function runOrchestrationBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const { proc, base } = await startServerProcess(dataDir, 'inherit');
  try {
    const total = Number(process.env.BENCH_EXECUTIONS ?? 2000);
    await throughput(base, 100, 16); // warm-up
    const rate = await throughput(base, total, 16);
    console.log(`orchestration: ${total} executions of a 3-task Return flow, 16 concurrent clients over HTTP`);
    console.log(`  throughput            ${rate.toFixed(1)} executions/s (target >= 100)`);
    console.log(`  vs Kestra 1,500/min   ${(rate / KESTRA_EXEC_PER_S).toFixed(2)}x (Kestra: ${KESTRA_EXEC_PER_S.toFixed(1)}/s, 2-task flow)`);
    const perTask = await sequentialLatency(base, 100, 5);
    console.log(`  100-task sequential   ${perTask.toFixed(2)} ms per task end to end (median of 5; target < 10 ms)`);
    const wide = await wideLoop(base, 1000);
    console.log(`  1,000-branch EachParallel of Return tasks: ${wide} ms start to end (${(wide / 1000).toFixed(2)} ms per branch)`);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
