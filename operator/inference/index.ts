// Entry point of the embedded batch inference service: configuration, the job database
// (`<dataDir>/inference.db`), the model registry and the background worker, wired together.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BackendRegistry } from './backends/registry.js';
import { loadInferenceConfig, type InferenceConfig } from './config.js';
import { JobStore } from './db.js';
import { JobRunner } from './runner.js';
import { InferenceServiceImpl, type InferenceService } from './service.js';
import { InferenceWorker } from './worker.js';

export type { InferenceService, JobResultView, SubmitResult } from './service.js';
export { AuthError, IdempotencyConflictError, RequestError } from './service.js';
export { loadInferenceConfig, CONTRACT_MODEL_IDS } from './config.js';

export interface StartOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  /** Warnings and worker errors (default: console.warn). */
  log?: (message: string) => void;
  /** Run the background worker (default true; false for a pure API replica in front of Job runners). */
  worker?: boolean;
}

export async function startInferenceService(opts: StartOptions): Promise<InferenceService & { stop(): Promise<void>; config: InferenceConfig }> {
  const log = opts.log ?? ((m: string) => console.warn(m));
  const config = loadInferenceConfig(opts.env ?? process.env);
  mkdirSync(opts.dataDir, { recursive: true });
  if (config.demoModelIds.length) {
    log(`inference: models ${config.demoModelIds.join(', ')} are served by a tiny random-weights demo model (gibberish output); ` +
      'map them to real GGUF files or an OpenAI-compatible server (see operator/inference/README.md)');
  }
  if (config.tokenHashes.length === 0) log('inference: no access tokens configured (ACCESS_TOKENS); every submission will be refused with 401');
  const store = new JobStore(join(opts.dataDir, 'inference.db'));
  const backends = new BackendRegistry(config, config.modelsDir ?? join(opts.dataDir, 'models'));
  const runner = new JobRunner(store, backends, config);
  const worker = new InferenceWorker(store, runner, log);
  const service = new InferenceServiceImpl(config, store, backends, () => worker.wake());
  if (opts.worker !== false) worker.start();
  let stopped = false;
  return Object.assign(service, {
    config,
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await worker.stop();
      await backends.close();
      store.close();
    },
  });
}
