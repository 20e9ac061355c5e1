// The simulated kubelet + Job controller on its own, with plain shell Jobs: status written through the API like a
// real node (Pod phases, container exit codes, Job conditions), backoffLimit retries, activeDeadlineSeconds, env and
// emptyDir path mapping, termination messages, and Pod deletion killing the process.
import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';
import { until } from '../support/wait.js';

const NS = 'kubelet-test';
let server: KubeTestServer;
let kc: KubeConfig;
let kubelet: SimulatedKubelet;

beforeAll(async () => {
  server = await startKubeTestServer();
  kc = server.kubeConfig();
  kubelet = await startSimulatedKubelet({ kc, namespace: NS, pathMap: {} });
});
afterAll(async () => { await kubelet?.stop(); await server?.close(); });

let n = 0;
async function createJob(script: string, spec: Partial<V1Job['spec']> = {}, env: Record<string, string> = {}): Promise<string> {
  const name = `job-${++n}`;
  await kc.makeApiClient(BatchV1Api).createNamespacedJob({
    namespace: NS,
    body: {
      metadata: { name },
      spec: {
        backoffLimit: 0, ...spec,
        template: { spec: {
          restartPolicy: 'Never', terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script], env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })), volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }], terminationMessagePolicy: 'FallbackToLogsOnError' }],
          volumes: [{ name: 'scratch', emptyDir: {} }],
        } },
      },
    },
  });
  return name;
}

const finished = (name: string) => until(async () => {
  const j = await kc.makeApiClient(BatchV1Api).readNamespacedJob({ name, namespace: NS });
  return j.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') ? j : undefined;
}, `job ${name} to finish`);
const podsOf = async (name: string) => (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `job-name=${name}` })).items;

// Generous limits: on a loaded 2-core CI machine spawning processes and watch round trips can take seconds.
describe('simulated kubelet', { timeout: 120_000 }, () => {
  it('completes a Job whose container exits 0, mapping emptyDir paths in env', async () => {
    const name = await createJob('echo hi > "$OUT/f" && cat "$OUT/f"', {}, { OUT: '/scratch' });
    const job = await finished(name);
    expect(job.status?.conditions?.map((c) => c.type)).toContain('Complete');
    expect(job.status).toMatchObject({ succeeded: 1, active: 0 });
    expect(job.status?.startTime).toBeDefined();
    expect(job.status?.completionTime).toBeDefined();
    const [pod] = await podsOf(name);
    expect(pod?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Job', name, controller: true });
    expect(pod?.status?.phase).toBe('Succeeded');
    expect(pod?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(kubelet.output(pod!.metadata!.name!)).toContain('hi');
  });

  it('fails a Job after backoffLimit retries, with the exit code and output tail on the Pod', async () => {
    const name = await createJob('echo last words; exit 3', { backoffLimit: 1 });
    const job = await finished(name);
    expect(job.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('BackoffLimitExceeded');
    expect(job.status?.failed).toBe(2);
    const pods = await podsOf(name);
    expect(pods).toHaveLength(2);
    for (const p of pods) expect(p.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: expect.stringContaining('last words') });
  });

  it('takes the termination message from the terminationMessagePath file (before the logs), on failure and on success', async () => {
    const failed = await createJob('echo noise; printf "my own reason" > "$TM"; exit 75', {}, { TM: '/dev/termination-log' });
    await finished(failed);
    expect((await podsOf(failed))[0]?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 75, message: 'my own reason' });
    const ok = await createJob('printf done > "$TM"', {}, { TM: '/dev/termination-log' });
    await finished(ok);
    expect((await podsOf(ok))[0]?.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, message: 'done' });
  });

  it('enforces activeDeadlineSeconds: DeadlineExceeded, Pod deleted, process killed', async () => {
    const name = await createJob('sleep 30', { activeDeadlineSeconds: 1 });
    const job = await finished(name);
    expect(job.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('DeadlineExceeded');
    await until(async () => ((await podsOf(name)).length === 0 ? true : undefined), 'the pod to be deleted');
    await until(async () => (kubelet.processes().some((p) => p.pod.startsWith(`${name}-`) && p.alive) ? undefined : true), 'the process to end');
  });

  it('kills the process of a deleted Pod', async () => {
    const name = await createJob('echo up; sleep 30');
    const pod = await until(async () => (await podsOf(name)).find((p) => p.status?.phase === 'Running'), 'the pod to run');
    await kc.makeApiClient(CoreV1Api).deleteNamespacedPod({ name: pod.metadata!.name!, namespace: NS });
    await until(async () => (kubelet.processes().some((p) => p.pod === pod.metadata!.name && p.alive) ? undefined : true), 'the process to end');
    expect((await finished(name)).status?.conditions?.find((c) => c.type === 'Failed')).toBeDefined();
  });
});
