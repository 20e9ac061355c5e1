// A simulated node for tests against the Kubernetes API test server: the Job controller (one Pod per Job, status
// active/succeeded/failed with Complete/Failed conditions, activeDeadlineSeconds → DeadlineExceeded, backoffLimit)
// and a kubelet that "runs" each Pod as local child processes (init containers in order, then the first container),
// writing Pod status (Pending → Running → Succeeded/Failed, containerStatuses terminated exitCode/reason/message)
// through the API like a real node. Deleting a Pod sends SIGTERM, then SIGKILL to its process group after the grace
// period. Images are not pulled: every container runs on this machine (`pullError` simulates a failing pull).
//
// Path mapping (container paths → this machine): a command, argument, workingDir or env value that is an absolute path
// under a mapped prefix is rewritten (longest prefix wins). emptyDir volumes map their mountPath to a temporary folder
// per Pod; `pathMap` maps image content, e.g. `{ '/app': <repo root> }` for the runner image. A command `node` runs
// process.execPath. With the Docker task runner layout, `/flowpilot` is an emptyDir filled by the init container
// (`runner.js install`; set FLOWPILOT_INSTALL=symlink in the pod env to link instead of copying the checkout).
// Container env: the Pod's env (value, fieldRef metadata.*, secretKeyRef / configMapKeyRef) and envFrom, over PATH.
// Termination messages as a real kubelet makes them: each container's terminationMessagePath (default
// /dev/termination-log) maps to an empty file of the Pod; what the container wrote there (at most 4096 bytes) is the
// message, else, with FallbackToLogsOnError and a non-zero exit, the tail of its output.
// `serviceAccounts` stands for the ServiceAccount token a real node mounts: a Pod of a listed ServiceAccount (token
// automount not disabled) gets KUBECONFIG pointing to that account's kubeconfig, unless its env sets KUBECONFIG.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchV1Api, CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions,
  type Informer, type KubeConfig, type ObjectCache, type V1Container, type V1ContainerStatus, type V1Job, type V1JobCondition, type V1Pod,
} from '@kubernetes/client-node';

export interface SimulatedKubeletOptions {
  kc: KubeConfig;
  namespace: string;
  /** Container path prefix → local path. */
  pathMap: Record<string, string>;
  /** A waiting reason (e.g. 'ImagePullBackOff') for images that cannot be pulled; the Pod then stays Pending. */
  pullError?: (image: string) => string | undefined;
  /** ServiceAccount name → kubeconfig file (its token): KUBECONFIG of the Pods running as it (the token mount). */
  serviceAccounts?: Record<string, string>;
}

export interface SimulatedKubelet {
  /** Output (stdout + stderr, last 64 KiB) of a container of a Pod. */
  output(pod: string, container?: string): string;
  /** Processes started so far, with whether they are still alive. */
  processes(): { pod: string; container: string; pid: number; alive: boolean }[];
  stop(): Promise<void>;
}

interface Proc { pod: string; container: string; child: ChildProcess; out: string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }
interface PodRun { name: string; dir: string; deleted: boolean; procs: Proc[]; grace: number }
interface JobRun { uid: string; pods: number; active?: string; deadline?: NodeJS.Timeout; done: boolean }

const CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const suffix = () => Array.from({ length: 5 }, () => CHARS[Math.floor(Math.random() * CHARS.length)]).join('');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const now = () => new Date();
const MAX_OUT = 64 * 1024;
const MAX_MESSAGE = 4096;
/** The file behind a container's terminationMessagePath. */
const messageFile = (dir: string, c: V1Container) => join(dir, 'termination', c.name);

