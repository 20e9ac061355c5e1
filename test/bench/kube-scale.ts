// Scale-out benchmark of cluster mode: executions per second with 1, 2 and 3 operator replicas (partitions), each
// replica in its own process (test/bench/kube-replica.ts) against the Kubernetes API test server of this process.
// Task Jobs are completed by an instant node here (it writes the runner's result file and marks the Job Complete, no
// process per Pod), so the figure is the operators' work per task (Job create, watch, result read, status write), not
// Pod start-up. CPU seconds are printed per side: if this process (API server + node + driver) is the bottleneck, the
// replicas cannot show their gain on this machine. BENCH_KUBE_SCALE_EXECUTIONS (200), BENCH_KUBE_SCALE_TASKS (3
// sequential Return tasks each), BENCH_KUBE_SCALE_REPLICAS ("1,2,3"), OPERATOR_PARTITIONS (16).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BatchV1Api, CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions, type V1Job } from '@kubernetes/client-node';
import pg from 'pg';
import { newExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { isTerminal } from '../../operator/core/types.js';
import { initExpressions } from '../../operator/expr/index.js';
import { writeAttemptResult } from '../../operator/kube/attempt-io.js';
import { ANNOTATIONS } from '../../operator/kube/job-spec.js';
import { partitionsFromEnv } from '../../operator/kube/partitioning.js';
import { openKubeStores } from '../../operator/kube/store/index.js';
import { parseFlow } from '../../operator/model/index.js';
import { S3Storage } from '../../operator/storage/s3.js';
import { PgLogStore } from '../../operator/store/postgres/logs.js';
import { startPostgres, startS3rver } from '../support/services.js';
import { startKubeTestServer } from '../kube/test-server/index.js';
import type { ReplicaConfig } from './kube-replica.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'bench-scale';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
/** CPU time of another process (Linux /proc; utime + stime in clock ticks of 10 ms), 0 where unreadable. */
const procCpuMs = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch { return 0; }
};

interface Replica { proc: ChildProcess; ask(): Promise<{ ms: number; partitions: number[] }> }

