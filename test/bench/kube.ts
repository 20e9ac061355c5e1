// Cluster-mode benchmark against the Kubernetes API test server (test/kube/cluster.ts): Kubernetes API writes per
// runnable task (the operator's, apart from those a node makes for Pods and Job status; the execution's start write
// counted apart) and the latency from a Job's completion to the creation of the next task's Job. Printed beside the
// issue's targets (≤ 2 writes per runnable task, median < 20 ms), never asserted.
// Also the task runner's start-up as the image runs it (dist/, its entry point bundled) against the same code compiled
// file for file (the build before the bundle) and compiling it at start (tsx).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatchV1Api, makeInformer, type V1Job } from '@kubernetes/client-node';
import { buildDist } from '../../scripts/build.mjs';
import { CLUSTER_NS, startCluster } from '../kube/cluster.js';

const ROOT = resolve(import.meta.dirname, '../..');

const TASKS = Number(process.env.BENCH_KUBE_TASKS ?? 12);

const flow = `id: chain
namespace: bench
tasks:
${Array.from({ length: TASKS }, (_, i) => `  - id: t${i}\n    type: ai.service.plugin.core.debug.Return\n    format: "step ${i}"`).join('\n')}
`;

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? NaN; };

/** Wall time of one runner start until it exits (no attempt configured: it loads everything, then stops). */
function runnerStart(args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH }, stdio: 'ignore' });
    child.on('error', fail);
    child.on('exit', () => done(performance.now() - t0));
  });
}

async function runRunnerStartBench(): Promise<void> {
  const rounds = Number(process.env.BENCH_RUNNER_ROUNDS ?? 5);
  // under ROOT, so that the app root and node_modules are found as from dist/
  const { outDir: fileForFile } = await buildDist(join(ROOT, 'node_modules/.cache/flowpilot-bench-dist'), { bundle: false });
  const compiled: number[] = [], files: number[] = [], tsx: number[] = [];
  await runnerStart(['--import', 'tsx', join(ROOT, 'runner-image/runner.ts')]); // warm tsx's cache, as a long-lived node would have it
  for (let i = 0; i < rounds; i++) {
    compiled.push(await runnerStart([join(ROOT, 'dist/runner-image/runner.js')]));
    files.push(await runnerStart([join(fileForFile, 'runner-image/runner.js')]));
    tsx.push(await runnerStart(['--import', 'tsx', join(ROOT, 'runner-image/runner.ts')]));
  }
  rmSync(fileForFile, { recursive: true, force: true });
  const m = median(compiled);
  console.log(`\n== Task runner start-up (load everything, exit; median of ${rounds}) ==`);
  console.log(`bundled (node dist/runner-image/runner.js, what the image runs): ${m.toFixed(0)} ms; compiled file for file: ${median(files).toFixed(0)} ms (${(median(files) / m).toFixed(2)}x); through tsx: ${median(tsx).toFixed(0)} ms (${(median(tsx) / m).toFixed(2)}x)`);
}

