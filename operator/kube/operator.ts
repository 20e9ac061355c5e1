// Cluster mode, composed: the stores on custom resources (every replica keeps their caches warm), and on the replica
// holding the Lease: Flow reconciliation (kubectl-applied Flows → revisions), the controller with one Job per task
// attempt, the trigger service and the inference reconciler. Losing the Lease stops all of them at once. Every store
// write goes through the secret layer (values of the flow-secrets Secrets, refreshed on change; ENCRYPTION_KEY).
import type { KubeConfig } from '@kubernetes/client-node';
import { Controller } from '../controller/controller.js';
import { createSecretRenderer, secretFromEnv } from '../controller/secrets.js';
import { boxFromEnv, envSecretValues, maskedStores, SecretLayer, type MaskedStores } from '../secrets/index.js';
import { isTerminal, type ExecutionState } from '../core/types.js';
import type { OperatorMetrics } from '../metrics.js';
import type { InternalStorage, LogStore } from '../store/types.js';
import { defaultTriggerComponents, startTriggerService, type TriggerService } from '../triggers/service.js';
import type { LauncherSettings } from './job-spec.js';
import { KubeLauncher } from './launcher.js';
import { startLeaderElection, type LeaderElection } from './leader.js';
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
  /** The controller while this replica leads. */
  controller(): Controller | undefined;
  /** The task launcher while this replica leads (its caches' sizes: tests, the memory bench). */
  launcher(): KubeLauncher | undefined;
  /** Resolves when the leader's parts are started (tests). */
  whenLeading(): Promise<void>;
  stop(): Promise<void>;
}


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
  const launcherSettings: LauncherSettings = o.secretsSecretName === null ? o.launcher : {
    ...o.launcher,
    envFrom: [...(o.launcher.envFrom ?? []), { prefix: POD_SECRET_PREFIX, secretRef: { name: o.secretsSecretName ?? 'flowpilot-secrets', optional: true } }],
  };
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
    if (!leading || !isTerminal(exec.state.current) || observed.has(exec.id)) return;
    observed.add(exec.id);
    // Bounded, oldest first (clearing it all would observe recent executions twice on their next event).
    if (observed.size > 10_000) observed.delete(observed.values().next().value!);
    for (const run of exec.taskRunList) {
      const end = run.state.endDate, start = run.state.startDate;
      if (!end || !start) continue;
      o.metrics!.observeTaskRun(leading.controller.taskType(exec, run) ?? 'unknown', run.state.current, (Date.parse(end) - Date.parse(start)) / 1000);
    }
  }) : () => {};
  const sampleDepth = () => o.metrics?.setQueueDepth('executions', leading?.controller.queueDepth ?? 0);
  const depth = o.metrics ? setInterval(sampleDepth, 1000) : undefined;
  depth?.unref();

  let leading: { controller: Controller; launcher: KubeLauncher; triggers?: TriggerService; stopFlows: () => void; extra: { stop(): Promise<void> }[] } | undefined;
  sampleDepth();
  let transition: Promise<void> = Promise.resolve();
  let notifyLeading!: () => void;
  const leadingStarted = new Promise<void>((r) => { notifyLeading = r; });

  const lead = async () => {
    const stopFlows = stores.flows.reconcileOnChange((e) => onError(e, 'flow reconcile'));
    await stores.flows.ensureRevisions();
    let launcher!: KubeLauncher;
    const controller = new Controller(stores, {
      env, secrets: lookup, ...(o.clock ? { clock: o.clock } : {}),
      launcher: (report) => (launcher = new KubeLauncher({
        kc: o.kc, namespace: o.namespace, storage: o.storage, report, settings: launcherSettings,
        executionResource: (id) => kubeStores.executions.resourceOf(id),
      })),
      ...(o.metrics ? { observe: (ms: number, ok: boolean) => { o.metrics!.reconcileDuration.observe({ kind: 'execution' }, ms / 1000); if (!ok) o.metrics!.reconcileErrors.inc({ kind: 'execution' }); } } : {}),
    });
    await launcher.start();
    await controller.start();
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
    leading = { controller, launcher, ...(triggers ? { triggers } : {}), stopFlows, extra };
    notifyLeading();
  };

  const follow = async () => {
    const l = leading;
    leading = undefined;
    if (!l) return;
    for (const e of l.extra.reverse()) await e.stop().catch((err) => onError(err, 'stopping leader task'));
    await l.triggers?.stop();
    await l.controller.stop();
    await l.launcher.stop();
    l.stopFlows();
  };
  const serially = (f: () => Promise<void>) => { transition = transition.then(f).catch((e) => onError(e, 'leadership change')); return transition; };

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
    isLeader: () => leading !== undefined,
    controller: () => leading?.controller,
    launcher: () => leading?.launcher,
    whenLeading: () => leadingStarted,
    async stop() {
      await election?.stop();
      stopWatch();
      if (depth) clearInterval(depth);
      await serially(follow);
      stopRefresh?.();
      await secrets?.stop();
      await stores.close();
    },
  };
}

