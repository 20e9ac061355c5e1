// Cluster-mode API entry point (`node --import tsx api/kube-main.ts`): the same Koa routes over the custom-resource
// stores, every /api/v1 request authenticated with the caller's bearer token (TokenReview) and authorized per resource
// verb (SubjectAccessReview); webhooks keep their key. `/metrics` and `/healthz` are served too. Its stores are behind the
// secret layer: SECRET inputs of the executions it creates are encrypted with ENCRYPTION_KEY (from the chart's Secret).
import '../operator/harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { KubeConfig } from '@kubernetes/client-node';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { limitsFromEnv } from '../operator/core/limits.js';
import { namespaceContextOf, prepareFlowValidation } from '../operator/model/index.js';
import { namespaceGrantsFromEnv } from '../operator/tenancy/namespaces.js';
import { initExpressions } from '../operator/expr/index.js';
import { loadPluginPackages } from '../operator/plugins/load.js';
import { loadClusterSettings } from '../operator/kube/config.js';
import { openClusterEdges } from '../operator/kube/edges.js';
import { openKubeStores, type KubeStores } from '../operator/kube/store/index.js';
import { envSecrets, maskedStores } from '../operator/secrets/index.js';
import { loadInferenceConfig } from '../operator/inference/config.js';
import { clusterJobSecrets } from '../operator/inference/auth.js';
import { clusterInferenceService } from '../operator/inference/kube/store.js';
import { startAdmissionServer } from './admission-server.js';
import { createApp } from './app.js';
import { createInferenceRouter } from './inference/router.js';
import { kubeAuth } from './auth.js';
import { createHttpMetrics } from './metrics.js';
import { startServer } from './server.js';

export async function main(env: NodeJS.ProcessEnv = process.env, kc?: KubeConfig): Promise<{ port: number; admissionPort?: number; stores: KubeStores; close(): Promise<void> }> {
  const settings = loadClusterSettings(env);
  if (!kc) { kc = new KubeConfig(); kc.loadFromDefault(); }
  await initExpressions();
  await loadPluginPackages(env); // PLUGINS: task types of npm packages, before any flow is read
  prepareFlowValidation(); // the flow schema compiled before serving, not at the first flow saved
  const edges = await openClusterEdges({ storage: settings.storage, logStoreUrl: settings.logStoreUrl, initLogs: true });
  const stores = maskedStores(await openKubeStores({ kc, namespace: settings.namespace, logs: edges.logs, storage: edges.storage, archive: edges.archive }), envSecrets(env));
  await stores.ready();
  const metrics = createHttpMetrics();
  const auth = env.API_AUTH === 'false' ? [] : [kubeAuth({ kc, namespace: settings.namespace })];
  const app = createApp({ stores, limits: limitsFromEnv(env), grants: namespaceGrantsFromEnv(env) }, { before: [metrics.middleware, ...auth] });
  app.use(metrics.router.routes());
  // Batch inference: POST /v1/completions creates an InferenceJob (its own bearer-token scheme, see operator/inference).
  const inferenceConfig = loadInferenceConfig(env);
  app.use(createInferenceRouter(clusterInferenceService({
    kc, namespace: settings.namespace, config: inferenceConfig, secrets: clusterJobSecrets(env, inferenceConfig.tokenHashes.length > 0),
  })).routes());
  const server = await startServer(app, Number(env.PORT ?? 8080), env.HOST ?? '0.0.0.0');
  console.log(`[api] cluster mode listening on :${server.port} (namespace ${settings.namespace})`);
  // Flow admission webhook over HTTPS (the chart mounts its certificate); absent when the TLS files are not set.
  const admission = await startAdmissionServer(env, {
    ownerOf: (ns, id) => stores.flows.res.liveFlow(ns, id)?.metadata.name,
    inheritedDefaults: (ns) => namespaceContextOf(stores.namespaces.chainSync(ns))?.pluginDefaults ?? [],
  }, env.HOST ?? '0.0.0.0');
  if (admission) console.log(`[api] flow admission webhook listening on :${admission.port} (https)`);
  return {
    port: server.port, admissionPort: admission?.port, stores,
    async close() {
      await admission?.close();
      await server.close();
      await stores.close();
      await edges.close();
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((m) => {
    const stop = () => void m.close().then(() => process.exit(0), () => process.exit(1));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  }, (err) => { console.error('[api] failed to start:', err); process.exit(1); });
}
