// The cluster side of the operator memory bench (test/bench/kube-memory.ts), in its own process so the operator's heap
// is measured alone: the Kubernetes API test server, a stand-in node that finishes each task Job at once (writes the
// runner's result file, creates its Pod as Succeeded, marks the Job Complete: no task process runs), the TTL-after-
// finished controller on request, and a load generator creating hand-made Executions (kubectl style) with a bounded
// number in flight. Driven over IPC by the parent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  BatchV1Api, CoreV1Api, CustomObjectsApi, makeInformer, PatchStrategy, setHeaderOptions, type KubernetesObject, type V1Job, type V1Pod,
} from '@kubernetes/client-node';
import { writeAttemptResult } from '../../operator/kube/attempt-io.js';
import { ANNOTATIONS } from '../../operator/kube/job-spec.js';
import { GROUP, KINDS, VERSION } from '../../operator/kube/names.js';
import { LocalStorage } from '../../operator/storage/local.js';
import { startKubeTestServer } from '../kube/test-server/index.js';

export const BENCH_NS = 'bench';
export const BENCH_FLOW = { id: 'one', namespace: 'bench.memory' } as const;

export type ToNode = { type: 'run'; count: number; inFlight: number } | { type: 'expire' } | { type: 'stop' };
export type FromNode =
  | { type: 'ready'; url: string; storageDir: string }
  | { type: 'ran'; ms: number; states: Record<string, number>; sampleJob?: V1Job; samplePod?: V1Pod }
  | { type: 'expired'; jobs: number; pods: number };

const TERMINAL = new Set(['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED']);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const send = (m: FromNode) => process.send!(m);

async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { while (next < items.length) await fn(items[next++]!); }));
}

