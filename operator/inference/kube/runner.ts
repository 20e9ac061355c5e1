// Runs one InferenceJob inside its Kubernetes Job's Pod: reads the request from the resource, the access token from
// the environment (the job's Secret, mapped by the Pod spec), generates every item not already committed in the bucket
// checkpoint (checkpoint.ts), writes the result files with the embedded runner's writer (results.ts: output and error
// JSONL, manifest, JSON document), and reports progress and the final status (SUCCESS / FAILED with counts) through the
// InferenceJob's status subresource. Like the embedded runner it checks the bucket and the model server first.
// `node dist/operator/inference/kube/runner.js` (compiled by scripts/build.mjs; tsx runs the source too) with
// INFERENCE_JOB_NAME, POD_NAMESPACE and INFERENCE_ACCESS_TOKEN.
import '../../harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { hashToken } from '../auth.js';
import { BackendRegistry } from '../backends/registry.js';
import type { CompletionBackend } from '../backends/types.js';
import { loadInferenceConfig, type InferenceConfig } from '../config.js';
import { runItem } from '../items.js';
import type { BatchRequest } from '../request.js';
import { finalState, writeResultFiles, type ResultItem } from '../results.js';
import { customIdOf } from '../db.js';
import { resultFileName } from '../runner.js';
import { bucketClient, endpointUrl, listNames, readInputFile, StorageError } from '../storage.js';
import { KindApi } from '../../kube/store/kube-api.js';
import { KINDS } from '../../kube/names.js';
import { BucketCheckpoint, type StoredOutcome } from './checkpoint.js';
import { isFinal, requestOf, taskIdOf, type InferenceJobResource, type InferenceJobStatus } from './resource.js';
import { patchInferenceJobStatus } from './store.js';

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
  /** Least pause between two progress patches (default 500 ms). */
  progressEveryMs?: number;
  /** How often the resource is read for the owner's cancel (default 2000 ms). */
  cancelCheckMs?: number;
}

const now = (): string => new Date().toISOString();

