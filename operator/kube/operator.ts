// Cluster mode, composed: the stores on custom resources (every replica keeps their caches warm); the singletons on the
// replica holding the leader Lease (Flow reconciliation of kubectl-applied Flows, the trigger service, the inference
// reconciler; losing the Lease stops them at once); and the execution workers (the controller with one Job per task
// attempt). Partitioned (`partitions`, OPERATOR_PARTITIONS), every replica runs workers for the partitions it holds
// (partitions.ts); otherwise they run on the leader only. Every store write goes through the secret layer (values of
// the flow-secrets Secrets, refreshed on change; ENCRYPTION_KEY).
import type { KubeConfig } from '@kubernetes/client-node';
import { Controller } from '../controller/controller.js';
import { createSecretRenderer, secretFromEnv } from '../controller/secrets.js';
import { boxFromEnv, envSecretValues, maskedStores, SecretLayer, type MaskedStores } from '../secrets/index.js';
import { isTerminal, type ExecutionState } from '../core/types.js';
import type { OperatorMetrics } from '../metrics.js';
import type { InternalStorage, LogStore } from '../store/types.js';
import { defaultTriggerComponents, startTriggerService, type TriggerService } from '../triggers/service.js';
import { withExposedEnv, type LauncherSettings } from './job-spec.js';
import { KubeLauncher } from './launcher.js';
import { startLeaderElection, type LeaderElection } from './leader.js';
import { flowPartitionOf, partitionOf } from './partitioning.js';
import { startPartitions, type PartitionSet } from './partitions.js';
import { POD_SECRET_PREFIX } from './names.js';
import { startKubeSecrets } from './secrets.js';
import { openKubeStores, type KubeStores } from './store/index.js';
import { ExecutionSweeper } from './archive/sweeper.js';
import type { ExecutionArchive } from './archive/types.js';

export interface OperatorOptions {
  kc: KubeConfig;
  /** Kubernetes namespace of the resources and of the task Jobs. */
  namespace: string;
  /** Holder identity in the Lease (the Pod name). */
  identity: string;
  storage: InternalStorage;
  logs: LogStore;
  launcher: LauncherSettings;
  /** Disabled: this replica leads at once (a single replica, or tests). */
  leaderElection?: { enabled: boolean; leaseName: string; leaseDurationSec?: number; renewEverySec?: number };
  /**
   * Executions spread over the replicas in this many partitions (each a Lease named after the leader Lease, same
   * duration and renewal). Without leader election this replica holds them all. Unset: workers run on the leader only.
   */
  partitions?: number;
  /** Secret whose keys are the flow secrets (null: none; `SECRET_<NAME>` env only). */
  secretsSecretName?: string | null;
  /** Start the trigger service on the leader (default true). */
  triggers?: boolean;
  env?: NodeJS.ProcessEnv;
  clock?: () => Date;
  metrics?: OperatorMetrics;
  /** Extra work of the leader (e.g. the inference reconciler): started when leading, stopped when not. */
  leaderTasks?: { name: string; start(): Promise<{ stop(): Promise<void> }> }[];
  onError?: (err: unknown, where: string) => void;
  /** Execution history: reads fall back to it; the leader archives finished executions and deletes their resources after `ttlSeconds`. */
  archive?: { archive: ExecutionArchive; ttlSeconds: number; sweepIntervalMs: number };
}

export interface RunningOperator {
  /** The stores behind the secret layer. */
  stores: MaskedStores<KubeStores>;
  isLeader(): boolean;
  /** The controller while this replica runs one (partitioned: always; else while it leads). */
  controller(): Controller | undefined;
  /** Partitions this replica holds (partitioned mode), ascending. */
  partitions(): number[];
  /** The task launcher while this replica runs one (its caches' sizes: tests, the memory bench). */
  launcher(): KubeLauncher | undefined;
  /** Resolves when the leader's parts are started (tests). */
  whenLeading(): Promise<void>;
  /** Stops; `release: false` leaves the Leases to expire, as a replica killed at once would (tests of a crash). */
  stop(opts?: { release?: boolean }): Promise<void>;
}

interface Workers { controller: Controller; launcher: KubeLauncher }
interface Singletons { triggers?: TriggerService; stopFlows: () => void; extra: { stop(): Promise<void> }[] }


