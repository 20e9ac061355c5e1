// Cluster-mode operator entry point (`node --import tsx operator/kube/main.ts`, the image's default command): loads the
// settings the Helm chart sets (docs/kubernetes.md), connects the internal storage bucket and the PostgreSQL log store,
// and runs the operator with leader election and execution partitions; `/metrics` and `/healthz` on
// METRICS_HOST:METRICS_PORT on every replica.
import '../harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { KubeConfig } from '@kubernetes/client-node';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initExpressions } from '../expr/index.js';
import { prepareFlowValidation } from '../model/index.js';
import { loadPluginPackages } from '../plugins/load.js';
import { createOperatorMetrics, serveMetrics } from '../metrics.js';
import { inferenceRunnerEnv, loadClusterSettings, loadLauncherSettings } from './config.js';
import { openClusterEdges } from './edges.js';
import { startOperator, type RunningOperator } from './operator.js';
import { startInferenceReconciler } from '../inference/kube/reconciler.js';
import { clusterJobSecrets } from '../inference/auth.js';
import { loadInferenceConfig } from '../inference/config.js';

/** METRICS_HOST: address of `/metrics` and `/healthz` (default 0.0.0.0, every interface: Prometheus scrapes the Pod IP). */
export function metricsHost(env: NodeJS.ProcessEnv): string {
  const host = env.METRICS_HOST?.trim() || '0.0.0.0';
  if (isIP(host) === 0 && !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host)) {
    throw new Error(`METRICS_HOST must be an IP address (0.0.0.0, 127.0.0.1, ::) or a host name, got '${env.METRICS_HOST}'`);
  }
  return host;
}

export async function main(env: NodeJS.ProcessEnv = process.env, kc?: KubeConfig): Promise<{ operator: RunningOperator; close(): Promise<void>; metricsPort: number; metricsHost: string }> {
  const settings = loadClusterSettings(env);
  const host = metricsHost(env);
  // Before anything starts: a credential that would be a literal in a Job spec stops the operator, naming it.
  const launcher = loadLauncherSettings(env, settings.namespace);
  const inferencePodEnv = inferenceRunnerEnv(env, settings.namespace);
  if (!kc) { kc = new KubeConfig(); kc.loadFromDefault(); }
  await initExpressions();
  await loadPluginPackages(env); // PLUGINS: task types of npm packages, before any flow is read
  prepareFlowValidation(); // the flow schema compiled before the informers deliver the first Flow
  const edges = await openClusterEdges({ storage: settings.storage, logStoreUrl: settings.logStoreUrl, ensureBucket: true, initLogs: true });
  const { storage, logs, archive } = edges;
  const metrics = createOperatorMetrics();
  const operator = await startOperator({
    kc, namespace: settings.namespace, identity: settings.identity, storage, logs, launcher,
    leaderElection: settings.leaderElection, partitions: settings.partitions, secretsSecretName: settings.secretsSecretName, env, metrics,
    archive: { archive, ttlSeconds: settings.executionTtlSeconds, sweepIntervalMs: settings.executionSweepIntervalMs },
    leaderTasks: [{
      name: 'inference',
      start: () => startInferenceReconciler({
        kc: kc!, namespace: settings.namespace, secrets: clusterJobSecrets(env, false), retentionHours: loadInferenceConfig(env).retentionHours,
        launcherSettings: {
          ...launcher, env: inferencePodEnv,
          ...(env.INFERENCE_RUNNER_SERVICE_ACCOUNT ? { runnerServiceAccountName: env.INFERENCE_RUNNER_SERVICE_ACCOUNT } : {}),
        },
      }),
    }],
  });
  const listening = await serveMetrics(metrics.registry, settings.metricsPort, host, () => ({ status: 'UP', leader: operator.isLeader(), partitions: operator.partitions() }));
  const metricsPort = listening.port;
  console.log(`[operator] ${settings.identity} watching namespace ${settings.namespace}; metrics on ${host}:${metricsPort}`);
  return {
    operator, metricsPort, metricsHost: host,
    async close() {
      await listening.close();
      await operator.stop();
      await edges.close();
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((m) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`[operator] ${signal}: shutting down`);
      void m.close().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  }, (err) => { console.error('[operator] failed to start:', err); process.exit(1); });
}
