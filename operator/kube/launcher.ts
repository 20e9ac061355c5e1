// The cluster launcher: one Kubernetes Job per task attempt (deterministic name), watched through an informer; the
// outcome comes from the result file the runner wrote to internal storage, else from the Job/Pod status. Each
// outcome is reported once on its own, and again whenever the engine asks (a launch of an attempt it has no recorded
// result for: a report whose write failed, a resync, a restarted operator whose Jobs finished while it was away).
// That costs no write: per task the operator makes two (create the Job, one execution status update). A launch whose result
// file already exists (its Job was garbage-collected meanwhile) reports that result instead of running the task again.
// Between two tasks: the result file is read as soon as the Pod's main container ends (before the Job is marked
// finished); the next attempt's input file is written while the step's record is written (prepare: a new attempt needs
// no look-up for earlier work), and its Job is created once that record is written, never before (task-run ids are
// random: a Job made for a step whose write then conflicts would run a task the record does not hold).
// Call start() before the controller recovers, so running Jobs are adopted instead of created again.
import {
  BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions,
  type Informer, type KubeConfig, type ObjectCache, type V1Job, type V1Pod,
} from '@kubernetes/client-node';
import type { TaskOutcome } from '../core/engine-types.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { applyFlowDefaults } from '../model/index.js';
import type { InternalStorage } from '../store/types.js';
import type { Launcher, Report } from '../controller/launcher.js';
import { backoff, isTransient, sleep } from '../faults.js';
import { leanJob, leanPod, makeLeanInformer } from './informer.js';
import { attemptInputUri, readAttemptResult, writeAttemptInput } from './attempt-io.js';
import { ANNOTATIONS, buildJob, MAIN_CONTAINER, type LauncherSettings } from './job-spec.js';
import { attemptKeyOf, jobFinish, outcomeOfJob, podStuck, type AttemptKey, type JobFinish } from './job-status.js';
import { API_VERSION, executionName, GROUP, jobName, KINDS, LABELS, MANAGER, VERSION } from './names.js';
import { restartOnWatchError } from './watch-restart.js';

export interface KubeLauncherOptions {
  kc: KubeConfig;
  namespace: string;
  storage: InternalStorage;
  report: Report;
  settings: LauncherSettings;
  /** The Execution resource holding an execution id (the store's cache; hand-made Executions have any name). */
  executionResource?: (executionId: string) => { name: string; uid: string } | undefined;
  onError?: (message: string, err?: unknown) => void;
  /**
   * Partitioned operators: whether this replica acts on the execution's outcomes (default: all). Jobs of others stay
   * in the informer caches (read when the partition comes here: launch() adopts them) but are not settled here.
   */
  owns?: (executionId: string) => boolean;
  /** The execution's known secret values, sealed (`SecretLayer.sealedValues`): written into each attempt input. */
  knownSecrets?: (executionId: string) => string[];
}

interface Attempt extends AttemptKey {
  jobName: string;
  launching?: Promise<void>;
  killing?: boolean;
  settling?: boolean;
  /** Reported, by this launcher (outcome set) or by an earlier one (the Job's annotation). */
  reported?: boolean;
  outcome?: TaskOutcome;
  /** Failed reads of the result file in a row (transient errors, retried). */
  settleFailures?: number;
  /** The result file read when the Pod's main container ended, before the Job is marked finished (settle uses it). */
  prefetched?: Promise<TaskOutcome | undefined>;
  touched: number;
}

const KILLED: TaskOutcome = { state: 'KILLED', error: 'Task killed' };
const MAX_TRACKED = 5000;
/** Input files of a step's new attempts written while its record is written (the rest of a fan-out: at launch). */
const PREPARE_INPUTS = 16;

/** New attempts of a step whose record is being written (prepare), by execution: the record object, their input writes. */
interface Prepared { exec: Execution; inputs: Map<string, Promise<string> | undefined> }

/** HTTP status of a Kubernetes API error (undefined for network errors). */
export const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
};

