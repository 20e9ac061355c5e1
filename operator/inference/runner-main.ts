// Command-line runner of one batch job: `tsx operator/inference/runner-main.ts <dataDir> <taskId>`. It runs (or
// resumes) the job to its end and exits 0 when it is final, so a Kubernetes Job (cluster mode, later) or any
// supervisor can run it; a crash leaves the job resumable by the next run.
import '../harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { join } from 'node:path';
import { BackendRegistry } from './backends/registry.js';
import { loadInferenceConfig } from './config.js';
import { JobStore } from './db.js';
import { JobRunner } from './runner.js';

export async function runOneJob(dataDir: string, taskId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = loadInferenceConfig(env);
  const store = new JobStore(join(dataDir, 'inference.db'));
  const backends = new BackendRegistry(config, config.modelsDir ?? join(dataDir, 'models'));
  try {
    const runner = new JobRunner(store, backends, config, (p) => console.log(`progress ${p.done + p.failed}/${p.total}`));
    await runner.run(taskId);
    return store.get(taskId)?.status ?? 'UNKNOWN';
  } finally {
    await backends.close();
    store.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dataDir, taskId] = process.argv.slice(2);
  if (!dataDir || !taskId) {
    console.error('usage: runner-main.ts <dataDir> <taskId>');
    process.exit(64);
  }
  const status = await runOneJob(dataDir, taskId);
  console.log(`job ${taskId}: ${status}`);
  process.exit(status === 'SUCCESS' || status === 'FAILED' ? 0 : 1);
}
