// Runs one batch job to its end, resumably: VALIDATING checks the model, the model server and the bucket and loads the
// inputs before any generation; IN_PROGRESS generates every PENDING item (committing each outcome once) and flushes
// finished items to partial JSONL files as it goes; FINALIZING writes the output and error JSONL files, the manifest
// and the JSON document (last: it is the file a caller takes), then removes the partial files. A cancel or the end of
// the completion window stops generation and finalizes with what is done; a shutdown stops it for a later resume.
import type { Client } from 'minio';
import type { JobSecrets } from './auth.js';
import type { BackendRegistry } from './backends/registry.js';
import type { CompletionBackend } from './backends/types.js';
import type { InferenceConfig } from './config.js';
import { EXPIRED_BEFORE_START, FINAL_STATES, type ItemRow, type JobRow, type JobStore } from './db.js';
import { runItem } from './items.js';
import type { BatchRequest } from './request.js';
import { errorLine, finalState, jsonl, outputLine, resultFiles, writeResultFiles, type ResultItem } from './results.js';
import {
  bucketClient, endpointUrl, listNames, readInputFile, removePrefix, StorageError, writeText,
} from './storage.js';

export interface JobProgress { jobId: string; done: number; failed: number; total: number }

/** Why generation stopped early: the process stops (resume later), the owner cancelled, or the completion window ended. */
type StopReason = 'shutdown' | 'cancel' | 'expire';

const pad = (n: number): string => String(n).padStart(6, '0');

/** A stored item as the result files show it. */
const resultItem = (it: ItemRow): ResultItem => ({
  index: it.idx, custom_id: it.custom_id, input: JSON.parse(it.input), status: it.status,
  output: it.output === null ? null : JSON.parse(it.output), error: it.error, prompt_tokens: it.prompt_tokens, completion_tokens: it.completion_tokens,
});

/**
 * Flushes finished items to `<stem>-partial/output-<n>.jsonl` / `errors-<n>.jsonl` every `everyItems` items or
 * `everySeconds`: each item lands in one part (its number is committed after the write; a crash in between rewrites
 * the same part with a superset), so partial results survive a crash and the bytes written grow linearly.
 */
class PartialWriter {
  private chain: Promise<void> = Promise.resolve();
  private since = 0;
  private last = Date.now();

  constructor(private store: JobStore, private client: Client, private bucket: string, private prefix: string,
    private jobId: string, private everyItems: number, private everySeconds: number, private log: (m: string) => void) {}

  itemDone(): void {
    this.since++;
    if (this.since >= this.everyItems || Date.now() - this.last >= this.everySeconds * 1000) void this.flush();
  }

  flush(): Promise<void> {
    this.since = 0;
    this.last = Date.now();
    this.chain = this.chain.then(() => this.write()).catch((e) => this.log(`inference job ${this.jobId}: partial results not written: ${(e as Error).message}`));
    return this.chain;
  }

  /** Waits for a flush in progress (its part must be committed before the final files are written). */
  settled(): Promise<void> { return this.chain; }

  private async write(): Promise<void> {
    const { items, part } = this.store.unflushed(this.jobId);
    if (!items.length) return;
    const done = items.filter((i) => i.status === 'DONE');
    const failed = items.filter((i) => i.status === 'FAILED');
    if (done.length) await writeText(this.client, this.bucket, `${this.prefix}output-${pad(part)}.jsonl`, jsonl(done.map((i) => outputLine(resultItem(i)))), 'application/jsonl');
    if (failed.length) await writeText(this.client, this.bucket, `${this.prefix}errors-${pad(part)}.jsonl`, jsonl(failed.map((i) => errorLine(resultItem(i)))), 'application/jsonl');
    this.store.markFlushed(this.jobId, items.map((i) => i.idx), part);
  }
}

export class JobRunner {
  constructor(private store: JobStore, private backends: BackendRegistry, private config: InferenceConfig,
    private secrets: JobSecrets, private onProgress?: (p: JobProgress) => void, private log: (m: string) => void = () => {}) {}