/** The API's own message (`Status.message`) rather than the client's long dump. */
export function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown })?.body;
  try {
    const parsed = typeof body === 'string' ? JSON.parse(body) as { message?: string } : body as { message?: string } | undefined;
    if (parsed?.message) return parsed.message;
  } catch { /* not JSON */ }
  return (err as Error)?.message ?? String(err);
}

export class KubeLauncher implements Launcher {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly attempts = new Map<string, Attempt>();
  private readonly owners = new Map<string, string>();
  private readonly prepared = new Map<string, Prepared>();
  /** Input files being written, by attempt key: a later write of the same file waits for the earlier one. */
  private readonly inputWrites = new Map<string, Promise<string>>();
  private jobs?: Informer<V1Job> & ObjectCache<V1Job>;
  private pods?: Informer<V1Pod> & ObjectCache<V1Pod>;
  private stopped = false;
  /** True while the informers load their first list (Jobs seen then predate this launcher). */
  private syncing = false;
  private readonly onError: (message: string, err?: unknown) => void;

  constructor(private readonly o: KubeLauncherOptions) {
    this.batch = o.kc.makeApiClient(BatchV1Api);
    this.core = o.kc.makeApiClient(CoreV1Api);
    this.custom = o.kc.makeApiClient(CustomObjectsApi);
    this.onError = o.onError ?? ((m, e) => console.error(`[kube-launcher] ${m}${e ? `: ${apiMessage(e)}` : ''}`));
  }

  /** Starts the Job and Pod informers; resolves after their first list (existing Jobs are adopted). */
  async start(): Promise<void> {
    const ns = this.o.namespace;
    const selector = `${LABELS.managedBy}=${MANAGER}`;
    // Paged lists; the caches keep lean copies (no Pod templates): thousands of finished Jobs wait for their TTL here.
    this.jobs = makeLeanInformer(this.o.kc, `/apis/batch/v1/namespaces/${ns}/jobs`,
      (page) => this.batch.listNamespacedJob({ namespace: ns, labelSelector: selector, ...page }), { labelSelector: selector, transform: leanJob });
    this.pods = makeLeanInformer(this.o.kc, `/api/v1/namespaces/${ns}/pods`,
      (page) => this.core.listNamespacedPod({ namespace: ns, labelSelector: selector, ...page }), { labelSelector: selector, transform: leanPod });
    this.jobs.on('add', (j) => this.onJob(j));
    this.jobs.on('update', (j) => this.onJob(j));
    this.jobs.on('delete', (j) => this.onJobDeleted(j));
    this.pods.on('add', (p) => this.onPod(p));
    this.pods.on('update', (p) => this.onPod(p));
    for (const inf of [this.jobs, this.pods] as Informer<V1Job | V1Pod>[]) {
      // Routine watch ends restart quietly at once; failures back off and are reported once per streak.
      restartOnWatchError(inf as never, { report: (err) => this.onError('watch failed, restarting', err), stopped: () => this.stopped });
    }
    this.syncing = true;
    try { await Promise.all([this.jobs.start(), this.pods.start()]); } finally { this.syncing = false; }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.prepared.clear();
    await Promise.all([this.jobs?.stop(), this.pods?.stop()]);
  }

  /**
   * The engine asks for an attempt it has no recorded result of (a launch, a retry after a failed write, a resync):
   * start it, or, when this launcher already knows its outcome (or its Job finished), report that outcome again, so a
   * report lost on the way (a store write that failed) can only delay the execution.
   */
  launch(flow: Flow, exec: Execution, run: TaskRun, attempt: number): void {
    const fresh = this.takePrepared(exec, `${run.id}:${attempt}`);
    const existing = this.attempts.get(`${run.id}:${attempt}`);
    if (existing) {
      existing.touched = Date.now();
      if (existing.outcome) this.o.report(existing.executionId, existing.taskRunId, existing.attempt, existing.outcome);
      else if (!existing.launching && !existing.settling && !this.resettle(existing) && existing.reported) {
        // Reported by an earlier launcher and its Job is gone from the cache: read its result file again, else re-create.
        this.attempts.delete(`${run.id}:${attempt}`);
        this.launch(flow, exec, run, attempt);
      }
      return;
    }
    const a = this.track({ executionId: exec.id, taskRunId: run.id, attempt });
    a.launching = this.create(a, flow, exec, run, fresh)
      .catch((err) => {
        if (isTransient(err)) {
          // The API or the bucket is unavailable: forget the attempt, the engine asks again (resync) and it starts then.
          this.onError(`could not start task '${run.taskId}' yet (retried at the next resync)`, err);
          if (this.attempts.get(`${run.id}:${attempt}`) === a && !a.outcome) this.attempts.delete(`${run.id}:${attempt}`);
          return;
        }
        this.deliver(a, { state: 'FAILED', error: `Could not start task '${run.taskId}' as a Kubernetes Job: ${apiMessage(err)}` });
      })
      .finally(() => { a.launching = undefined; });
  }

