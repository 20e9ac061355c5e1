// Entry of the runner Pod of one InferenceJob: the one job runner (../runner.ts) over the cluster job channel
// (channel.ts: the job read from its resource, items committed to the bucket checkpoint, state reported through the
// report ConfigMap that the reconciler folds into the status). The owner's cancel (`spec.cancelRequested`) is looked
// for every 2 s. Exits 0 once the job is final (reported), non-zero otherwise (a transient error, a shutdown): the Job
// then retries the Pod, which resumes from the checkpoint.
// `node dist/operator/inference/kube/runner.js` (compiled by scripts/build.mjs; tsx runs the source too) with
// INFERENCE_JOB_NAME, POD_NAMESPACE and INFERENCE_ACCESS_TOKEN.
import '../../harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { BackendRegistry } from '../backends/registry.js';
import { loadInferenceConfig, type InferenceConfig } from '../config.js';
import type { FinalState } from '../db.js';
import { JobRunner } from '../runner.js';
import { ClusterJobChannel } from './channel.js';

export interface ClusterRunOptions {
  kc: KubeConfig;
  namespace: string;
  /** InferenceJob resource name. */
  name: string;
  token: string;
  config: InferenceConfig;
  /** Where the demo GGUF is generated (default config.modelsDir or a temp folder). */
  modelsDir?: string;
  /** Pod name, recorded with each item (shows which attempt generated it). */
  pod?: string;
  log?: (line: string) => void;
  /** Least pause between two progress reports (default 500 ms). */
  progressEveryMs?: number;
  /** How often the resource is read for the owner's cancel (default 2000 ms). */
  cancelCheckMs?: number;
  /** Aborted on SIGTERM: generation stops, finished items are flushed, the job stays open for the next Pod. */
  signal?: AbortSignal;
}

/** Runs (or resumes) the job; returns the final state it reported (`already`: final before it started), undefined when it stopped early. */
export async function runInferenceJobResource(o: ClusterRunOptions): Promise<FinalState | 'already' | undefined> {
  const log = o.log ?? ((l: string) => console.log(l));
  const backends = new BackendRegistry(o.config, o.modelsDir ?? o.config.modelsDir ?? join(tmpdir(), 'flowpilot-models'));
  const channel = new ClusterJobChannel({ kc: o.kc, namespace: o.namespace, name: o.name, token: o.token, storage: o.config.storage, pod: o.pod, progressEveryMs: o.progressEveryMs });
  const cancel = new AbortController();
  const watch = setInterval(() => {
    channel.cancelRequested().then((c) => { if (c) cancel.abort(); }, () => undefined);
  }, o.cancelCheckMs ?? 2000);
  try {
    await new JobRunner(backends, o.config, log).run(channel, o.signal, cancel.signal);
  } finally {
    clearInterval(watch);
    await backends.close();
  }
  return channel.ended;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const name = process.env.INFERENCE_JOB_NAME;
  const namespace = process.env.POD_NAMESPACE;
  const token = process.env.INFERENCE_ACCESS_TOKEN;
  if (!name || !namespace || !token) {
    console.error('runner: INFERENCE_JOB_NAME, POD_NAMESPACE and INFERENCE_ACCESS_TOKEN are required');
    process.exit(64);
  }
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  try {
    const ended = await runInferenceJobResource({ kc, namespace, name, token, config: loadInferenceConfig(process.env), pod: process.env.POD_NAME, signal: stop.signal });
    console.log(ended ? `final status ${ended}` : 'stopped before the end; the next Pod resumes');
    process.exit(ended ? 0 : 1);
  } catch (e) {
    console.error(`runner: ${(e as Error).stack ?? e}`);
    process.exit(1);
  }
}