  /**
   * Runs (or resumes) a job. Returns when it is final, or early, with items left PENDING, once `signal` aborts
   * (shutdown). `cancel` aborting ends it CANCELLED with what is done.
   */
  async run(jobId: string, signal?: AbortSignal, cancel?: AbortSignal): Promise<void> {
    const job = this.store.get(jobId);
    if (!job || FINAL_STATES.includes(job.status)) return;
    const req = JSON.parse(job.request) as BatchRequest;
    const notStarted = job.total === null;
    if (notStarted && (job.cancel_requested || cancel?.aborted)) return this.store.finish(jobId, 'CANCELLED', 'cancelled by its owner before it started');
    if (notStarted && Date.now() >= Date.parse(job.expires_at)) {
      return this.store.finish(jobId, 'EXPIRED', EXPIRED_BEFORE_START);
    }
    const folder = job.folder_sealed ? this.secrets.open(job.folder_sealed, jobId) : undefined;
    if (!folder) return this.store.finish(jobId, 'FAILED', "the job's bucket folder cannot be unsealed (was ENCRYPTION_KEY or <dataDir>/encryption.key changed?)");
    const access = { provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${jobId.slice(0, 16)}` };
    const client = bucketClient(this.config.storage, access);
    this.store.setState(jobId, 'VALIDATING');
    let backend: CompletionBackend;
    let stem: string;
    try {
      backend = await this.preflight(job, req, client, folder, endpointUrl(this.config.storage, access), signal);
      stem = this.store.status(jobId)!.result_stem!;
    } catch (e) {
      if (signal?.aborted) return;
      return this.store.finish(jobId, 'FAILED', (e as Error).message);
    }
    // A cancel that ended the job while it was being picked up (QUEUED -> CANCELLED at once) is not undone.
    if (FINAL_STATES.includes(this.store.status(jobId)!.status)) return;
    this.store.setState(jobId, 'IN_PROGRESS');

    const files = resultFiles(stem);
    const stop = new AbortController();
    let reason: StopReason | undefined;
    const stopFor = (r: StopReason) => (): void => { reason ??= r; stop.abort(); };
    const onShutdown = stopFor('shutdown'), onCancel = stopFor('cancel');
    if (signal?.aborted) onShutdown();
    if (cancel?.aborted || this.store.cancelRequested(jobId)) onCancel();
    signal?.addEventListener('abort', onShutdown, { once: true });
    cancel?.addEventListener('abort', onCancel, { once: true });
    const expiry = setTimeout(stopFor('expire'), Math.min(2 ** 31 - 1, Math.max(0, Date.parse(job.expires_at) - Date.now())));
    const partial = new PartialWriter(this.store, client, req.bucket_name, `${folder}/${files.partial}`, jobId,
      this.config.flushItems, this.config.flushSeconds, this.log);
    try {
      if (!reason) await this.generate(jobId, backend, req, stop.signal, partial);
      // Stopping for a restart: what is done goes to the partial files now. Otherwise the full files follow at once.
      if (reason === 'shutdown') { await partial.flush(); return; }
      await partial.settled();
      await this.finalize(client, jobId, req, folder, files, backend, reason);
    } catch (e) {
      if (reason === 'shutdown') return;
      const msg = e instanceof StorageError ? e.message : `job failed: ${(e as Error).message}`;
      this.store.finish(jobId, 'FAILED', msg);
    } finally {
      clearTimeout(expiry);
      signal?.removeEventListener('abort', onShutdown);
      cancel?.removeEventListener('abort', onCancel);
    }
  }

  /** Everything that can fail without generating: the model (GGUF file, server), the bucket, the inputs, the file names. */
  private async preflight(job: JobRow, req: BatchRequest, client: Client, folder: string, endpoint: string, signal?: AbortSignal): Promise<CompletionBackend> {
    const names = await listNames(client, req.bucket_name, `${folder}/`, endpoint); // the bucket first: cheapest
    let backend: CompletionBackend;
    try { backend = await this.backends.get(req.model); } catch (e) {
      throw new Error(`model '${req.model}' could not be loaded: ${(e as Error).message}`);
    }
    await backend.check(signal);
    this.store.setBackend(job.id, backend.label, backend.source);
    if (job.total === null) this.store.insertItems(job.id, await this.loadInputs(client, folder, req));
    if (!job.result_stem) {
      const file = resultFileName(job.id, names);
      this.store.resultStem(job.id, { stem: file.replace(/\.json$/, ''), file });
    }
    return backend;
  }

  private async loadInputs(client: Client, folder: string, req: BatchRequest): Promise<unknown[]> {
    const inputs = [...(req.list_inputs ?? [])];
    if (req.input_json_file) {
      inputs.push(...await readInputFile(client, req.bucket_name, `${folder}/${req.input_json_file}`,
        `${req.session}/${req.input_json_file}`));
    }
    if (inputs.length > this.config.maxInputs) throw new StorageError(`too many inputs: ${inputs.length} > ${this.config.maxInputs} (setting INFERENCE_MAX_INPUTS)`);
    return inputs;
  }

  /** Generates the PENDING items with as many in flight as the backend can batch. */
  private async generate(jobId: string, backend: CompletionBackend, req: BatchRequest, signal: AbortSignal, partial: PartialWriter): Promise<void> {
    const queue = this.store.pendingItems(jobId);
    const worker = async (): Promise<void> => {
      for (let item = queue.shift(); item && !signal.aborted; item = queue.shift()) {
        this.store.startItem(jobId, item.idx);
        let outcome;
        try {
          outcome = await runItem(backend, req, JSON.parse(item.input), item.idx, this.config.structuredRetries, signal);
        } catch (e) {
          if (signal.aborted) return;
          throw e;
        }
        if (signal.aborted) return;
        this.store.finishItem(jobId, item.idx, outcome);
        partial.itemDone();
        if (this.onProgress) {
          const j = this.store.status(jobId)!;
          this.onProgress({ jobId, done: j.done, failed: j.failed, total: j.total ?? 0 });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, backend.parallelism) }, worker));
  }

  private async finalize(client: Client, jobId: string, req: BatchRequest, folder: string, files: ReturnType<typeof resultFiles>,
    backend: CompletionBackend, reason: StopReason | undefined): Promise<void> {
    this.store.setState(jobId, 'FINALIZING');
    const job = this.store.get(jobId)!;
    const items = this.store.items(jobId);
    const stopped = reason === 'cancel' ? 'cancelled' : reason === 'expire' ? 'expired' : undefined;
    const { state, error } = finalState(items.length, job.done, job.failed, stopped);
    await writeResultFiles(client, folder, files.result.replace(/\.json$/, ''), items.map(resultItem), {
      taskId: jobId, req, backend: backend.label, modelFile: backend.source, state, error, created: job.created, stopped,
    });
    if (items.some((i) => i.part !== null)) await removePrefix(client, req.bucket_name, `${folder}/${files.partial}`);
    this.store.finish(jobId, state, error);
  }
}

const stamp = (d: Date): string => d.toISOString().replace(/[-:.]/g, '');

/**
 * `result-<UTC time>-<task id>.json`, prefixed with as many `~` as needed to sort (by byte order, as S3
 * lists) after every name already in the folder: inputs and every earlier result.
 */
export function resultFileName(jobId: string, existing: string[], now = new Date()): string {
  let name = `result-${stamp(now)}-${jobId.slice(0, 12)}.json`;
  const max = existing.reduce((m, n) => (Buffer.compare(Buffer.from(n), Buffer.from(m)) > 0 ? n : m), '');
  while (Buffer.compare(Buffer.from(name), Buffer.from(max)) <= 0) name = `~${name}`;
  return name;
}