export async function runKubeBench(): Promise<void> {
  await buildDist(); // task Pods run the compiled runner
  await runRunnerStartBench();
  const c = await startCluster({ replicas: 1 });
  try {
    await c.operators[0]!.whenLeading();
    const batch = c.kc.makeApiClient(BatchV1Api);
    const created = new Map<string, number>();
    const completed = new Map<string, number>();
    /** Status writes before the first Job: the execution's start (RUNNING and its first task run). */
    let startWrites: number | undefined;
    const informer = makeInformer(c.kc, `/apis/batch/v1/namespaces/${CLUSTER_NS}/jobs`, () => batch.listNamespacedJob({ namespace: CLUSTER_NS }));
    const seen = (j: V1Job) => {
      const name = j.metadata!.name!;
      if (!created.has(name)) created.set(name, performance.now());
      startWrites ??= c.server.stats.writes['PUT executions/status'] ?? 0;
      if (!completed.has(name) && j.status?.conditions?.some((x) => x.type === 'Complete' && x.status === 'True')) completed.set(name, performance.now());
    };
    informer.on('add', seen);
    informer.on('update', seen);
    await informer.start();
    const post = (path: string, body?: string, type = 'application/json') => fetch(`${c.base}${path}`, { method: 'POST', headers: { 'Content-Type': type }, ...(body ? { body } : {}) }).then((r) => r.json() as Promise<any>);
    await post('/flows', flow, 'application/x-yaml');
    c.server.resetStats();
    const t0 = performance.now();
    const exec = await post('/executions/bench/chain');
    let final: any;
    for (;;) {
      final = await fetch(`${c.base}/executions/${exec.id}`).then((r) => r.json());
      if (['SUCCESS', 'FAILED'].includes(final.state.current)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const wall = performance.now() - t0;
    const writes = { ...c.server.stats.writes };
    const leaseWrites = Object.entries(writes).filter(([k]) => k.includes('leases')).reduce((n, [, v]) => n + v, 0);
    await informer.stop();
    const node = (k: string) => /\bpods\b|jobs\/status|leases/.test(k);
    // The execution's writes (the API's create apart); the rest (the Flow's status and trigger state, written by the
    // leader after the Flow was saved, at times only once the run began) is shown apart.
    const ofExecution = (k: string) => !node(k) && k !== 'POST executions' && /\b(executions|jobs)\b/.test(k);
    const count = (f: (k: string) => boolean) => Object.entries(writes).filter(([k]) => f(k)).reduce((n, [, v]) => n + v, 0);
    const operatorWrites = count(ofExecution);
    const perTask = (operatorWrites - (startWrites ?? 0)) / TASKS;
    const other = Object.entries(writes).filter(([k]) => !node(k) && !ofExecution(k) && k !== 'POST executions');
    // Job order = task order: the next Job's creation after the previous Job's completion.
    const runs = (final.taskRunList as any[]).map((r) => r.id as string);
    const jobs = await batch.listNamespacedJob({ namespace: CLUSTER_NS });
    const jobOf = new Map(jobs.items.map((j) => [j.metadata!.labels!['flowpilot.io/task-run-id']!, j.metadata!.name!]));
    const gaps: number[] = [];
    for (let i = 1; i < runs.length; i++) {
      const prev = jobOf.get(runs[i - 1]!), next = jobOf.get(runs[i]!);
      const done = prev ? completed.get(prev) : undefined, start = next ? created.get(next) : undefined;
      if (done !== undefined && start !== undefined) gaps.push(start - done);
    }
    console.log(`\n== Cluster mode (Kubernetes API test server, simulated kubelet, ${TASKS} sequential runnable tasks) ==`);
    console.log(`execution ${final.state.current} in ${(wall / 1000).toFixed(1)} s (task Pods are local node processes: their start-up dominates)`);
    console.log(`operator writes per runnable task: ${perTask.toFixed(2)} (target <= 2), plus ${startWrites ?? 0} per execution (its start); ${(operatorWrites / TASKS).toFixed(2)} per task all included  [${Object.entries(writes).filter(([k]) => ofExecution(k) || k === 'POST executions').map(([k, v]) => `${k}: ${v}`).join(', ')}]`);
    if (other.length) console.log(`other operator writes (the Flow's, not the execution's): ${other.map(([k, v]) => `${k}: ${v}`).join(', ')}`);
    console.log(`node writes (Pods, Job status; a real kubelet and Job controller make these): ${Object.entries(writes).filter(([k]) => node(k) && !k.includes('leases')).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
    console.log(`lease renewals (leader and partition Leases, whatever the load): ${(leaseWrites / (wall / 1000)).toFixed(1)} writes/s`);
    console.log(`Job completed -> next Job created: median ${median(gaps).toFixed(1)} ms, max ${Math.max(...gaps).toFixed(1)} ms over ${gaps.length} hand-overs (target < 20 ms)`);
  } finally {
    await c.close();
  }
}