  /**
   * New attempts of a step about to be written: their input files are written now, beside the record's write (at most
   * PREPARE_INPUTS of them), and their launch with this record skips the look-ups for an earlier Job or result (a new
   * attempt has none). A record not written leaves its entry unused: the next step of the execution replaces it.
   */
  prepare(flow: Flow, exec: Execution, attempts: { run: TaskRun; attempt: number }[]): void {
    if (this.stopped || !(this.o.owns?.(exec.id) ?? true)) return;
    const inputs = new Map<string, Promise<string> | undefined>();
    attempts.forEach(({ run, attempt }, i) => {
      const input = i < PREPARE_INPUTS ? this.writeInput(flow, exec, run.id, attempt) : undefined;
      input?.catch(() => undefined); // a failure surfaces at launch (or never, when the record was not written)
      inputs.set(`${run.id}:${attempt}`, input);
    });
    this.prepared.set(exec.id, { exec, inputs });
  }

  /** The prepared entry of this attempt when launched with the record it was prepared with (consumed). */
  private takePrepared(exec: Execution, key: string): { input?: Promise<string> } | undefined {
    const p = this.prepared.get(exec.id);
    if (!p || p.exec !== exec || !p.inputs.has(key)) return undefined;
    const input = p.inputs.get(key);
    p.inputs.delete(key);
    if (!p.inputs.size) this.prepared.delete(exec.id);
    return input ? { input } : {};
  }

  /** Writes the attempt's input file (after any write of the same file still in flight: a stale prepared one). */
  private writeInput(flow: Flow, exec: Execution, taskRunId: string, attempt: number): Promise<string> {
    const key = `${taskRunId}:${attempt}`;
    const secrets = this.o.knownSecrets?.(exec.id) ?? [];
    const p = writeAttemptInput(this.o.storage, { flow, execution: exec, ...(secrets.length ? { secrets } : {}) }, taskRunId, attempt, this.inputWrites.get(key));
    this.inputWrites.set(key, p);
    const done = () => { if (this.inputWrites.get(key) === p) this.inputWrites.delete(key); };
    p.then(done, done);
    return p;
  }

  /** Outcomes stay until evicted (forgetOld), so that a repeated question is answered without a request. */
  recorded(): void {}

  /** The execution ended: drop its owner UID (its resource may be deleted by the archive TTL and re-created by a restart, with a new uid) and its settled attempts (those still running stay until their Job ends). */
  forgetExecution(executionId: string): void {
    this.owners.delete(executionId);
    this.prepared.delete(executionId);
    for (const [key, a] of this.attempts) {
      if (a.executionId === executionId && a.reported && !a.settling && !a.launching) this.attempts.delete(key);
    }
  }

  /** Attempts and owner UIDs held (bounded by MAX_TRACKED; tests and the memory bench). */
  get tracked(): { attempts: number; owners: number; jobs: number; pods: number } {
    return { attempts: this.attempts.size, owners: this.owners.size, jobs: this.jobs?.list().length ?? 0, pods: this.pods?.list().length ?? 0 };
  }

  kill(taskRunId: string, attempt: number): void {
    this.stopAttempt(taskRunId, attempt).catch((err) => this.onError(`could not kill task run ${taskRunId} attempt ${attempt}`, err));
  }

  /** Jobs outlive the operator: nothing to stop (a restarted operator adopts them). */
  killAll(): void {}

