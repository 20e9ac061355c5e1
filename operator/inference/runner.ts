// Runs one batch job to its end, resumably: VALIDATING checks the model, the model server and the bucket and loads the
// inputs before any generation; IN_PROGRESS generates every PENDING item (committing each outcome once) and flushes
// finished items to partial JSONL files as it goes; FINALIZING writes the output and error JSONL files, the manifest
// and the JSON document (last: it is the file a caller takes), then removes the partial files. A cancel or the end of
// the completion window stops generation and finalizes with what is done; a shutdown stops it for a later resume.
// One runner for both homes: it reads its job and reports through a job channel (channel.ts: SQLite embedded, the
// bucket checkpoint and a report ConfigMap in cluster mode).
import type { Client } from 'minio';
import type { BackendRegistry } from './backends/registry.js';
import type { CompletionBackend } from './backends/types.js';
import type { JobChannel, RunnableJob } from './channel.js';
import type { InferenceConfig } from './config.js';
import { EXPIRED_BEFORE_START } from './db.js';
import { runItem } from './items.js';
import type { BatchRequest } from './request.js';
import { errorLine, finalState, jsonl, outputLine, resultFiles, writeResultFiles } from './results.js';
import {
  bucketClient, endpointUrl, listNames, readInputFile, removePrefix, StorageError, writeText,
} from './storage.js';

/** Why generation stopped early: the process stops (resume later), the owner cancelled, or the completion window ended. */
type StopReason = 'shutdown' | 'cancel' | 'expire';

const pad = (n: number): string => String(n).padStart(6, '0');

/**
 * Flushes finished items to `<stem>-partial/output-<n>.jsonl` / `errors-<n>.jsonl` every `everyItems` items or
 * `everySeconds`: each item lands in one part (its number is committed after the write; a crash in between rewrites
 * the same part with a superset), so partial results survive a crash and the bytes written grow linearly.
 */
class PartialWriter {
  private chain: Promise<void> = Promise.resolve();
  private since = 0;
  private last = Date.now();
  /** A part was (perhaps) written by this runner: its record may be missing, so only a listing finds it. */
  wrote = false;

  constructor(private channel: JobChannel, private client: Client, private bucket: string, private prefix: string,
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
    const { items, part } = await this.channel.unflushed();
    if (!items.length) return;
    this.wrote = true;
    const done = items.filter((i) => i.status === 'DONE');
    const failed = items.filter((i) => i.status === 'FAILED');
    if (done.length) await writeText(this.client, this.bucket, `${this.prefix}output-${pad(part)}.jsonl`, jsonl(done.map(outputLine)), 'application/jsonl');
    if (failed.length) await writeText(this.client, this.bucket, `${this.prefix}errors-${pad(part)}.jsonl`, jsonl(failed.map((i) => errorLine(i))), 'application/jsonl');
    await this.channel.markFlushed(items.map((i) => i.index), part);
  }
}

/** The one job runner of both homes: it reads its job and reports through a JobChannel (channel.ts). */
export class JobRunner {
  constructor(private backends: BackendRegistry, private config: InferenceConfig, private log: (m: string) => void = () => {}) {}