async function main(): Promise<void> {
  const storageDir = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  const storage = new LocalStorage(storageDir);
  const server = await startKubeTestServer({ namespaces: ['default', BENCH_NS] });
  const kc = server.kubeConfig();
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const finished: string[] = [];
  const started = new Set<string>();
  const failures: string[] = [];

  /** The stand-in node: result file, a Succeeded Pod owned by the Job, the Job Complete. */
  const finish = async (job: V1Job): Promise<void> => {
    const m = job.metadata!;
    if (started.has(m.uid!) || job.status?.conditions?.length || m.deletionTimestamp) return;
    started.add(m.uid!);
    try {
      await writeAttemptResult(storage, m.annotations![ANNOTATIONS.inputUri]!, { state: 'SUCCESS', outputs: { value: 'ok' } });
      const podName = `${m.name}-x`;
      await core.createNamespacedPod({
        namespace: BENCH_NS,
        body: {
          metadata: { name: podName, labels: { ...job.spec!.template.metadata?.labels, 'job-name': m.name! }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: m.name!, uid: m.uid!, controller: true, blockOwnerDeletion: true }] },
          spec: { ...job.spec!.template.spec!, nodeName: 'bench-node' },
        },
      });
      const now = new Date();
      await core.patchNamespacedPodStatus({ name: podName, namespace: BENCH_NS, body: { status: {
        phase: 'Succeeded',
        containerStatuses: [{ name: 'main', image: 'runner', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: now } } }],
      } } }, merge);
      await batch.patchNamespacedJobStatus({ name: m.name!, namespace: BENCH_NS, body: { status: {
        startTime: now, completionTime: now, succeeded: 1, active: 0,
        conditions: [{ type: 'Complete', status: 'True', lastProbeTime: now, lastTransitionTime: now }],
      } } }, merge);
      finished.push(m.name!);
    } catch (err) {
      failures.push(`${m.name}: ${(err as Error).message}`);
    }
  };
  const jobs = makeInformer<V1Job>(kc, `/apis/batch/v1/namespaces/${BENCH_NS}/jobs`, () => batch.listNamespacedJob({ namespace: BENCH_NS }));
  jobs.on('add', (j) => void finish(j));
  jobs.on('error', () => setTimeout(() => void jobs.start(), 100));
  await jobs.start();

  await custom.createNamespacedCustomObject({
    group: GROUP, version: VERSION, namespace: BENCH_NS, plural: KINDS.Flow.plural,
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: KINDS.Flow.kind, metadata: { name: 'one' },
      spec: { ...BENCH_FLOW, tasks: [{ id: 't', type: 'ai.service.plugin.core.debug.Return', format: 'ok' }] } },
  });

  const states: Record<string, number> = {};
  const ended = new Set<string>();
  let wake: (() => void) | undefined;
  const executions = makeInformer<KubernetesObject & { status?: { state?: string } }>(kc, `/apis/${GROUP}/${VERSION}/namespaces/${BENCH_NS}/${KINDS.Execution.plural}`,
    () => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: BENCH_NS, plural: KINDS.Execution.plural }) as never);
  const seen = (e: KubernetesObject & { status?: { state?: string } }) => {
    const s = e.status?.state;
    if (!s || !TERMINAL.has(s) || ended.has(e.metadata!.name!)) return;
    ended.add(e.metadata!.name!);
    states[s] = (states[s] ?? 0) + 1;
    wake?.();
  };
  executions.on('add', seen);
  executions.on('update', seen);
  executions.on('error', () => setTimeout(() => void executions.start(), 100));
  await executions.start();

  const run = async (count: number, inFlight: number): Promise<void> => {
    const t0 = performance.now();
    const base = ended.size;
    let created = 0;
    const createOne = (i: number) => custom.createNamespacedCustomObject({
      group: GROUP, version: VERSION, namespace: BENCH_NS, plural: KINDS.Execution.plural,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: KINDS.Execution.kind, metadata: { name: `run-${i}` }, spec: { namespace: BENCH_FLOW.namespace, flowId: BENCH_FLOW.id } },
    });
    while (ended.size - base < count) {
      const room = Math.min(inFlight - (created - (ended.size - base)), count - created);
      const batchOf = Array.from({ length: Math.max(0, room) }, (_, k) => created + k);
      created += batchOf.length;
      await pool(batchOf, 16, createOne);
      await new Promise<void>((r) => { wake = r; setTimeout(r, 200); });
      if (failures.length > 20) throw new Error(`the stand-in node failed: ${failures.slice(0, 3).join('; ')}`);
    }
    const jobList = await batch.listNamespacedJob({ namespace: BENCH_NS, limit: 1 });
    const podList = await core.listNamespacedPod({ namespace: BENCH_NS, limit: 1 });
    send({ type: 'ran', ms: performance.now() - t0, states: { ...states }, sampleJob: jobList.items[0], samplePod: podList.items[0] });
  };

  /** The TTL-after-finished controller, run now for every finished Job (Background: the garbage collector takes the Pods). */
  const expire = async (): Promise<void> => {
    await pool(finished.splice(0), 16, (name) => batch.deleteNamespacedJob({ name, namespace: BENCH_NS, propagationPolicy: 'Background' }).catch(() => undefined));
    await server.gcIdle();
    send({ type: 'expired', jobs: (await batch.listNamespacedJob({ namespace: BENCH_NS })).items.length, pods: (await core.listNamespacedPod({ namespace: BENCH_NS })).items.length });
  };

  process.on('message', (m: ToNode) => {
    if (m.type === 'run') run(m.count, m.inFlight).catch((e) => { console.error(e); process.exit(1); });
    else if (m.type === 'expire') expire().catch((e) => { console.error(e); process.exit(1); });
    else {
      void Promise.all([jobs.stop(), executions.stop()]).then(() => server.close()).finally(() => {
        rmSync(storageDir, { recursive: true, force: true });
        process.exit(0);
      });
    }
  });
  send({ type: 'ready', url: server.url, storageDir });
}

// Imported by the parent for its constants and message types: run only as the forked entry point.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