  private track(k: AttemptKey, name = jobName(k.executionId, k.taskRunId, k.attempt)): Attempt {
    const key = `${k.taskRunId}:${k.attempt}`;
    let a = this.attempts.get(key);
    if (!a) {
      a = { ...k, jobName: name, touched: Date.now() };
      this.attempts.set(key, a);
      if (this.attempts.size > MAX_TRACKED) this.forgetOld();
    }
    a.touched = Date.now();
    return a;
  }

  private forgetOld(): void {
    const done = [...this.attempts].filter(([, a]) => a.reported).sort((x, y) => x[1].touched - y[1].touched);
    for (const [key] of done.slice(0, Math.ceil(done.length / 2))) this.attempts.delete(key);
  }

  private deliver(a: Attempt, outcome: TaskOutcome): void {
    if (a.outcome) return;
    a.reported = true;
    a.outcome = outcome;
    this.o.report(a.executionId, a.taskRunId, a.attempt, outcome);
  }

  /** `fresh`: a new attempt (prepared), with its input file maybe being written already. */
  private async create(a: Attempt, flow: Flow, exec: Execution, run: TaskRun, fresh?: { input?: Promise<string> }): Promise<void> {
    const cached = this.jobs?.get(a.jobName, this.o.namespace);
    if (cached) return this.adopt(a, cached);
    if (!fresh) {
      // Finished earlier and its Job already garbage-collected (ttlSecondsAfterFinished): the result file remains.
      const earlier = await readAttemptResult(this.o.storage, attemptInputUri(exec, run.id, a.attempt));
      if (earlier) return this.deliver(a, earlier);
    }
    const task = applyFlowDefaults(taskForRun(flow, exec, run), flow);
    const inputUri = await (fresh?.input ?? this.writeInput(flow, exec, run.id, a.attempt));
    const owner = await this.ownerOf(exec.id);
    const body = buildJob({ namespace: this.o.namespace, exec, run, attempt: a.attempt, task, inputUri, settings: this.o.settings, ...(owner ? { owner } : {}) });
    for (let i = 0; ; i++) {
      try {
        await this.batch.createNamespacedJob({ namespace: this.o.namespace, body });
        return;
      } catch (err) {
        if (statusOf(err) === 409) return this.adopt(a, await this.batch.readNamespacedJob({ name: a.jobName, namespace: this.o.namespace }));
        if (!isTransient(err) || i >= 4) throw err;
        await sleep(backoff(i, { baseMs: 250, maxMs: 5_000 }));
      }
    }
  }

  /** The Job already exists (restarted operator): watch it; if it already finished, report its outcome now. */
  private adopt(a: Attempt, job: V1Job): void {
    const finish = jobFinish(job);
    if (finish) void this.settle(a, job, finish);
  }

  /** Settles the attempt from its cached Job when that Job finished; false when there is no finished Job to read. */
  private resettle(a: Attempt): boolean {
    const job = this.jobs?.get(a.jobName, this.o.namespace);
    const finish = job && jobFinish(job);
    if (!job || !finish) return Boolean(job);
    void this.settle(a, job, finish);
    return true;
  }

