// Operator memory in cluster mode (printed by `BENCH=kube npm run bench`, or alone with BENCH=kube-memory): the
// operator's heap and RSS with no execution, after BENCH_KUBE_MEMORY_EXECUTIONS (default 10,000) one-task executions
// have run, and after the finished task Jobs went (their TTL), with the bytes per execution. The API test server, a
// stand-in node (finishes each Job at once: no task process) and the load generator run in a child process
// (kube-memory-node.ts), so this process holds the operator alone: stores, caches, controller, launcher, triggers.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import { initExpressions } from '../../operator/expr/index.js';
import { leanJob, leanPod } from '../../operator/kube/informer.js';
import { startOperator, type RunningOperator } from '../../operator/kube/operator.js';
import { createOperatorMetrics } from '../../operator/metrics.js';
import { LocalStorage } from '../../operator/storage/local.js';
import { openDatabase, SqliteLogStore } from '../../operator/store/sqlite/index.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { BENCH_FLOW, BENCH_NS, type FromNode, type ToNode } from './kube-memory-node.js';

const COUNT = Number(process.env.BENCH_KUBE_MEMORY_EXECUTIONS ?? 10_000);
const IN_FLIGHT = Number(process.env.BENCH_KUBE_MEMORY_IN_FLIGHT ?? 200);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Heap and RSS after full collections (twice: weak references and finalizers free more on the second). */
async function measure(): Promise<{ heap: number; rss: number }> {
  for (let i = 0; i < 3; i++) { gc(); await new Promise((r) => setTimeout(r, 50)); }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 600_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`memory bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function nodeProcess(): { child: ChildProcess; next<T extends FromNode['type']>(type: T): Promise<Extract<FromNode, { type: T }>>; send(m: ToNode): void } {
  const child = fork(join(import.meta.dirname, 'kube-memory-node.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<string, (m: FromNode) => void>();
  child.on('message', (m: FromNode) => { waiting.get(m.type)?.(m); waiting.delete(m.type); });
  return {
    child,
    next: (type) => new Promise((resolve, reject) => {
      waiting.set(type, resolve as (m: FromNode) => void);
      child.once('exit', (code) => reject(new Error(`the bench cluster process exited (${code}) before '${type}'`)));
    }),
    send: (m) => child.send(m),
  };
}

export async function runKubeMemoryBench(): Promise<void> {
  await initExpressions();
  const node = nodeProcess();
  const { url, storageDir } = await node.next('ready');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: url, skipTLSVerify: true }], users: [{ name: 'bench', token: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench', namespace: BENCH_NS }], currentContext: 'bench',
  });
  const tmp = tempDir('bench-memory-logs-');
  const db = openDatabase(join(tmp.dir, 'logs.db'));
  const logs = new SqliteLogStore(db);
  let op: RunningOperator | undefined;
  try {
    op = await startOperator({
      kc, namespace: BENCH_NS, identity: 'bench', storage: new LocalStorage(storageDir), logs,
      launcher: { runnerImage: 'flowpilot-runner:bench' }, env: { PATH: process.env.PATH }, metrics: createOperatorMetrics(),
      onError: (err, where) => console.error(`[bench operator] ${where}:`, (err as Error)?.message ?? err),
    });
    await op.whenLeading();
    const operator = op;
    await until(async () => Boolean(await operator.stores.flows.get(BENCH_FLOW.namespace, BENCH_FLOW.id)), 'the bench flow');
    const base = await measure();

    const t0 = performance.now();
    node.send({ type: 'run', count: COUNT, inFlight: IN_FLIGHT });
    const ran = await node.next('ran');
    const idle = () => (operator.controller()?.queueDepth ?? 0) === 0 && operator.stores.executions.cache.list().filter((o) => o.status?.endDate).length >= COUNT;
    await until(idle, 'the operator to settle');
    const wall = performance.now() - t0;
    const launcher = operator.launcher()!;
    const during = launcher.tracked;
    const cachedExecutions = operator.stores.executions.cache.list().length;
    const after = await measure();

    node.send({ type: 'expire' });
    const expired = await node.next('expired');
    await until(() => launcher.tracked.jobs === 0 && launcher.tracked.pods === 0, 'the launcher caches to drop the deleted Jobs and Pods');
    const gone = await measure();

    const per = (m: { heap: number; rss: number }) => `${((m.heap - base.heap) / COUNT).toFixed(0)} B heap, ${((m.rss - base.rss) / COUNT).toFixed(0)} B RSS`;
    console.log(`\n== Operator memory, cluster mode (API test server + stand-in node in a child process; ${COUNT} one-task executions, ${IN_FLIGHT} in flight) ==`);
    console.log(`ran in ${(wall / 1000).toFixed(1)} s (${(COUNT / (wall / 1000)).toFixed(0)} executions/s); states ${JSON.stringify(ran.states)}`);
    console.log(`baseline (flow applied, no execution): heap ${MB(base.heap)}, RSS ${MB(base.rss)}`);
    console.log(`after ${COUNT} executions (their Execution resources live, Jobs/Pods within TTL): heap ${MB(after.heap)}, RSS ${MB(after.rss)}  -> per execution: ${per(after)}`);
    console.log(`  operator caches: ${cachedExecutions} Executions, ${during.jobs} Jobs, ${during.pods} Pods; launcher maps: ${during.attempts} attempts, ${during.owners} owner UIDs (bounded: ended executions are forgotten)`);
    const bytes = (o: unknown) => (o ? `${Buffer.byteLength(JSON.stringify(o))} B` : '?');
    console.log(`  JSON size of a task Job as served ${bytes(ran.sampleJob)}, as cached ${bytes(ran.sampleJob && leanJob(ran.sampleJob))}; of its Pod ${bytes(ran.samplePod)}, as cached ${bytes(ran.samplePod && leanPod(ran.samplePod))}`);
    console.log(`after the Jobs' TTL (${expired.jobs} Jobs, ${expired.pods} Pods left in the cluster): heap ${MB(gone.heap)}, RSS ${MB(gone.rss)}  -> per execution: ${per(gone)} (the Execution resources remain until archived)`);
  } finally {
    await op?.stop().catch(() => undefined);
    node.send({ type: 'stop' });
    await new Promise((r) => node.child.once('exit', r));
    logs.close();
    db.close();
    tmp.remove();
  }
}

