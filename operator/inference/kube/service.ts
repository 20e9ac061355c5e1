// The batch inference API in cluster mode: the same authentication, validation and Idempotency-Key rules as the
// embedded service, with job records kept as InferenceJob resources (see store.ts) that the operator runs as
// Kubernetes Jobs. `get_result` reads the resource's status; `outputs` (return_output) come from the result file.
import { createHash, randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { hashToken, tokenMatches } from '../auth.js';
import type { InferenceConfig } from '../config.js';
import { validateRequest } from '../request.js';
import { BackendRegistry } from '../backends/registry.js';
import type { ModelDetails } from '../backends/types.js';
import { AuthError, IdempotencyConflictError, NotFoundError, RequestError, type JobList, type JobResultView, type SubmitResult } from '../service.js';
import { bucketClient } from '../storage.js';
import { buildInferenceJob, idempotentTaskId, isFinal, requestOf, viewOf, type InferenceJobResource } from './resource.js';
import { KubeInferenceJobStore } from './store.js';

export interface ClusterInferenceOptions {
  kc: KubeConfig;
  /** Namespace of the InferenceJob resources (the operator's watched namespace). */
  namespace: string;
  config: InferenceConfig;
  /** Serves `/v1/chat/completions` (e.g. an embedded service without worker); unset: refused. */
  chat?: { chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>> };
}

const OUTPUT_CACHE = 100;

export class ClusterInferenceService {
  readonly store: KubeInferenceJobStore;
  private outputs = new Map<string, NonNullable<JobResultView['outputs']>>();

  constructor(private o: ClusterInferenceOptions) {
    this.store = new KubeInferenceJobStore(o.kc, o.namespace);
  }

  models(): string[] { return Object.keys(this.o.config.models); }

  /** From configuration alone (the registry loads nothing until asked for a backend). */
  modelDetails(id: string): ModelDetails | undefined {
    return new BackendRegistry(this.o.config, this.o.config.modelsDir ?? '/models').details(id);
  }

  /**
   * The owner's cancel: marks the InferenceJob's spec (`cancelRequested`); the runner stops and writes CANCELLED with
   * what is done, or the reconciler ends a job that has no runner yet. Another token's job is a 404.
   */
  async cancel(token: string | undefined, taskId: string): Promise<JobResultView> {
    const t = this.authenticate(token);
    const r = /^[0-9a-f]{32}$/.test(taskId) ? await this.store.get(taskId) : undefined;
    if (!r || !tokenMatches(t, [r.spec.tokenHash])) throw new NotFoundError();
    const updated = isFinal(r.status?.status) || r.spec.cancelRequested ? r : await this.store.jobs.mergePatch(r.metadata.name, { spec: { cancelRequested: true } });
    return viewOf(updated);
  }

  /** The caller's InferenceJobs, newest first (the resources are listed and filtered by the spec's token hash). */
  async list(token: string | undefined, limit = 20, after?: string): Promise<JobList> {
    const t = this.authenticate(token);
    const all = (await this.store.jobs.list()).items.filter((r) => tokenMatches(t, [r.spec.tokenHash]))
      .map((r) => viewOf(r)).sort((a, b) => (a.created === b.created ? b.task_id.localeCompare(a.task_id) : b.created.localeCompare(a.created)));
    const from = after ? all.findIndex((v) => v.task_id === after) + 1 : 0;
    const data = all.slice(from, from + limit);
    return { object: 'list', data, first_id: data[0]?.task_id ?? null, last_id: data.at(-1)?.task_id ?? null, has_more: from + limit < all.length };
  }

  private authenticate(token: string | undefined): string {
    if (!token || !tokenMatches(token, this.o.config.tokenHashes)) throw new AuthError();
    return token;
  }

  async submit(token: string | undefined, body: unknown, idempotencyKey?: string): Promise<SubmitResult> {
    const t = this.authenticate(token);
    const c = this.o.config;
    const req = validateRequest(body, { modelIds: this.models(), maxInputs: c.maxInputs, maxTokens: c.maxTokens, defaultMaxTokens: c.defaultMaxTokens, completionWindowSeconds: c.completionWindowSeconds });
    if (req.completion_window !== undefined) throw new RequestError('completion_window', 'is not offered in cluster mode yet');
    const requestHash = createHash('sha256').update(JSON.stringify(req)).digest('hex');
    const key = idempotencyKey?.trim() || undefined;
    if (key && key.length > 200) throw new RequestError('Idempotency-Key', 'at most 200 characters');
    const taskId = key ? idempotentTaskId(t, key) : randomBytes(16).toString('hex');
    const resource = buildInferenceJob(taskId, req, { tokenHash: hashToken(t), requestHash, idempotencyKey: key });
    const { resource: stored, created } = await this.store.create(resource, t);
    if (!created && stored.spec.requestHash !== requestHash) throw new IdempotencyConflictError(taskId);
    return { task_id: taskId, created };
  }

  async getResult(taskId: string, token?: string): Promise<JobResultView | undefined> {
    if (!/^[0-9a-f]{32}$/.test(taskId)) return undefined;
    const r = await this.store.get(taskId);
    if (!r) return undefined;
    const v = viewOf(r);
    if (r.spec.return_output && v.result_key && (v.status === 'SUCCESS' || v.status === 'FAILED')) {
      v.outputs = await this.readOutputs(taskId, r, v.result_key);
    }
    if (!token || !tokenMatches(token, [r.spec.tokenHash])) delete v.result_key;
    return v;
  }

  /** Outputs of a finished job, from its result file (cached: a final result file does not change). */
  private async readOutputs(taskId: string, r: InferenceJobResource, key: string): Promise<JobResultView['outputs']> {
    const cached = this.outputs.get(taskId);
    if (cached) return cached;
    const req = requestOf(r.spec);
    try {
      const client = bucketClient(this.o.config.storage, {
        provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${taskId.slice(0, 16)}`,
      });
      const chunks: Buffer[] = [];
      for await (const ch of await client.getObject(req.bucket_name, key)) chunks.push(ch as Buffer);
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { results?: { index: number; output: unknown; error?: string }[] };
      const outputs = (doc.results ?? []).map((it) => ({ index: it.index, output: it.output, ...(it.error ? { error: it.error } : {}) }));
      if (this.outputs.size >= OUTPUT_CACHE) this.outputs.delete(this.outputs.keys().next().value!);
      this.outputs.set(taskId, outputs);
      return outputs;
    } catch {
      return undefined; // the result file stays the reference; the status is still worth answering
    }
  }

  async chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>> {
    this.authenticate(token);
    if (!this.o.chat) throw new RequestError('model', 'chat completions are not served by this replica in cluster mode');
    return this.o.chat.chatCompletion(token, body);
  }
}