  /**
   * The Execution resource owning the Job, when it exists: the store's resource for the id (any name, kubectl-made ones
   * too), else the resource of the derived name read from the API (launchers used without the cluster stores).
   */
  private async ownerOf(executionId: string): Promise<{ apiVersion: string; kind: string; name: string; uid: string } | undefined> {
    const owner = (resource: { name: string; uid: string }) => ({ apiVersion: API_VERSION, kind: KINDS.Execution.kind, ...resource });
    const known = this.o.executionResource?.(executionId);
    if (known) return owner(known);
    const name = executionName(executionId);
    let uid = this.owners.get(executionId);
    if (!uid) {
      try {
        const obj = await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.o.namespace, plural: KINDS.Execution.plural, name }) as { metadata?: { uid?: string } };
        uid = obj.metadata?.uid;
      } catch (err) {
        if (statusOf(err) !== 404) this.onError(`could not read Execution ${name} (the Job gets no owner)`, err);
        return undefined;
      }
      if (!uid) return undefined;
      this.owners.set(executionId, uid);
      if (this.owners.size > MAX_TRACKED) this.owners.delete(this.owners.keys().next().value!);
    }
    return owner({ name, uid });
  }

  private readonly mine = (k: AttemptKey | undefined): k is AttemptKey => Boolean(k) && (this.o.owns?.(k!.executionId) ?? true);

  private onJob(job: V1Job): void {
    const k = attemptKeyOf(job);
    if (!this.mine(k) || !job.metadata?.name) return;
    const a = this.track(k, job.metadata.name);
    if (a.outcome) return;
    const finish = jobFinish(job);
    if (!finish) {
      if (job.metadata.deletionTimestamp) a.killing = true;
      return;
    }
    // Finished before this launcher started: an earlier one reported it (or the engine will ask through launch()).
    if (this.syncing) { a.reported = true; return; }
    void this.settle(a, job, finish);
  }

  private onJobDeleted(job: V1Job): void {
    const k = attemptKeyOf(job);
    if (!this.mine(k) || !job.metadata?.name) return;
    // A finished Job going (ttlSecondsAfterFinished) was settled when it finished (an evicted attempt was reported):
    // forget its attempt rather than track it again; a repeated launch() reads the result file.
    const key = `${k.taskRunId}:${k.attempt}`, known = this.attempts.get(key);
    if (jobFinish(job) && (!known || (known.reported && !known.settling))) { this.attempts.delete(key); return; }
    const a = this.track(k, job.metadata.name);
    if (a.reported || a.settling) return;
    const finish = jobFinish(job);
    if (finish) { void this.settle(a, job, finish); return; }
    if (a.killing) { this.deliver(a, KILLED); return; }
    void this.settleDeleted(a, job);
  }

  /**
   * A Job deleted while it looked unfinished: the copy we hold may be stale (it finished and went by its TTL while the
   * watch was down, and the re-list only tells us it is gone), so its result file decides. Without one, a Job being
   * deleted by someone (deletionTimestamp) is a kill; a Job that vanished is the infrastructure's failure: a new attempt.
   */
  private async settleDeleted(a: Attempt, job: V1Job, tries = 0): Promise<void> {
    if (a.settling || a.outcome || this.stopped) return;
    const inputUri = job.metadata?.annotations?.[ANNOTATIONS.inputUri];
    let result: TaskOutcome | undefined;
    a.settling = true;
    try {
      result = inputUri ? await readAttemptResult(this.o.storage, inputUri) : undefined;
    } catch (err) {
      if (isTransient(err) && tries < 5) {
        this.onError(`could not read the result of deleted Job ${a.jobName} yet (try ${tries + 1})`, err);
        setTimeout(() => { void this.settleDeleted(a, job, tries + 1); }, backoff(tries, { baseMs: 500, maxMs: 30_000 })).unref();
        return;
      }
      this.onError(`could not read the result of deleted Job ${a.jobName}`, err);
    } finally {
      a.settling = false;
    }
    this.deliver(a, result ?? (job.metadata?.deletionTimestamp ? KILLED
      : { state: 'FAILED', infrastructure: true, error: `The Job ${job.metadata?.name ?? a.jobName} of this attempt was deleted before it finished` }));
  }

  /** A Pod that cannot start (bad image...) would leave the Job waiting until its deadline: fail the attempt now. */
  private onPod(pod: V1Pod): void {
    const k = attemptKeyOf(pod);
    if (!this.mine(k) || pod.metadata?.deletionTimestamp) return;
    const stuck = podStuck(pod);
    if (!stuck) { this.prefetch(k, pod); return; }
    const a = this.track(k);
    if (a.reported || a.killing || a.settling) return;
    this.deliver(a, { state: 'FAILED', error: stuck });
    this.batch.deleteNamespacedJob({ name: a.jobName, namespace: this.o.namespace, propagationPolicy: 'Background' })
      .catch((err) => { if (statusOf(err) !== 404) this.onError(`could not delete stuck Job ${a.jobName}`, err); });
  }

  /**
   * The Pod's main container ended: its runner wrote its result file (if any) before exiting, so the file is read now
   * rather than after the Job controller marks the Job finished (a real one takes up to about a second to notice).
   */
  private prefetch(k: AttemptKey, pod: V1Pod): void {
    if (this.syncing || !pod.status?.containerStatuses?.some((s) => s.name === MAIN_CONTAINER && s.state?.terminated)) return;
    const a = this.attempts.get(`${k.taskRunId}:${k.attempt}`);
    if (!a || a.prefetched || a.outcome || a.settling) return;
    const inputUri = this.jobs?.get(a.jobName, this.o.namespace)?.metadata?.annotations?.[ANNOTATIONS.inputUri];
    if (!inputUri) return;
    a.prefetched = readAttemptResult(this.o.storage, inputUri);
    a.prefetched.catch(() => undefined); // settle reads again
  }

  private async settle(a: Attempt, job: V1Job, finish: NonNullable<JobFinish>): Promise<void> {
    if (a.settling || a.outcome) return;
    a.settling = true;
    try {
      const inputUri = job.metadata?.annotations?.[ANNOTATIONS.inputUri];
      let result: TaskOutcome | undefined;
      const early = a.prefetched?.catch(() => undefined);
      a.prefetched = undefined;
      try {
        result = (await early) ?? (inputUri ? await readAttemptResult(this.o.storage, inputUri) : undefined);
      } catch (err) {
        if (isTransient(err)) { this.retrySettle(a, err); return; }
        this.onError(`could not read the result of Job ${a.jobName}`, err);
      }
      const pods = result ? [] : await this.podsOf(a.jobName);
      this.deliver(a, outcomeOfJob(job, finish, result, pods));
    } finally {
      a.settling = false;
    }
  }

  /** The result file could not be read for now (bucket unavailable): try again later rather than lose its outputs. */
  private retrySettle(a: Attempt, err: unknown): void {
    const n = (a.settleFailures = (a.settleFailures ?? 0) + 1);
    this.onError(`could not read the result of Job ${a.jobName} yet (try ${n})`, err);
    const timer = setTimeout(() => { if (!this.stopped && !a.outcome) this.resettle(a); }, backoff(n - 1, { baseMs: 500, maxMs: 30_000 }));
    timer.unref();
  }

  private async podsOf(name: string): Promise<V1Pod[]> {
    try {
      return (await this.core.listNamespacedPod({ namespace: this.o.namespace, labelSelector: `job-name=${name}` })).items;
    } catch (err) {
      this.onError(`could not list the pods of Job ${name}`, err);
      return [];
    }
  }

  private async stopAttempt(taskRunId: string, attempt: number): Promise<void> {
    let a = this.attempts.get(`${taskRunId}:${attempt}`);
    if (!a) {
      const job = await this.findJob(taskRunId, attempt);
      const k = job && attemptKeyOf(job);
      if (!job || !k) { this.onError(`kill: no Job for task run ${taskRunId} attempt ${attempt}`); return; }
      a = this.track(k, job.metadata!.name!);
    }
    if (a.reported) return;
    a.killing = true;
    if (a.launching) await a.launching;
    if (a.reported) return;
    try {
      await this.batch.deleteNamespacedJob({
        name: a.jobName, namespace: this.o.namespace, propagationPolicy: 'Foreground',
        gracePeriodSeconds: this.o.settings.terminationGracePeriodSeconds ?? 30,
      });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      if (!a.settling) this.deliver(a, KILLED);
      return;
    }
    // Without a running informer nobody sees the Job go: report now.
    if (!this.jobs || this.stopped) this.deliver(a, KILLED);
  }

  private async findJob(taskRunId: string, attempt: number): Promise<V1Job | undefined> {
    const match = (j: V1Job) => j.metadata?.labels?.[LABELS.taskRunId] === taskRunId && j.metadata?.labels?.[LABELS.attempt] === String(attempt);
    const cached = this.jobs?.list(this.o.namespace).find(match);
    if (cached) return cached;
    const list = await this.batch.listNamespacedJob({ namespace: this.o.namespace, labelSelector: `${LABELS.taskRunId}=${taskRunId},${LABELS.attempt}=${attempt}` });
    return list.items[0];
  }
}
