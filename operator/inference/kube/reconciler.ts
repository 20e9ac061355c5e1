// Operator side of cluster-mode batch inference (runs on the leader): watches InferenceJobs and, for each unfinished
// one, adopts its token Secret (an ownerReference to the InferenceJob: the API may only create Secrets) and creates its
// runner Job (job.ts) once that Secret exists; a job deleted before its Secret was adopted takes the Secret with it.
// Before the Job it checks the
// Secret's token against the job's keyed `tokenHash` and creates the job's report ConfigMap (report.ts). It is the only
// writer of the InferenceJob's status: it folds the runner's report in (state, counts, result files, outcome; a final
// status never changes), marks the job FAILED with a message when its Job fails for good (backoff limit, deadline) or
// ends without a final report, CANCELLED when its owner cancels before the runner Job exists, and EXPIRED when its
// completion window ends before a runner reported anything.
import {
  BatchV1Api, CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions,
  type Informer, type KubeConfig, type KubernetesObject, type ObjectCache, type V1ConfigMap, type V1Job, type V1Pod, type V1Secret,
} from '@kubernetes/client-node';
import type { JobSecrets } from '../auth.js';
import { EXPIRED_BEFORE_START } from '../db.js';
import { buildReportConfigMap, foldReport, reportName, reportOf } from './report.js';
import { leanJob, makeLeanInformer } from '../../kube/informer.js';
import { GROUP, KINDS, LABELS, VERSION } from '../../kube/names.js';
import { apiMessage, isConflict, isNotFound, KindApi } from '../../kube/store/kube-api.js';
import { buildRunnerJob, INFERENCE_MANAGER, type InferenceJobSettings } from './job.js';
import { isFinal, runnerJobName, taskIdOf, TOKEN_KEY, TOKEN_OWNER_ANNOTATION, tokenSecretName, type InferenceJobResource, type InferenceJobStatus } from './resource.js';
import { patchInferenceJobStatus } from './store.js';
import { restartOnWatchError } from '../../kube/watch-restart.js';

export interface InferenceReconcilerOptions {
  kc: KubeConfig;
  namespace: string;
  /** Runner image, env (storage, models), ServiceAccount... (the flow launcher's settings fit). */
  launcherSettings: InferenceJobSettings;
  /** Checks a job's token Secret against its `spec.tokenHash` (keyed under ENCRYPTION_KEY, or unkeyed from earlier versions). */
  secrets: JobSecrets;
  /** How long a job waits for its token Secret before it fails (default 120 s). */
  secretWaitSeconds?: number;
  /** Every unfinished job is looked at again this often, besides watch events (default 10 s). */
  resyncSeconds?: number;
  /** Ended jobs are deleted (with their Secret, report and runner Job) this many hours after they ended (INFERENCE_RETENTION_HOURS; 0 keeps them). */
  retentionHours?: number;
  onError?: (err: unknown, where: string) => void;
}

export interface InferenceReconciler { stop(): Promise<void> }

type Cache<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

const jobCondition = (j: V1Job | undefined, type: string) => j?.status?.conditions?.find((c) => c.type === type && c.status === 'True');

