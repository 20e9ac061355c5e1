// Embedded mode entry point: one process with the SQLite store, the controller running tasks locally, the REST API
// (/api/v1) and the batch inference API (/v1/completions, /get_result) with its background worker.
// Settings: PORT (8080), HOST (127.0.0.1; another address needs authentication: BASIC_AUTH_USERNAME and
// BASIC_AUTH_PASSWORD, or API_TOKENS / API_TOKENS_FILE, see api/embedded-auth.ts), DATA_DIR (./data), SAMPLE_FLOW (true:
// load and run examples/flows/hello-world.yaml), TRIGGERS (true: run the trigger service: schedules, flow, polling and
// realtime triggers), SECRET_<NAME> (flow secrets), ENCRYPTION_KEY (seals SECRET inputs; default: <DATA_DIR>/encryption.key,
// created at first start). Every store write goes through the secret layer (operator/secrets): secrets masked, SECRET
// inputs encrypted. The README's "Security" section lists every limit and setting.
import './harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '../api/app.js';
import { embeddedAccess } from '../api/embedded-auth.js';
import { appRoot } from './app-root.js';
import { createInferenceRouter } from '../api/inference/router.js';
import { startServer } from '../api/server.js';
import { newExecution } from './core/execution.js';
import { newId } from './core/ids.js';
import { isTerminal } from './core/types.js';
import { Controller, createSecretRenderer } from './controller/index.js';
import { limitsFromEnv } from './core/limits.js';
import { initExpressions } from './expr/index.js';
import { startInferenceService } from './inference/index.js';
import { parseFlow, prepareFlowValidation, resolveInputs } from './model/index.js';
import { loadPluginPackages } from './plugins/load.js';
import { killOrphanProcesses } from './plugins/scripts/orphans.js';
import { embeddedSecrets, maskedStores } from './secrets/index.js';
import { openEmbeddedStores } from './store/sqlite/index.js';
import type { Stores } from './store/types.js';
import { createConditionEvaluator } from './triggers/conditions/index.js';
import { namespaceGrantsFromEnv } from './tenancy/namespaces.js';
import { startTriggerService } from './triggers/service.js';

const ROOT = appRoot(import.meta.url);

async function runSample(stores: Stores): Promise<void> {
  const source = readFileSync(resolve(ROOT, 'examples/flows/hello-world.yaml'), 'utf8');
  const { record } = await stores.flows.save(parseFlow(source), source);
  const exec = newExecution({ id: newId(), flow: record.flow, inputs: resolveInputs(record.flow.inputs, {}), now: new Date() });
  await stores.executions.create(exec);
  console.log(`[sample] started ${record.namespace}.${record.id} execution ${exec.id}`);
  const off = stores.executions.watch((e) => {
    if (e.execution.id !== exec.id || !isTerminal(e.execution.state.current)) return;
    off();
    console.log(`[sample] execution ${exec.id} ended ${e.execution.state.current}; outputs: ${JSON.stringify(e.execution.outputs ?? {})}`);
  });
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const port = Number(env.PORT ?? 8080);
  const access = embeddedAccess(env); // refuses a non-loopback HOST without authentication, before anything starts
  const host = access.host;
  const limits = limitsFromEnv(env); // a malformed limit setting is refused at start, naming it
  const dataDir = resolve(env.DATA_DIR ?? './data');
  await initExpressions();
  await loadPluginPackages(env); // PLUGINS: task types of npm packages, before any flow is read
  prepareFlowValidation(); // the flow schema compiled before serving, not at the first flow saved
  const stores = maskedStores(openEmbeddedStores(dataDir, { busyTimeoutMs: limits.storeBusyTimeoutMs, maxWrittenRuns: limits.executionCacheMaxTaskRuns }), embeddedSecrets(env, dataDir));
  await killOrphanProcesses(stores.processes, { limits }); // before any attempt is re-run
  const triggerDeps = {
    stores, renderer: createSecretRenderer(stores, env), clock: () => new Date(), env,
    onError: (err: unknown, where: string) => console.error(`[triggers] ${where}:`, err),
  };
  const controller = new Controller(stores, { dataDir, env }); // settings checked before listening
  const inference = await startInferenceService({ dataDir, env });
  // Webhook triggers: conditions and inputs with the same evaluator and secrets as the trigger service.
  const app = createApp({
    stores, conditions: createConditionEvaluator(triggerDeps), renderer: triggerDeps.renderer, limits,
    grants: namespaceGrantsFromEnv(env),
    admit: (execution) => controller.admit(execution), // eager start: one create holding the first step
  }, { before: access.before });
  app.use(createInferenceRouter(inference).routes());
  // Listen first (/healthz answers, executions are accepted), then recover: recovery only queues each active execution,
  // and one it cannot carry on fails on its own (controller.ts), so a poisoned record can never keep the server down.
  const server = await startServer(app, port, host);
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  console.log(`[server] embedded mode listening on http://${shownHost}:${server.port} (data in ${dataDir}; ${access.summary})`);
  await controller.start();
  const triggers = (env.TRIGGERS ?? 'true') === 'false' ? undefined : await startTriggerService(triggerDeps);
  if ((env.SAMPLE_FLOW ?? 'true') !== 'false') await runSample(stores);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[server] ${signal}: shutting down`);
    await server.close();
    await triggers?.stop();
    await controller.stop();
    await inference.stop();
    await stores.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => { console.error('[server] failed to start:', err); process.exit(1); });
}