/** Runs (or resumes) the job; returns its final status. Throws on a transient failure (the Job's Pod then retries). */
export async function runInferenceJobResource(o: ClusterRunOptions): Promise<'SUCCESS' | 'FAILED' | 'CANCELLED'> {
  const log = o.log ?? ((l: string) => console.log(l));
  const api = new KindApi<InferenceJobResource>(o.kc, KINDS.InferenceJob, o.namespace);
  const r = await api.get(o.name);
  if (!r) throw new Error(`InferenceJob ${o.name} not found`);
  if (isFinal(r.status?.status)) return r.status!.status as 'SUCCESS' | 'FAILED' | 'CANCELLED';
  const patch = (s: InferenceJobStatus) => patchInferenceJobStatus(o.kc, o.namespace, o.name, s);
  const fail = async (error: string): Promise<'FAILED'> => {
    await patch({ status: 'FAILED', error, finished: now() });
    log(`job failed: ${error}`);
    return 'FAILED';
  };
  const taskId = taskIdOf(r) ?? o.name;
  if (hashToken(o.token) !== r.spec.tokenHash) return fail('the access token given to the runner does not match the job');
  const req = requestOf(r.spec);
  const backends = new BackendRegistry(o.config, o.modelsDir ?? o.config.modelsDir ?? join(tmpdir(), 'flowpilot-models'));
  try {
    const folder = `${o.token}/${req.session}`;
    const access = { provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${taskId.slice(0, 16)}` };
    const client = bucketClient(o.config.storage, access);
    // Before any generation: the bucket and credentials, the model (GGUF file), the model server.
    try { await listNames(client, req.bucket_name, `${folder}/`, endpointUrl(o.config.storage, access)); } catch (e) {
      if (e instanceof StorageError) return await fail(e.message);
      throw e;
    }
    let backend: CompletionBackend;
    try { backend = await backends.get(req.model); } catch (e) {
      return await fail(`model '${req.model}' could not be loaded: ${(e as Error).message}`);
    }
    try { await backend.check(); } catch (e) { return await fail((e as Error).message); }
    await patch({ status: 'RUNNING', backend: backend.label, started: r.status?.started ?? now() });
    const ckpt = new BucketCheckpoint(client, req.bucket_name, folder, taskId);
    try {
      let inputs = await ckpt.inputs();
      if (!inputs) {
        inputs = [...(req.list_inputs ?? [])];
        if (req.input_json_file) inputs.push(...await readInputFile(client, req.bucket_name, `${folder}/${req.input_json_file}`, `${req.session}/${req.input_json_file}`));
        if (inputs.length > o.config.maxInputs) throw new StorageError(`too many inputs: ${inputs.length} > ${o.config.maxInputs}`);
        await ckpt.saveInputs(inputs);
      }
      const items = await ckpt.items();
      if (items.size) log(`resuming: ${items.size} of ${inputs.length} items already finished`);
      // The owner's cancel (spec.cancelRequested) is looked for every 2 s: generation stops, in-flight items are dropped.
      const cancel = new AbortController();
      const watch = setInterval(() => {
        api.get(o.name).then((x) => { if (x?.spec.cancelRequested) cancel.abort(); }, () => undefined);
      }, o.cancelCheckMs ?? 2000);
      if (r.spec.cancelRequested) cancel.abort();
      try { await generate(o, req, backend, inputs, items, ckpt, patch, cancel.signal); } finally { clearInterval(watch); }
      const key = (await ckpt.resultKey()) ?? `${folder}/${resultFileName(taskId, await listNames(client, req.bucket_name, `${folder}/`))}`;
      await ckpt.saveResultKey(key);
      const final = await writeResult(client, req, taskId, r, folder, key, backend, inputs, items, cancel.signal.aborted);
      await patch(final);
      await ckpt.remove();
      log(`job ${taskId}: ${final.status} (${final.done} done, ${final.failed} failed of ${final.total})`);
      return final.status as 'SUCCESS' | 'FAILED' | 'CANCELLED';
    } catch (e) {
      if (e instanceof StorageError) return await fail(e.message);
      throw e;
    }
  } finally {
    await backends.close();
  }
}

type Patch = (s: InferenceJobStatus) => Promise<unknown>;

const counts = (inputs: unknown[], items: Map<number, StoredOutcome>) => {
  let done = 0, failed = 0, promptTokens = 0, completionTokens = 0;
  for (const it of items.values()) {
    if (it.status === 'DONE') done++; else failed++;
    promptTokens += it.promptTokens; completionTokens += it.completionTokens;
  }
  return { total: inputs.length, done, failed, promptTokens, completionTokens };
};

/** Generates the items missing from `items` (as many at once as the backend batches), committing each to the bucket. */
async function generate(o: ClusterRunOptions, req: BatchRequest, backend: CompletionBackend, inputs: unknown[],
  items: Map<number, StoredOutcome>, ckpt: BucketCheckpoint, patch: Patch, cancel: AbortSignal): Promise<void> {
  await patch(counts(inputs, items));
  const queue = inputs.map((_, i) => i).filter((i) => !items.has(i));
  let last = Date.now();
  let patching: Promise<unknown> = Promise.resolve();
  const worker = async (): Promise<void> => {
    for (let idx = queue.shift(); idx !== undefined && !cancel.aborted; idx = queue.shift()) {
      let outcome;
      try { outcome = await runItem(backend, req, inputs[idx], idx, o.config.structuredRetries, cancel); } catch (e) {
        if (cancel.aborted) return;
        throw e;
      }
      if (cancel.aborted) return;
      const stored: StoredOutcome = { ...outcome, index: idx, finished: now(), ...(o.pod ? { pod: o.pod } : {}) };
      await ckpt.saveItem(stored);
      items.set(idx, stored);
      if (Date.now() - last >= (o.progressEveryMs ?? 500)) {
        last = Date.now();
        patching = patching.then(() => patch(counts(inputs, items)));
        await patching;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, backend.parallelism) }, worker));
  await patching;
}

const isoOrNull = (d: unknown): string | null => (d instanceof Date ? d.toISOString() : typeof d === 'string' ? d : null);

async function writeResult(client: ReturnType<typeof bucketClient>, req: BatchRequest, taskId: string, r: InferenceJobResource,
  folder: string, key: string, backend: CompletionBackend, inputs: unknown[], items: Map<number, StoredOutcome>, cancelled: boolean): Promise<InferenceJobStatus> {
  const results: ResultItem[] = inputs.map((input, index) => {
    const it = items.get(index);
    return {
      index, custom_id: customIdOf(input, index), input, status: it?.status ?? 'PENDING', output: it?.output ?? null, error: it?.error ?? null,
      prompt_tokens: it?.promptTokens ?? 0, completion_tokens: it?.completionTokens ?? 0,
    };
  });
  const c = counts(inputs, items);
  const stopped = cancelled ? 'cancelled' : undefined;
  const { state, error } = finalState(c.total, c.done, c.failed, stopped);
  const status = state === 'SUCCESS' ? 'SUCCESS' : state === 'CANCELLED' ? 'CANCELLED' : 'FAILED';
  await writeResultFiles(client, folder, key.slice(folder.length + 1).replace(/\.json$/, ''), results, {
    taskId, req, backend: backend.label, modelFile: backend.source, state, error, created: isoOrNull(r.metadata.creationTimestamp), stopped,
  });
  return { status, ...c, resultPaths: [key], finished: now(), ...(error ? { error } : {}) };
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
  try {
    const status = await runInferenceJobResource({ kc, namespace, name, token, config: loadInferenceConfig(process.env), pod: process.env.POD_NAME });
    console.log(`final status ${status}`);
    process.exit(0);
  } catch (e) {
    console.error(`runner: ${(e as Error).stack ?? e}`);
    process.exit(1);
  }
}