export async function startSimulatedKubelet(o: SimulatedKubeletOptions): Promise<SimulatedKubelet> {
  const batch = o.kc.makeApiClient(BatchV1Api);
  const core = o.kc.makeApiClient(CoreV1Api);
  const ns = o.namespace;
  const jobs = new Map<string, JobRun>();
  const pods = new Map<string, PodRun>();
  const allProcs: Proc[] = [];
  let stopped = false;
  const warn = (m: string, e?: unknown) => { if (!stopped) console.warn(`[kubelet] ${m}`, (e as Error)?.message ?? e ?? ''); };

  const jobInformer: Informer<V1Job> & ObjectCache<V1Job> = makeInformer(o.kc, `/apis/batch/v1/namespaces/${ns}/jobs`, () => batch.listNamespacedJob({ namespace: ns }));
  const podInformer: Informer<V1Pod> & ObjectCache<V1Pod> = makeInformer(o.kc, `/api/v1/namespaces/${ns}/pods`, () => core.listNamespacedPod({ namespace: ns }));

  const patchJobStatus = (name: string, status: Record<string, unknown>) =>
    batch.patchNamespacedJobStatus({ name, namespace: ns, body: { status } }, merge).catch((e) => warn(`job ${name} status`, e));
  const patchPodStatus = (name: string, status: Record<string, unknown>) =>
    core.patchNamespacedPodStatus({ name, namespace: ns, body: { status } }, merge).catch((e) => { if (!pods.get(name)?.deleted) warn(`pod ${name} status`, e); });
  const cond = (type: string, reason?: string, message?: string): V1JobCondition =>
    ({ type, status: 'True', lastProbeTime: now(), lastTransitionTime: now(), ...(reason ? { reason } : {}), ...(message ? { message } : {}) });

  // ---- Job controller -------------------------------------------------------------------------------------------
  function onJob(job: V1Job): void {
    const uid = job.metadata?.uid;
    if (stopped || !uid || job.metadata?.deletionTimestamp) return;
    const finished = job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    if (finished || jobs.has(uid)) return;
    const jr: JobRun = { uid, pods: 0, done: false };
    jobs.set(uid, jr);
    const start = now();
    const deadline = job.spec?.activeDeadlineSeconds;
    if (deadline) jr.deadline = setTimeout(() => void deadlineExceeded(job, jr), deadline * 1000);
    // The Pod only after the start status is written: otherwise a fast Pod's final status (active: 0, succeeded)
    // could be overwritten by this earlier patch arriving late on a busy machine.
    void patchJobStatus(job.metadata!.name!, { startTime: start, active: 1, ready: 0 }).then(() => createPod(job, jr));
  }

  async function createPod(job: V1Job, jr: JobRun): Promise<void> {
    if (jr.done || stopped) return; // deadline passed or Job deleted before its Pod was made
    const name = `${job.metadata!.name}-${suffix()}`;
    jr.pods++;
    jr.active = name;
    const t = job.spec!.template;
    const pod: V1Pod = {
      metadata: {
        name, namespace: ns, labels: { ...(t.metadata?.labels ?? {}), 'job-name': job.metadata!.name!, 'controller-uid': jr.uid },
        ...(t.metadata?.annotations ? { annotations: t.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata!.name!, uid: jr.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: t.spec!,
    };
    try {
      const created = await core.createNamespacedPod({ namespace: ns, body: pod });
      void runPod(job, jr, created);
    } catch (e) { warn(`create pod ${name}`, e); }
  }

  async function podEnded(job: V1Job, jr: JobRun, succeeded: boolean): Promise<void> {
    if (jr.done || stopped) return;
    const name = job.metadata!.name!;
    const fresh = jobInformer.get(name, ns);
    if (!fresh || fresh.metadata?.uid !== jr.uid || fresh.metadata?.deletionTimestamp) { jr.done = true; clearTimeout(jr.deadline); return; }
    if (succeeded) {
      jr.done = true;
      clearTimeout(jr.deadline);
      await patchJobStatus(name, { active: 0, ready: 0, succeeded: 1, completionTime: now(), conditions: [cond('SuccessCriteriaMet', 'CompletionsReached'), cond('Complete', 'CompletionsReached')] });
      return;
    }
    const failed = jr.pods;
    if (failed > (job.spec?.backoffLimit ?? 6)) {
      jr.done = true;
      clearTimeout(jr.deadline);
      const message = 'Job has reached the specified backoff limit';
      await patchJobStatus(name, { active: 0, ready: 0, failed, conditions: [cond('FailureTarget', 'BackoffLimitExceeded', message), cond('Failed', 'BackoffLimitExceeded', message)] });
      return;
    }
    await patchJobStatus(name, { failed, active: 1 });
    await createPod(job, jr);
  }

  async function deadlineExceeded(job: V1Job, jr: JobRun): Promise<void> {
    if (jr.done || stopped) return;
    jr.done = true;
    const message = 'Job was active longer than specified deadline';
    if (jr.active) await core.deleteNamespacedPod({ name: jr.active, namespace: ns }).catch(() => undefined);
    await patchJobStatus(job.metadata!.name!, { active: 0, ready: 0, failed: jr.pods, conditions: [cond('FailureTarget', 'DeadlineExceeded', message), cond('Failed', 'DeadlineExceeded', message)] });
  }

  // ---- kubelet ----------------------------------------------------------------------------------------------------
  function mapper(pod: V1Pod, c: V1Container, dir: string): (p: string) => string {
    const table: [string, string][] = [...Object.entries(o.pathMap), [c.terminationMessagePath ?? '/dev/termination-log', messageFile(dir, c)]];
    for (const m of c.volumeMounts ?? []) {
      const vol = pod.spec?.volumes?.find((v) => v.name === m.name);
      if (vol?.emptyDir) table.push([m.mountPath, join(dir, 'volumes', m.name)]);
    }
    table.sort((a, b) => b[0].length - a[0].length);
    return (p) => {
      for (const [from, to] of table) if (p === from || p.startsWith(`${from}/`)) return to + p.slice(from.length);
      return p;
    };
  }

  async function containerEnv(pod: V1Pod, c: V1Container, map: (p: string) => string): Promise<Record<string, string>> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const sa = pod.spec?.serviceAccountName;
    if (sa && pod.spec?.automountServiceAccountToken !== false && o.serviceAccounts?.[sa]) env.KUBECONFIG = o.serviceAccounts[sa];
    const secret = async (name: string) => Object.fromEntries(Object.entries((await core.readNamespacedSecret({ name, namespace: ns })).data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    const configMap = async (name: string) => (await core.readNamespacedConfigMap({ name, namespace: ns })).data ?? {};
    // A missing source fails the container (CreateContainerConfigError) unless it is marked optional, as on a real node.
    const optional = async <T>(isOptional: boolean | undefined, read: () => Promise<T>, empty: T): Promise<T> => {
      try { return await read(); } catch (err) { if (isOptional && (err as { code?: number }).code === 404) return empty; throw err; }
    };
    for (const src of c.envFrom ?? []) {
      const data = src.secretRef ? await optional(src.secretRef.optional, () => secret(src.secretRef!.name!), {})
        : src.configMapRef ? await optional(src.configMapRef.optional, () => configMap(src.configMapRef!.name!), {}) : {};
      for (const [k, v] of Object.entries(data)) env[`${src.prefix ?? ''}${k}`] = v;
    }
    for (const e of c.env ?? []) {
      const f = e.valueFrom;
      if (e.value !== undefined) env[e.name] = map(e.value);
      else if (f?.fieldRef) env[e.name] = String((f.fieldRef.fieldPath.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown>)?.[k], pod)) ?? '');
      else if (f?.secretKeyRef) env[e.name] = (await secret(f.secretKeyRef.name!))[f.secretKeyRef.key] ?? '';
      else if (f?.configMapKeyRef) env[e.name] = (await configMap(f.configMapKeyRef.name!))[f.configMapKeyRef.key] ?? '';
    }
    return env;
  }

  async function start(run: PodRun, pod: V1Pod, c: V1Container): Promise<Proc> {
    const map = mapper(pod, c, run.dir);
    const [cmd0, ...rest] = [...(c.command ?? []), ...(c.args ?? [])];
    if (!cmd0) throw new Error(`container ${c.name} has no command (image entrypoints are not simulated)`);
    const cmd = cmd0 === 'node' ? process.execPath : map(cmd0);
    const env = await containerEnv(pod, c, map);
    mkdirSync(join(run.dir, 'termination'), { recursive: true });
    writeFileSync(messageFile(run.dir, c), '');
    // Deleted (or the kubelet stopped) while the env was read: a process spawned now would be neither killed nor
    // awaited by stop(), and would keep the test worker alive.
    if (stopped || run.deleted) throw new Error(`pod ${run.name} was deleted before container ${c.name} started`);
    const child = spawn(cmd, rest.map((a) => (a.startsWith('/') ? map(a) : a)), {
      cwd: c.workingDir ? map(c.workingDir) : run.dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc: Proc = {
      pod: run.name, container: c.name, child, out: '',
      exited: new Promise((r) => child.on('close', (code, signal) => r({ code, signal }))),
    };
    const add = (d: Buffer) => { proc.out = (proc.out + d.toString('utf8')).slice(-MAX_OUT); };
    child.stdout!.on('data', add);
    child.stderr!.on('data', add);
    child.on('error', (e) => { proc.out += `\n${e.message}`; });
    run.procs.push(proc);
    allProcs.push(proc);
    return proc;
  }

  const terminated = (p: Proc, r: { code: number | null; signal: NodeJS.Signals | null }, startedAt: Date, c: V1Container, dir: string) => {
    const exitCode = r.code ?? (r.signal ? 128 + (r.signal === 'SIGKILL' ? 9 : 15) : 1);
    let written = '';
    try { written = readFileSync(messageFile(dir, c)).subarray(0, MAX_MESSAGE).toString('utf8'); } catch { /* not created */ }
    const message = written || (exitCode !== 0 && c.terminationMessagePolicy === 'FallbackToLogsOnError' ? p.out.split('\n').slice(-80).join('\n').slice(-MAX_MESSAGE) : undefined);
    return { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: now(), ...(message ? { message } : {}) };
  };

  async function runPod(job: V1Job, jr: JobRun, pod: V1Pod): Promise<void> {
    const name = pod.metadata!.name!;
    const run: PodRun = { name, dir: mkdtempSync(join(tmpdir(), `kubelet-${name}-`)), deleted: false, procs: [], grace: pod.spec?.terminationGracePeriodSeconds ?? 30 };
    pods.set(name, run);
    const spec = pod.spec!;
    for (const v of spec.volumes ?? []) if (v.emptyDir) mkdirSync(join(run.dir, 'volumes', v.name), { recursive: true });
    const status = (c: V1Container, state: V1ContainerStatus['state'], ready = false): V1ContainerStatus =>
      ({ name: c.name, image: c.image ?? '', imageID: '', ready, restartCount: 0, started: !!state?.running, state });
    const waitingAll = (reason: string, message?: string) => ({
      ...(spec.initContainers?.length ? { initContainerStatuses: spec.initContainers.map((c) => status(c, { waiting: { reason, ...(message ? { message } : {}) } })) } : {}),
      containerStatuses: spec.containers.map((c) => status(c, { waiting: { reason: spec.initContainers?.length ? 'PodInitializing' : reason } })),
    });
    await patchPodStatus(name, { phase: 'Pending', startTime: now(), hostIP: '127.0.0.1', ...waitingAll('ContainerCreating') });
    const bad = [...(spec.initContainers ?? []), ...spec.containers].find((c) => o.pullError?.(c.image ?? ''));
    if (bad) {
      const reason = o.pullError!(bad.image ?? '')!;
      await patchPodStatus(name, { phase: 'Pending', containerStatuses: spec.containers.map((c) => status(c, { waiting: c === bad ? { reason, message: `Back-off pulling image "${c.image}"` } : { reason: 'ContainerCreating' } })) });
      return;
    }
    const initStatuses: V1ContainerStatus[] = [];
    for (const c of spec.initContainers ?? []) {
      if (run.deleted) return;
      const startedAt = now();
      const p = await start(run, pod, c).catch((e: Error) => e);
      const r = p instanceof Error ? { code: 128, signal: null } : await p.exited;
      const t = p instanceof Error ? { exitCode: 128, reason: 'StartError', message: p.message, startedAt, finishedAt: now() } : terminated(p, r, startedAt, c, run.dir);
      initStatuses.push(status(c, { terminated: t }));
      if (t.exitCode !== 0) {
        if (run.deleted) return;
        await patchPodStatus(name, { phase: 'Failed', initContainerStatuses: initStatuses, containerStatuses: spec.containers.map((x) => status(x, { waiting: { reason: 'PodInitializing' } })) });
        return void podEnded(job, jr, false);
      }
    }
    const main = spec.containers[0]!;
    if (run.deleted) return;
    const startedAt = now();
    const p = await start(run, pod, main).catch((e: Error) => e);
    const initPart = initStatuses.length ? { initContainerStatuses: initStatuses } : {};
    if (!(p instanceof Error)) {
      await patchPodStatus(name, { phase: 'Running', podIP: '127.0.0.1', ...initPart, containerStatuses: [status(main, { running: { startedAt } }, true)], conditions: [{ type: 'Ready', status: 'True' }] });
    }
    const t = p instanceof Error ? { exitCode: 128, reason: 'StartError', message: p.message, startedAt, finishedAt: now() } : terminated(p, await p.exited, startedAt, main, run.dir);
    if (run.deleted) return;
    await patchPodStatus(name, { phase: t.exitCode === 0 ? 'Succeeded' : 'Failed', ...initPart, containerStatuses: [status(main, { terminated: t })], conditions: [{ type: 'Ready', status: 'False' }] });
    await podEnded(job, jr, t.exitCode === 0);
  }

  function killPod(run: PodRun): void {
    if (run.deleted) return;
    run.deleted = true;
    for (const p of run.procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null || !p.child.pid) continue;
      try { p.child.kill('SIGTERM'); } catch { /* gone */ }
      const timer = setTimeout(() => { try { process.kill(-p.child.pid!, 'SIGKILL'); } catch { /* gone */ } }, run.grace * 1000);
      void p.exited.then(() => {
        clearTimeout(timer);
        try { process.kill(-p.child.pid!, 'SIGKILL'); } catch { /* group already gone */ }
      });
    }
    void Promise.all(run.procs.map((p) => p.exited)).then(() => rmSync(run.dir, { recursive: true, force: true }));
  }

  function onPodGone(pod: V1Pod): void {
    const run = pods.get(pod.metadata?.name ?? '');
    if (!run) return;
    killPod(run);
    const jobRef = pod.metadata?.ownerReferences?.find((r) => r.kind === 'Job');
    const jr = jobRef ? jobs.get(jobRef.uid) : undefined;
    const job = jobRef ? jobInformer.get(jobRef.name, ns) : undefined;
    if (jr && job && jr.active === pod.metadata?.name) void podEnded(job, jr, false);
  }

  jobInformer.on('add', onJob);
  jobInformer.on('update', onJob);
  jobInformer.on('delete', (job) => { const jr = jobs.get(job.metadata?.uid ?? ''); if (jr) { jr.done = true; clearTimeout(jr.deadline); } });
  podInformer.on('delete', onPodGone);
  podInformer.on('update', (pod) => { if (pod.metadata?.deletionTimestamp) onPodGone(pod); });
  for (const inf of [jobInformer, podInformer] as Informer<V1Job | V1Pod>[]) {
    inf.on('error', (e) => { if (!stopped) { warn('watch error, restarting', e); setTimeout(() => { if (!stopped) void inf.start().catch(() => undefined); }, 500); } });
  }
  await Promise.all([jobInformer.start(), podInformer.start()]);

  return {
    output: (pod, container) => allProcs.filter((p) => p.pod === pod && (!container || p.container === container)).map((p) => p.out).join('\n'),
    processes: () => allProcs.map((p) => ({ pod: p.pod, container: p.container, pid: p.child.pid ?? -1, alive: p.child.exitCode === null && p.child.signalCode === null })),
    async stop() {
      stopped = true;
      for (const jr of jobs.values()) clearTimeout(jr.deadline);
      await Promise.all([jobInformer.stop(), podInformer.stop()]);
      for (const run of pods.values()) { run.grace = 0; killPod(run); }
      await Promise.all(allProcs.map((p) => p.exited));
      for (const run of pods.values()) rmSync(run.dir, { recursive: true, force: true });
    },
  };
}