export async function startOperator(o: OperatorOptions): Promise<RunningOperator> {
  const env = o.env ?? process.env;
  const onError = o.onError ?? ((err, where) => console.error(`[operator] ${where}:`, err));
  const kubeStores = await openKubeStores({ kc: o.kc, namespace: o.namespace, logs: o.logs, storage: o.storage, onWatchError: (e) => onError(e, 'watch'), ...(o.archive ? { archive: o.archive.archive } : {}) });
  await kubeStores.ready();
  const secrets = o.secretsSecretName === null ? undefined
    : await startKubeSecrets({ kc: o.kc, namespace: o.namespace, secretName: o.secretsSecretName ?? 'flowpilot-secrets', onError: (e) => onError(e, 'secrets') });
  const box = boxFromEnv(env);
  const layer = new SecretLayer({ values: () => [...(secrets?.values() ?? []), ...envSecretValues(env)], ...(box ? { box } : {}) });
  const stopRefresh = secrets?.onChange(() => layer.refresh());
  const stores = maskedStores(kubeStores, layer);
  const lookup = (name: string) => secrets?.lookup(name) ?? secretFromEnv(env, name);
  const withSecrets: LauncherSettings = o.secretsSecretName === null ? o.launcher : {
    ...o.launcher,
    envFrom: [...(o.launcher.envFrom ?? []), { prefix: POD_SECRET_PREFIX, secretRef: { name: o.secretsSecretName ?? 'flowpilot-secrets', optional: true } }],
  };
  const launcherSettings = withExposedEnv(withSecrets, env);
  o.metrics?.setExecutionCountSource(() => {
    const counts: Partial<Record<ExecutionState, number>> = {};
    for (const obj of stores.executions.cache.list()) {
      const s = obj.status?.state as ExecutionState | undefined;
      if (s) counts[s] = (counts[s] ?? 0) + 1;
    }
    return counts;
  });

  // Task-run durations are observed once per execution, when it ends (its record then holds every run's dates).
  const observed = new Set<string>();
  const stopWatch = o.metrics ? stores.executions.watch((e) => {
    const exec = e.execution;
    if (!workers || !isTerminal(exec.state.current) || observed.has(exec.id) || !(partitionSet?.owns(exec.id) ?? true)) return;
    observed.add(exec.id);
    // Bounded, oldest first (clearing it all would observe recent executions twice on their next event).
    if (observed.size > 10_000) observed.delete(observed.values().next().value!);
    for (const run of exec.taskRunList) {
      const end = run.state.endDate, start = run.state.startDate;
      if (!end || !start) continue;
      o.metrics!.observeTaskRun(workers.controller.taskType(exec, run) ?? 'unknown', run.state.current, (Date.parse(end) - Date.parse(start)) / 1000);
    }
  }) : () => {};
  const sampleDepth = () => o.metrics?.setQueueDepth('executions', workers?.controller.queueDepth ?? 0);
  const depth = o.metrics ? setInterval(sampleDepth, 1000) : undefined;
  depth?.unref();

  let workers: Workers | undefined;
  let singletons: Singletons | undefined;
  let partitionSet: PartitionSet | undefined;
  sampleDepth();
  let transition: Promise<void> = Promise.resolve();
  let notifyLeading!: () => void;
  const leadingStarted = new Promise<void>((r) => { notifyLeading = r; });

  /** The controller and its Job launcher; `owns` limits them to the partitions held. */
  const startWorkers = async (owns?: (executionId: string) => boolean, startsFlow?: (namespace: string, flowId: string) => boolean): Promise<Workers> => {
    let launcher!: KubeLauncher;
    const controller = new Controller(stores, {
      env, secrets: lookup, ...(o.clock ? { clock: o.clock } : {}), ...(owns ? { owns } : {}), ...(startsFlow ? { startsFlow } : {}),
      launcher: (report) => (launcher = new KubeLauncher({
        kc: o.kc, namespace: o.namespace, storage: o.storage, report, settings: launcherSettings,
        executionResource: (id) => kubeStores.executions.resourceOf(id), ...(owns ? { owns } : {}),
        knownSecrets: (id) => layer.sealedValues(id),
      })),
      ...(o.metrics ? { observe: (ms: number, ok: boolean) => { o.metrics!.reconcileDuration.observe({ kind: 'execution' }, ms / 1000); if (!ok) o.metrics!.reconcileErrors.inc({ kind: 'execution' }); } } : {}),
    });
    await launcher.start();
    await controller.start();
    return { controller, launcher };
  };
  const stopWorkers = async (w: Workers | undefined) => {
    if (!w) return;
    await w.controller.stop();
    await w.launcher.stop();
  };

  /** What exactly one replica runs: Flow reconciliation (started by the caller), the trigger service, the leader tasks. */
  const startSingletons = async (stopFlows: () => void): Promise<Singletons> => {
    const renderer = createSecretRenderer(stores, env, lookup);
    const triggers = o.triggers === false ? undefined : await startTriggerService(
      { stores, renderer, clock: o.clock ?? (() => new Date()), env, onError },
      defaultTriggerComponents(),
    );
    const extra = [];
    // Finished executions move to the history database; their resources go after the TTL (operator/kube/archive).
    if (o.archive) {
      const sweeper = new ExecutionSweeper({
        store: kubeStores.executions, archive: o.archive.archive, ttlSeconds: o.archive.ttlSeconds, intervalMs: o.archive.sweepIntervalMs,
        ...(o.clock ? { clock: o.clock } : {}), onError,
      });
      sweeper.start();
      extra.push(sweeper);
    }
    for (const t of o.leaderTasks ?? []) extra.push(await t.start());
    return { ...(triggers ? { triggers } : {}), stopFlows, extra };
  };
  const stopSingletons = async (l: Singletons | undefined) => {
    if (!l) return;
    for (const e of l.extra.reverse()) await e.stop().catch((err) => onError(err, 'stopping leader task'));
    await l.triggers?.stop();
    l.stopFlows();
  };

  const partitioned = o.partitions !== undefined && o.leaderElection?.enabled === true;
  const lead = async () => {
    const stopFlows = stores.flows.reconcileOnChange((e) => onError(e, 'flow reconcile'));
    await stores.flows.ensureRevisions();
    // Unpartitioned, the leader runs the workers too (after the Flow revisions, as executions are bound to them).
    if (!partitioned) workers = await startWorkers();
    singletons = await startSingletons(stopFlows);
    notifyLeading();
  };
  const follow = async () => {
    const l = singletons;
    singletons = undefined;
    await stopSingletons(l);
    if (!partitioned) { const w = workers; workers = undefined; await stopWorkers(w); }
  };
  const serially = (f: () => Promise<void>) => { transition = transition.then(f).catch((e) => onError(e, 'leadership change')); return transition; };

  if (partitioned) {
    const count = o.partitions!;
    workers = await startWorkers((id) => partitionSet?.owns(id) ?? false, (ns, flowId) => partitionSet?.holds(flowPartitionOf(ns, flowId, count)) ?? false);
    const w = workers;
    partitionSet = startPartitions({
      kc: o.kc, namespace: o.namespace, group: o.leaderElection!.leaseName, identity: o.identity, partitions: count,
      ...(o.leaderElection!.leaseDurationSec ? { leaseDurationSec: o.leaderElection!.leaseDurationSec } : {}),
      ...(o.leaderElection!.renewEverySec ? { renewEverySec: o.leaderElection!.renewEverySec } : {}),
      // A partition acquired: its active executions resume from their records (a failed listing: the resync retries),
      // and the waiting executions of the concurrency-limited flows it decides the starts of are started or queued.
      onAcquired: async (p) => {
        await w.controller.recover((id) => partitionOf(id, count) === p);
        await w.controller.recoverStarts((ns, flowId) => flowPartitionOf(ns, flowId, count) === p);
      },
      // A partition lost: owns() is already false, so the controller and launcher drop its work as it comes.
      onLost: () => {},
      onError: (e) => onError(e, 'partitions'),
    });
  }

  let election: LeaderElection | undefined;
  if (o.leaderElection?.enabled === false || !o.leaderElection) await serially(lead);
  else {
    election = startLeaderElection({
      kc: o.kc, namespace: o.namespace, leaseName: o.leaderElection.leaseName, identity: o.identity,
      ...(o.leaderElection.leaseDurationSec ? { leaseDurationSec: o.leaderElection.leaseDurationSec } : {}),
      ...(o.leaderElection.renewEverySec ? { renewEverySec: o.leaderElection.renewEverySec } : {}),
      onStartedLeading: () => { void serially(lead); },
      onStoppedLeading: () => { void serially(follow); },
      onError: (e) => onError(e, 'leader election'),
    });
  }

  return {
    stores,
    isLeader: () => singletons !== undefined,
    controller: () => workers?.controller,
    partitions: () => partitionSet?.held() ?? [],
    launcher: () => workers?.launcher,
    whenLeading: () => leadingStarted,
    async stop(opts = {}) {
      await election?.stop(opts);
      await partitionSet?.stop(opts);
      stopWatch();
      if (depth) clearInterval(depth);
      await serially(follow);
      if (partitioned) { const w = workers; workers = undefined; await stopWorkers(w); }
      stopRefresh?.();
      await secrets?.stop();
      await stores.close();
    },
  };
}