function startReplica(cfg: ReplicaConfig): Promise<Replica> {
  const proc = fork(join(ROOT, 'test/bench/kube-replica.ts'), [], {
    execArgv: ['--import', 'tsx'], env: { ...process.env, FLOWPILOT_BENCH_REPLICA: JSON.stringify(cfg) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = () => new Promise<{ ms: number; partitions: number[] }>((done) => {
    const on = (m: { type: string; ms: number; partitions: number[] }) => { if (m.type === 'cpu') { proc.off('message', on); done(m); } };
    proc.on('message', on);
    proc.send({ type: 'cpu' });
  });
  return new Promise((done, fail) => {
    proc.once('message', () => done({ proc, ask }));
    proc.once('exit', (code) => fail(new Error(`replica ${cfg.identity} exited (${code}) before it was ready`)));
  });
}

async function round(replicas: number, o: { executions: number; tasks: number; partitions: number; storageOpts: ConstructorParameters<typeof S3Storage>[0]; logUrl: string; s3Pid?: number }) {
  const server = await startKubeTestServer({});
  const tmp = mkdtempSync(join(tmpdir(), 'kube-scale-'));
  const kubeconfig = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
  const kc = server.kubeConfig();
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  const storage = new S3Storage(o.storageOpts);
  const pool = new pg.Pool({ connectionString: o.logUrl, max: 2 });
  const stores = await openKubeStores({ kc, namespace: NS, logs: new PgLogStore(pool), storage });
  await stores.ready();
  const src = `id: chain\nnamespace: bench\ntasks:\n${Array.from({ length: o.tasks }, (_, i) => `  - id: t${i}\n    type: ai.service.plugin.core.debug.Return\n    format: "step ${i}"`).join('\n')}\n`;
  const { record } = await stores.flows.save(parseFlow(src), src);

  // The instant node: each new Job's result is written as its runner would, then the Job is marked Complete.
  const batch = kc.makeApiClient(BatchV1Api);
  const seen = new Set<string>();
  const node = makeInformer(kc, `/apis/batch/v1/namespaces/${NS}/jobs`, () => batch.listNamespacedJob({ namespace: NS }));
  node.on('add', (job: V1Job) => {
    const name = job.metadata!.name!;
    if (seen.has(name)) return;
    seen.add(name);
    void (async () => {
      await writeAttemptResult(storage, job.metadata!.annotations![ANNOTATIONS.inputUri]!, { state: 'SUCCESS', outputs: { value: 'ok' } });
      const now = new Date();
      await batch.patchNamespacedJobStatus({ name, namespace: NS, body: { status: { startTime: now, completionTime: now, succeeded: 1, active: 0, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: now, lastTransitionTime: now }] } } }, merge);
    })().catch((e) => console.error(`[node] ${name}:`, (e as Error).message));
  });
  await node.start();

  const procs: Replica[] = [];
  try {
    for (let i = 0; i < replicas; i++) {
      procs.push(await startReplica({ kubeconfig, namespace: NS, identity: `replica-${i}`, storage: o.storageOpts, logStoreUrl: o.logUrl, partitions: o.partitions, env: {} }));
    }
    // Every partition held, by every replica (a share each), before the clock starts.
    for (;;) {
      const held = (await Promise.all(procs.map((p) => p.ask()))).map((r) => r.partitions);
      if (held.flat().length === o.partitions && held.every((h) => h.length > 0)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const cpu0 = await Promise.all(procs.map((p) => p.ask()));
    const self0 = cpuMs();
    const s30 = procCpuMs(o.s3Pid);
    const t0 = performance.now();
    const execs = Array.from({ length: o.executions }, () => newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() }));
    const ids = execs.map((e) => e.id);
    for (let i = 0; i < execs.length; i += 20) await Promise.all(execs.slice(i, i + 20).map((e) => stores.executions.create(e)));
    let failed = 0;
    for (;;) {
      let ended = 0;
      failed = 0;
      for (const id of ids) {
        const s = (await stores.executions.get(id))?.execution.state.current;
        if (s && isTerminal(s)) { ended++; if (s !== 'SUCCESS') failed++; }
      }
      if (ended === ids.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu1 = await Promise.all(procs.map((p) => p.ask()));
    return {
      replicas, wall, rate: o.executions / wall, failed,
      operatorCpu: cpu1.reduce((n, c, i) => n + c.ms - cpu0[i]!.ms, 0) / 1000,
      perReplicaCpu: cpu1.map((c, i) => (c.ms - cpu0[i]!.ms) / 1000),
      serverCpu: (cpuMs() - self0) / 1000,
      s3Cpu: (procCpuMs(o.s3Pid) - s30) / 1000,
      shares: cpu1.map((c) => c.partitions.length),
    };
  } finally {
    for (const p of procs) { p.proc.kill('SIGTERM'); }
    await Promise.all(procs.map((p) => new Promise((r) => { if (p.proc.exitCode !== null) r(undefined); else p.proc.once('exit', r); })));
    await node.stop();
    await stores.close();
    await pool.end();
    await storage.close();
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function runKubeScaleBench(): Promise<void> {
  await initExpressions();
  const executions = Number(process.env.BENCH_KUBE_SCALE_EXECUTIONS ?? 200);
  const tasks = Number(process.env.BENCH_KUBE_SCALE_TASKS ?? 3);
  const counts = (process.env.BENCH_KUBE_SCALE_REPLICAS ?? '1,2,3').split(',').map((s) => Number(s.trim())).filter((n) => n > 0);
  const partitions = partitionsFromEnv(process.env);
  const [pgSvc, s3] = await Promise.all([startPostgres(), startS3rver()]);
  const storageOpts = { endpoint: s3.url, bucket: 'flowpilot', accessKey: 'S3RVER', secretKey: 'S3RVER' };
  const init = new S3Storage(storageOpts);
  await init.ensureBucket();
  await init.close();
  console.log(`\n== Cluster mode scale-out (${executions} executions x ${tasks} sequential runnable tasks, ${partitions} partitions; replicas in their own processes; instant node; ${availableParallelism()} CPUs) ==`);
  try {
    const rows = [];
    for (const n of counts) {
      const r = await round(n, { executions, tasks, partitions, storageOpts, logUrl: pgSvc.url, ...(s3.proc.pid ? { s3Pid: s3.proc.pid } : {}) });
      rows.push(r);
      console.log(`${n} replica(s): ${r.rate.toFixed(2)} executions/s (${r.wall.toFixed(1)} s${r.failed ? `, ${r.failed} not SUCCESS` : ''}); `
        + `operator CPU ${r.operatorCpu.toFixed(1)} s [${r.perReplicaCpu.map((c) => c.toFixed(1)).join(' + ')}], partitions held [${r.shares.join(', ')}]; `
        + `API server + node + driver CPU ${r.serverCpu.toFixed(1)} s; S3 server CPU ${r.s3Cpu.toFixed(1)} s`);
    }
    const base = rows[0]!;
    for (const r of rows.slice(1)) console.log(`${r.replicas} vs ${base.replicas}: x${(r.rate / base.rate).toFixed(2)} executions/s`);
    console.log('(one machine runs the API server, the S3 server and every replica: once their CPU seconds add up to the wall time x cores, more replicas cannot help here)');
  } finally {
    await pgSvc.stop();
    await s3.stop();
  }
}
