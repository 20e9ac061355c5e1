// Entry point of the embedded batch inference service: configuration, the job database
// (`<dataDir>/inference.db`), the model registry and the background worker, wired together.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BackendRegistry } from './backends/registry.js';
import { loadInferenceConfig, type InferenceConfig } from './config.js';
import { embeddedBox } from '../secrets/key.js';
import { JobSecrets } from './auth.js';
import { JobStore } from './db.js';
import { SqliteJobChannel } from './channel.js';
import { JobRunner } from './runner.js';
import { InferenceServiceImpl, type InferenceService } from './service.js';
import { SqliteInferenceJobStore } from './store.js';
import { InferenceWorker } from './worker.js';

export type { InferenceService, JobList, JobResultView, SubmitResult } from './service.js';
export type { ModelDetails } from './backends/types.js';
export { AuthError, IdempotencyConflictError, listLimit, NotFoundError, RequestError, SchemaMismatchError } from './service.js';
export { loadInferenceConfig, CONTRACT_MODEL_IDS } from './config.js';

export interface StartOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  /** Warnings and worker errors (default: console.warn). */
  log?: (message: string) => void;
  /** Run the background worker (default true; false for a pure API replica in front of Job runners). */
  worker?: boolean;
}

export async function startInferenceService(opts: StartOptions): Promise<InferenceService & {
  stop(): Promise<void>; config: InferenceConfig;
  /** Purges the rows of jobs that ended more than INFERENCE_RETENTION_HOURS before `now` (the worker does it every 10 minutes). */
  purge(now?: number): number;
}> {
  const log = opts.log ?? ((m: string) => console.warn(m));
  const config = loadInferenceConfig(opts.env ?? process.env);
  mkdirSync(opts.dataDir, { recursive: true });
  if (config.demoModelIds.length) {
    log(`inference: models ${config.demoModelIds.join(', ')} are served by a tiny random-weights demo model (gibberish output); ` +
      'map them to real GGUF files or an OpenAI-compatible server (see operator/inference/README.md)');
  }
  if (config.tokenHashes.length === 0) log('inference: no access tokens configured (ACCESS_TOKENS); every submission will be refused with 401');
  // Job rows keep the owner's token as a keyed hash and the bucket folder sealed, under the service's encryption key.
  const secrets = new JobSecrets(embeddedBox(opts.env ?? process.env, opts.dataDir));
  const store = new JobStore(join(opts.dataDir, 'inference.db'), secrets);
  const backends = new BackendRegistry(config, config.modelsDir ?? join(opts.dataDir, 'models'));
  // GGUF paths are checked at start (and again at submit and before each job).
  for (const id of backends.ids()) { const why = backends.unavailable(id); if (why) log(`inference: ${why}; jobs for it are refused`); }
  const runner = new JobRunner(backends, config, log);
  const worker = new InferenceWorker(store, runner, (id) => new SqliteJobChannel(store, secrets, id), log, 2, config.retentionHours);
  const service = new InferenceServiceImpl(config, new SqliteInferenceJobStore(store, secrets), backends, secrets, { worker, localModels: true });
  if (opts.worker !== false) worker.start();
  let stopped = false;
  return Object.assign(service, {
    config,
    purge: (now?: number) => worker.purge(now),
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await worker.stop();
      await backends.close();
      store.close();
    },
  });
}