  /**
   * Runs (or resumes) a job. Returns when it is final, or early, with items left to generate, once `signal` aborts
   * (shutdown). `cancel` aborting ends it CANCELLED with what is done.
   */
  async run(channel: JobChannel, signal?: AbortSignal, cancel?: AbortSignal): Promise<void> {
    const job = await channel.open();
    if (!job) return;
    const req = job.request;
    if (!job.started && (job.cancelRequested || cancel?.aborted)) return channel.finish('CANCELLED', 'cancelled by its owner before it started');
    if (!job.started && Date.now() >= Date.parse(job.expiresAt)) return channel.finish('EXPIRED', EXPIRED_BEFORE_START);
    const folder = job.folder;
    if (!folder) return channel.finish('FAILED', job.folderError ?? "the job's bucket folder is not known");
    const access = { provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${job.id.slice(0, 16)}` };
    const client = bucketClient(this.config.storage, access);
    // A cancel that ended the job while it was being picked up (QUEUED -> CANCELLED at once) is not undone.
    if (!await channel.setState('VALIDATING')) return;
    let backend: CompletionBackend;
    let stem: string;
    try {
      ({ backend, stem } = await this.preflight(channel, job, client, folder, endpointUrl(this.config.storage, access), signal));
    } catch (e) {
      if (signal?.aborted) return;
      return channel.finish('FAILED', (e as Error).message);
    }
    if (!await channel.setState('IN_PROGRESS')) return;

    const files = resultFiles(stem);
    const stop = new AbortController();
    let reason: StopReason | undefined;
    const stopFor = (r: StopReason) => (): void => { reason ??= r; stop.abort(); };
    const onShutdown = stopFor('shutdown'), onCancel = stopFor('cancel');
    if (signal?.aborted) onShutdown();
    if (cancel?.aborted || await channel.cancelRequested()) onCancel();
    signal?.addEventListener('abort', onShutdown, { once: true });
    cancel?.addEventListener('abort', onCancel, { once: true });
    const expiry = setTimeout(stopFor('expire'), Math.min(2 ** 31 - 1, Math.max(0, Date.parse(job.expiresAt) - Date.now())));
    const partial = new PartialWriter(channel, client, req.bucket_name, `${folder}/${files.partial}`, job.id,
      this.config.flushItems, this.config.flushSeconds, this.log);
    try {
      if (!reason) await this.generate(channel, backend, req, stop.signal, partial);
      // Stopping for a restart: what is done goes to the partial files now. Otherwise the full files follow at once.
      if (reason === 'shutdown') { await partial.flush(); return; }
      await partial.settled();
      await this.finalize(channel, client, job, folder, files, backend, reason, partial.wrote);
    } catch (e) {
      if (reason === 'shutdown') return;
      const msg = e instanceof StorageError ? e.message : `job failed: ${(e as Error).message}`;
      await channel.finish('FAILED', msg);
    } finally {
      clearTimeout(expiry);
      signal?.removeEventListener('abort', onShutdown);
      cancel?.removeEventListener('abort', onCancel);
    }
  }

  /** Everything that can fail without generating: the model (GGUF file, server), the bucket, the inputs, the file names. */
  private async preflight(channel: JobChannel, job: RunnableJob, client: Client, folder: string, endpoint: string,
    signal?: AbortSignal): Promise<{ backend: CompletionBackend; stem: string }> {
    const req = job.request;
    const names = await listNames(client, req.bucket_name, `${folder}/`, endpoint); // the bucket first: cheapest
    let backend: CompletionBackend;
    try { backend = await this.backends.get(req.model); } catch (e) {
      throw new Error(`model '${req.model}' could not be loaded: ${(e as Error).message}`);
    }
    await backend.check(signal);
    await channel.setBackend(backend.label, backend.source);
    await channel.ensureInputs(() => this.loadInputs(client, folder, req));
    const stem = await channel.fixResultStem(resultFileName(job.id, names).replace(/\.json$/, ''));
    return { backend, stem };
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
  private async generate(channel: JobChannel, backend: CompletionBackend, req: BatchRequest, signal: AbortSignal, partial: PartialWriter): Promise<void> {
    const all = await channel.items();
    const done = all.length - all.filter((i) => i.status === 'PENDING').length;
    if (done) this.log(`resuming: ${done} of ${all.length} items already finished`);
    const queue = all.filter((i) => i.status === 'PENDING');
    const worker = async (): Promise<void> => {
      for (let item = queue.shift(); item && !signal.aborted; item = queue.shift()) {
        await channel.startItem(item.index);
        let outcome;
        try {
          outcome = await runItem(backend, req, item.input, item.index, this.config.structuredRetries, signal);
        } catch (e) {
          if (signal.aborted) return;
          throw e;
        }
        if (signal.aborted) return;
        await channel.commit(item.index, outcome);
        partial.itemDone();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, backend.parallelism) }, worker));
  }

  private async finalize(channel: JobChannel, client: Client, job: RunnableJob, folder: string, files: ReturnType<typeof resultFiles>,
    backend: CompletionBackend, reason: StopReason | undefined, wrotePartial: boolean): Promise<void> {
    await channel.setState('FINALIZING');
    const items = await channel.items();
    const done = items.filter((i) => i.status === 'DONE').length;
    const failed = items.filter((i) => i.status === 'FAILED').length;
    const stopped = reason === 'cancel' ? 'cancelled' : reason === 'expire' ? 'expired' : undefined;
    const { state, error } = finalState(items.length, done, failed, stopped);
    await writeResultFiles(client, folder, files.result.replace(/\.json$/, ''), items, {
      taskId: job.id, req: job.request, backend: backend.label, modelFile: backend.source, state, error, created: job.created, stopped,
    });
    // Partial files exist when a part was recorded, and may exist when this runner or an interrupted one wrote a part
    // whose record did not follow (a crash in between, a failed checkpoint write): then the listing finds them.
    if (wrotePartial || job.started || (await channel.unflushed()).part > 1) {
      await removePrefix(client, job.request.bucket_name, `${folder}/${files.partial}`);
    }
    await channel.finish(state, error);
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