export async function startInferenceReconciler(o: InferenceReconcilerOptions): Promise<InferenceReconciler> {
  const ns = o.namespace;
  const onError = o.onError ?? ((e, where) => console.error(`[inference-reconciler] ${where}: ${apiMessage(e)}`));
  const batch = o.kc.makeApiClient(BatchV1Api);
  const core = o.kc.makeApiClient(CoreV1Api);
  const api = new KindApi<InferenceJobResource>(o.kc, KINDS.InferenceJob, ns);
  const selector = `${LABELS.managedBy}=${INFERENCE_MANAGER}`;
  const ijs = makeInformer(o.kc, api.path, () => api.list() as never) as unknown as Cache<InferenceJobResource & KubernetesObject>;
  const jobs: Cache<V1Job> = makeLeanInformer(o.kc, `/apis/batch/v1/namespaces/${ns}/jobs`,
    (page) => batch.listNamespacedJob({ namespace: ns, labelSelector: selector, ...page }), { labelSelector: selector, transform: leanJob });
  const reports: Cache<V1ConfigMap> = makeLeanInformer(o.kc, `/api/v1/namespaces/${ns}/configmaps`,
    (page) => core.listNamespacedConfigMap({ namespace: ns, labelSelector: selector, ...page }), { labelSelector: selector });
  let stopped = false;
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();

  /** Serialises the work on one InferenceJob; an event during a pass schedules one more pass. */
  const schedule = (name: string): void => {
    if (stopped) return;
    if (running.has(name)) { again.add(name); return; }
    const p = reconcile(name).catch((e) => onError(e, `inference job ${name}`)).finally(() => {
      running.delete(name);
      if (again.delete(name)) schedule(name);
    });
    running.set(name, p);
  };
  const later = (name: string, ms: number): void => {
    const t = setTimeout(() => { timers.delete(t); schedule(name); }, ms);
    timers.add(t);
  };

  /**
   * Writes the status `change` computes from the job as the API has it now (not the cache: a status this reconciler
   * just wrote may not be there yet). Work on one job is serialised (schedule), so nothing else writes in between.
   */
  const write = async (name: string, change: (r: InferenceJobResource) => InferenceJobStatus | undefined): Promise<boolean> => {
    const fresh = await api.get(name);
    if (!fresh || isFinal(fresh.status?.status)) return false;
    const status = change(fresh);
    if (!status) return false;
    await patchInferenceJobStatus(o.kc, ns, name, status);
    return true;
  };
  const end = (r: InferenceJobResource, status: 'FAILED' | 'CANCELLED' | 'EXPIRED', error: string): Promise<boolean> =>
    write(r.metadata.name, () => ({ status, error, finished: new Date().toISOString() }));
  const fail = async (r: InferenceJobResource, error: string): Promise<void> => { await end(r, 'FAILED', error); };
  /** Folds the runner's report in; `fromApi` reads the ConfigMap from the API rather than the cache (after the runner exited). */
  const fold = async (r: InferenceJobResource, taskId: string, fromApi = false): Promise<boolean> => {
    const cm = fromApi
      ? await core.readNamespacedConfigMap({ name: reportName(taskId), namespace: ns }).catch((e) => { if (isNotFound(e)) return undefined; throw e; })
      : reports.get(reportName(taskId), ns);
    const rep = reportOf(cm);
    if (!rep) return false;
    await write(r.metadata.name, (fresh) => foldReport(fresh.status, rep));
    return true;
  };

  /** The last words of the job's newest failed Pod (its termination message: the runner's error output). */
  const podMessage = async (jobName: string): Promise<string | undefined> => {
    const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: `job-name=${jobName}` })).items as V1Pod[];
    const ended = pods.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => c.state?.terminated).filter((t) => t && t.exitCode !== 0))
      .sort((a, b) => new Date(b!.finishedAt ?? 0).getTime() - new Date(a!.finishedAt ?? 0).getTime());
    const t = ended[0];
    if (!t) return undefined;
    const lines = (t.message ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
    return `${t.reason ?? 'Error'} (exit ${t.exitCode})${lines.length ? `: ${lines.slice(-3).join(' | ').slice(-1000)}` : ''}`;
  };

  /** The token Secret the API made for this job (annotated with its uid) gets the job as owner, once. */
  const adopt = async (r: InferenceJobResource, secret: V1Secret): Promise<void> => {
    const m = secret.metadata;
    if (!m?.name || (m.ownerReferences?.length ?? 0) > 0 || m.annotations?.[TOKEN_OWNER_ANNOTATION] !== r.metadata.uid) return;
    const owner = { apiVersion: r.apiVersion, kind: r.kind, name: r.metadata.name, uid: r.metadata.uid!, controller: true, blockOwnerDeletion: true };
    await core.patchNamespacedSecret({ name: m.name, namespace: ns, body: { metadata: { resourceVersion: m.resourceVersion, ownerReferences: [owner] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  };

  /** A job deleted before its Secret was adopted: delete the Secret made for it (nothing else's). */
  const dropOrphanSecret = async (r: InferenceJobResource): Promise<void> => {
    const taskId = taskIdOf(r);
    if (!taskId) return;
    let secret: V1Secret;
    try { secret = await core.readNamespacedSecret({ name: tokenSecretName(taskId), namespace: ns }); } catch (e) { if (isNotFound(e)) return; throw e; }
    const m = secret.metadata;
    if ((m?.ownerReferences?.length ?? 0) > 0 || m?.annotations?.[TOKEN_OWNER_ANNOTATION] !== r.metadata.uid) return;
    try { await core.deleteNamespacedSecret({ name: m!.name!, namespace: ns, body: { preconditions: { uid: m!.uid!, resourceVersion: m!.resourceVersion! } } }); } catch (e) { if (!isNotFound(e) && !isConflict(e)) throw e; }
  };

  /** uids of ended jobs whose token Secret this process deleted (forgotten with the job). */
  const released = new Set<string>();
  /**
   * Ended jobs: the token Secret goes at once (nothing reads the token any more: the API reads `return_output` results
   * through the sealed folder), and the whole job once INFERENCE_RETENTION_HOURS have passed since it ended (its
   * Secret, report ConfigMap and runner Job go with it by owner references). Result files in the bucket are the caller's.
   */
  const sweep = async (): Promise<void> => {
    const retentionMs = (o.retentionHours ?? 0) * 3_600_000;
    for (const r of ijs.list(ns)) {
      const uid = r.metadata.uid;
      if (stopped || !uid || !isFinal(r.status?.status) || r.metadata.deletionTimestamp) continue;
      const ended = Date.parse(r.status?.finished ?? '');
      if (retentionMs > 0 && Number.isFinite(ended) && Date.now() - ended >= retentionMs) {
        await api.delete(r.metadata.name, { uid }).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; });
        continue;
      }
      const taskId = taskIdOf(r);
      if (released.has(uid) || !taskId || !r.spec.tokenSecretRef) continue;
      await core.deleteNamespacedSecret({ name: r.spec.tokenSecretRef.name, namespace: ns }).catch((e) => { if (!isNotFound(e)) throw e; });
      released.add(uid);
    }
  };
  let sweeping = false;

  async function reconcile(name: string): Promise<void> {
    const r = ijs.get(name, ns);
    if (!r || r.metadata.deletionTimestamp || isFinal(r.status?.status)) return;
    const taskId = taskIdOf(r);
    if (!taskId) return fail(r, 'the InferenceJob has no task id label');
    const jobName = runnerJobName(taskId);
    const job = jobs.get(jobName, ns);
    const reported = await fold(r, taskId);
    const expired = r.spec.expiresAt !== undefined && Date.now() >= Date.parse(r.spec.expiresAt);
    if (expired && !reported) {
      // Its window ended before any runner reported (none created yet, or its Pod never started): nothing was generated.
      if (await end(r, 'EXPIRED', EXPIRED_BEFORE_START) && job) {
        await batch.deleteNamespacedJob({ name: jobName, namespace: ns, propagationPolicy: 'Background' }).catch((e) => { if (!isNotFound(e)) throw e; });
      }
      return;
    }
    if (!job && r.spec.cancelRequested) {
      // Cancelled before its runner started: nothing to stop, nothing was generated.
      await end(r, 'CANCELLED', 'cancelled by its owner before it started');
      return;
    }
    if (!job) {
      const ref = r.spec.tokenSecretRef;
      if (!ref) return fail(r, 'the InferenceJob has no tokenSecretRef: the runner cannot reach the bucket folder');
      let secret: V1Secret;
      try { secret = await core.readNamespacedSecret({ name: ref.name, namespace: ns }); } catch (e) {
        if (!isNotFound(e)) throw e;
        const age = (Date.now() - new Date(String(r.metadata.creationTimestamp)).getTime()) / 1000;
        if (age > (o.secretWaitSeconds ?? 120)) return fail(r, `the access token Secret '${ref.name}' does not exist`);
        return later(name, 1000);
      }
      const token = Buffer.from(secret.data?.[ref.key ?? TOKEN_KEY] ?? '', 'base64').toString('utf8');
      if (!o.secrets.owns(token, r.spec.tokenHash)) {
        return fail(r, `the access token in Secret '${ref.name}' does not match the job's tokenHash (do the API and the operator share ENCRYPTION_KEY?)`);
      }
      await adopt(r, secret);
      // QUEUED before the Job exists, so this write can never land after the runner's first report.
      if (!r.status?.status) await write(name, (fresh) => (fresh.status?.status ? undefined : { status: 'QUEUED', message: `runner Job ${jobName}` }));
      try { await core.createNamespacedConfigMap({ namespace: ns, body: buildReportConfigMap(r, taskId) }); } catch (e) {
        if (!isConflict(e)) throw e;
      }
      try { await batch.createNamespacedJob({ namespace: ns, body: buildRunnerJob(r, ns, o.launcherSettings) }); } catch (e) {
        if (!isConflict(e)) throw e;
      }
      if (r.spec.expiresAt) later(name, Math.min(2 ** 31 - 1, Math.max(0, Date.parse(r.spec.expiresAt) - Date.now()) + 100));
      return;
    }
    const failed = jobCondition(job, 'Failed');
    const complete = jobCondition(job, 'Complete');
    // The runner reports before it exits: read its last report from the API before concluding anything from the Job.
    if (failed || complete) await fold(r, taskId, true);
    if (failed) {
      const why = await podMessage(jobName).catch(() => undefined);
      return fail(r, `the runner Job failed (${failed.reason ?? 'Failed'}: ${failed.message ?? ''})${why ? `; last Pod: ${why}` : ''}`);
    }
    if (complete) return fail(r, 'the runner ended without a final report');
  }

  const onIj = (r: InferenceJobResource) => { if (!isFinal(r.status?.status)) schedule(r.metadata.name); };
  const onJob = (j: V1Job) => {
    const owner = j.metadata?.ownerReferences?.find((ref) => ref.kind === KINDS.InferenceJob.kind && ref.apiVersion === `${GROUP}/${VERSION}`);
    if (owner) schedule(owner.name);
  };
  ijs.on('add', onIj);
  ijs.on('update', onIj);
  ijs.on('delete', (r) => {
    if (r.metadata.uid) released.delete(r.metadata.uid);
    dropOrphanSecret(r).catch((e) => onError(e, `token Secret of deleted inference job ${r.metadata.name}`));
  });
  jobs.on('add', onJob);
  jobs.on('update', onJob);
  jobs.on('delete', onJob);
  reports.on('add', onJob as never);
  reports.on('update', onJob as never);
  for (const inf of [ijs, jobs, reports] as Cache<KubernetesObject>[]) {
    // Routine watch ends restart quietly at once; failures back off and are reported once per streak.
    restartOnWatchError(inf as never, { report: (err) => onError(err, 'watch failed, restarting'), stopped: () => stopped, timers });
  }
  await Promise.all([jobs.start(), reports.start(), ijs.start()]);
  const resync = setInterval(() => {
    for (const r of ijs.list(ns)) onIj(r);
    if (sweeping) return;
    sweeping = true;
    sweep().catch((e) => onError(e, 'sweep of ended inference jobs')).finally(() => { sweeping = false; });
  }, (o.resyncSeconds ?? 10) * 1000);

  return {
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(resync);
      for (const t of timers) clearTimeout(t);
      await Promise.all([ijs.stop(), jobs.stop(), reports.stop()]);
      await Promise.all(running.values());
    },
  };
}
