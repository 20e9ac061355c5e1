// The batch inference service of both homes: authenticates and validates submissions, records jobs through the job
// store (store.ts: SQLite embedded, InferenceJob resources in cluster mode; idempotency keys included), reports
// results, lists and cancels the caller's jobs, and serves OpenAI-style chat completions from the configured models.
import { createHash, randomBytes } from 'node:crypto';
import type { BackendRegistry } from './backends/registry.js';
import type { ModelDetails } from './backends/types.js';
import { tokenMatches, type JobSecrets } from './auth.js';
import type { InferenceConfig } from './config.js';
import { contractStatus, FINAL_STATES, type JobState } from './db.js';
import { validateRequest, RequestError } from './request.js';
import type { InferenceJobStore, JobRecord } from './store.js';
import { resultFiles } from './results.js';
import { checkAnswer, compileSchema } from './structured.js';

/** 401: missing or unknown access token. */
export class AuthError extends Error {
  constructor() { super('missing or invalid access token'); this.name = 'AuthError'; }
}
/** 409: an idempotency key reused with a different request. */
export class IdempotencyConflictError extends Error {
  constructor(readonly taskId: string) { super('Idempotency-Key was already used with a different request'); this.name = 'IdempotencyConflictError'; }
}
/** 404: no job with that id belongs to the caller. */
export class NotFoundError extends Error {
  constructor() { super('no such task_id'); this.name = 'NotFoundError'; }
}
/** 422: a chat answer that does not match the requested schema; `completion` is the chat completion with the raw answer. */
export class SchemaMismatchError extends Error {
  constructor(message: string, readonly completion: Record<string, unknown>) { super(message); this.name = 'SchemaMismatchError'; }
}
export { RequestError };

export interface SubmitResult { task_id: string; created: boolean }

export interface JobResultView {
  task_id: string;
  /** The contract's status: QUEUED, RUNNING, then SUCCESS or FAILED (cancelled and expired jobs are FAILED). */
  status: 'QUEUED' | 'RUNNING' | 'SUCCESS' | 'FAILED';
  /** The lifecycle state (db.ts JobState): VALIDATING, IN_PROGRESS, FINALIZING, CANCELLING, CANCELLED, EXPIRED... */
  state: JobState;
  model: string;
  backend: string | null;
  /** The GGUF file or server URL that answered. */
  model_file?: string | null;
  progress: { total: number | null; done: number; failed: number };
  tokens: { prompt: number; completion: number; total: number };
  bucket: string;
  /** Full object key of the result file; only for the job owner's token (the key begins with it). */
  result_key?: string | null;
  /** The result file's name inside the session folder (the key without `<access_token>/<session>/`). */
  result_file: string | null;
  /** Names (inside the session folder) of the output and error JSONL files and the manifest, once the job ended. */
  files?: { output: string; errors: string; manifest: string } | null;
  error?: string;
  created: string;
  started: string | null;
  finished: string | null;
  /** End of the completion window: unfinished items then expire. */
  expires_at?: string;
  outputs?: { index: number; output: unknown; error?: string }[];
}

export interface JobList { object: 'list'; data: JobResultView[]; first_id: string | null; last_id: string | null; has_more: boolean }

export interface InferenceService {
  /** Throws AuthError, RequestError (field named) or IdempotencyConflictError. */
  submit(token: string | undefined, body: unknown, idempotencyKey?: string): Promise<SubmitResult>;
  /**
   * Undefined when no such job exists. No credentials are needed; `result_key` (which begins with the access
   * token) is included only when `token` is the job owner's.
   */
  getResult(taskId: string, token?: string): Promise<JobResultView | undefined>;
  /** Cancels the caller's job (NotFoundError for another token's); answers its view after the request. */
  cancel(token: string | undefined, taskId: string): Promise<JobResultView>;
  /** The caller's jobs, newest first, `limit` (1..100) per page after the job id `after`. */
  list(token: string | undefined, limit?: number, after?: string): Promise<JobList>;
  /** OpenAI-compatible `/v1/chat/completions` over the configured models (token required). */
  chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>>;
  models(): string[];
  modelDetails(id: string): ModelDetails | undefined;
}

const newTaskId = (): string => randomBytes(16).toString('hex');
export const LIST_MAX = 100;

/** `limit` of a list request: 1..100, default 20 (OpenAI's). */
export function listLimit(v: unknown): number {
  if (v === undefined || v === null || v === '') return 20;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > LIST_MAX) throw new RequestError('limit', `must be an integer between 1 and ${LIST_MAX}`);
  return n;
}

export interface InferenceServiceOptions {
  /** Where the work happens: the embedded worker is woken on a submission and told of a cancel (cluster: the reconciler watches). */
  worker?: { wake(): void; cancel(id: string): void };
  /**
   * Whether this process runs models: GGUF paths are then checked at submit and `/v1/chat/completions` is served.
   * False for the cluster API, whose runner Pods hold the models.
   */
  localModels: boolean;
}

/** The one service of both homes: authentication, validation, idempotency, views, list, cancel and chat over a job store. */
export class InferenceServiceImpl implements InferenceService {
  constructor(private config: InferenceConfig, private store: InferenceJobStore, private backends: BackendRegistry,
    private secrets: JobSecrets, private o: InferenceServiceOptions) {}

  private authenticate(token: string | undefined): string {
    if (!token || !tokenMatches(token, this.config.tokenHashes)) throw new AuthError();
    return token;
  }

  models(): string[] { return this.backends.ids(); }

  modelDetails(id: string): ModelDetails | undefined { return this.backends.details(id); }

  async submit(token: string | undefined, body: unknown, idempotencyKey?: string): Promise<SubmitResult> {
    const t = this.authenticate(token);
    const req = validateRequest(body, {
      modelIds: this.models(), maxInputs: this.config.maxInputs, maxTokens: this.config.maxTokens,
      defaultMaxTokens: this.config.defaultMaxTokens, completionWindowSeconds: this.config.completionWindowSeconds,
    });
    if (this.o.localModels) {
      const missing = this.backends.unavailable(req.model);
      if (missing) throw new RequestError('model', missing);
    }
    const requestHash = createHash('sha256').update(JSON.stringify(req)).digest('hex');
    const key = idempotencyKey?.trim() || null;
    if (key && key.length > 200) throw new RequestError('Idempotency-Key', 'at most 200 characters');
    const id = key ? this.secrets.idempotentTaskId(t, key) : newTaskId();
    const window = req.completion_window ?? this.config.completionWindowSeconds;
    const now = Date.now(); // one reading: expires_at is exactly the window after created
    const { job, created } = await this.store.create({
      id, token: t, tokenHash: this.secrets.tokenHash(t), idempotencyKey: key, requestHash, request: req,
      created: new Date(now).toISOString(), expiresAt: new Date(now + window * 1000).toISOString(),
    });
    if (!created && job.request_hash !== requestHash) throw new IdempotencyConflictError(job.id);
    if (created) this.o.worker?.wake();
    return { task_id: job.id, created };
  }

  async getResult(taskId: string, token?: string): Promise<JobResultView | undefined> {
    if (!/^[0-9a-f]{32}$/.test(taskId)) return undefined;
    const job = await this.store.get(taskId);
    return job && this.view(job, token);
  }

  /** The caller's own job, or NotFoundError (another token's job is not revealed). */
  private async owned(token: string | undefined, taskId: string): Promise<JobRecord> {
    const t = this.authenticate(token);
    const job = /^[0-9a-f]{32}$/.test(taskId) ? await this.store.get(taskId) : undefined;
    if (!job || !this.secrets.owns(t, job.token_hash)) throw new NotFoundError();
    return job;
  }

  async cancel(token: string | undefined, taskId: string): Promise<JobResultView> {
    const job = await this.owned(token, taskId);
    const after = (await this.store.requestCancel(job.id)) ?? job;
    if (after.status === 'CANCELLING') this.o.worker?.cancel(taskId);
    return this.view(after, token);
  }

  async list(token: string | undefined, limit = 20, after?: string): Promise<JobList> {
    const t = this.authenticate(token);
    const { jobs, hasMore } = await this.store.list(this.secrets.ownerHashes(t), limit, after);
    const data = await Promise.all(jobs.map((j) => this.view(j, token)));
    return { object: 'list', data, first_id: data[0]?.task_id ?? null, last_id: data.at(-1)?.task_id ?? null, has_more: hasMore };
  }

  private async view(job: JobRecord, token: string | undefined): Promise<JobResultView> {
    const final = FINAL_STATES.includes(job.status);
    const file = final ? job.result_file : null;
    const v: JobResultView = {
      task_id: job.id, status: contractStatus(job.status), state: job.status, model: job.model, backend: job.backend, model_file: job.model_file,
      progress: { total: job.total, done: job.done, failed: job.failed },
      tokens: { prompt: job.prompt_tokens, completion: job.completion_tokens, total: job.prompt_tokens + job.completion_tokens },
      bucket: job.bucket_name, result_file: file, files: null,
      created: job.created, started: job.started, finished: job.finished, expires_at: job.expires_at,
    };
    if (file && job.result_stem) {
      const f = resultFiles(job.result_stem);
      v.files = { output: f.output, errors: f.errors, manifest: f.manifest };
    }
    // The key begins with the owner's token, which is not stored: only the owner's request can show it.
    if (token && this.secrets.owns(token, job.token_hash)) v.result_key = file ? `${token}/${job.session}/${file}` : null;
    if (job.error) v.error = job.error;
    if (job.return_output && final) {
      const outputs = await this.store.outputs(job);
      if (outputs) v.outputs = outputs;
    }
    return v;
  }

  async chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>> {
    this.authenticate(token);
    if (!this.o.localModels) throw new RequestError('model', 'chat completions are not served by the API in cluster mode (its models run in runner Pods)');
    const c = parseChatBody(body, this.models(), this.config.maxTokens);
    const backend = await this.backends.get(c.model);
    const r = await backend.complete({
      system: c.system, prompt: c.prompt, maxTokens: c.maxTokens, schema: c.schema, seed: c.seed, temperature: c.temperature,
    });
    const completion = {
      id: `chatcmpl-${newTaskId()}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: c.model,
      system_fingerprint: backend.label,
      choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.finishReason }],
      usage: { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens, total_tokens: r.promptTokens + r.completionTokens },
    };
    if (c.schema) {
      const checked = checkAnswer(c.schema, r.text);
      if (!checked.ok) {
        throw new SchemaMismatchError(`the model's answer did not match response_format's schema: ${checked.error}${r.finishReason === 'length' ? ' (stopped at max_tokens)' : ''}`, completion);
      }
    }
    return completion;
  }
}

interface ChatCall { model: string; system?: string; prompt: string; maxTokens: number; schema?: Record<string, unknown>; seed?: number; temperature?: number }

/** The subset of the OpenAI chat request this service honours: messages (system/user), max_tokens, seed, response_format. */
export function parseChatBody(body: unknown, modelIds: string[], maxTokens: number): ChatCall {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.model !== 'string' || !modelIds.includes(b.model)) throw new RequestError('model', `one of ${modelIds.join(', ')}`);
  if (b.stream === true) throw new RequestError('stream', 'streaming responses are not supported');
  if (!Array.isArray(b.messages) || b.messages.length === 0) throw new RequestError('messages', 'must be a non-empty list');
  const msgs = b.messages as { role?: string; content?: unknown }[];
  const text = (m: { content?: unknown }): string => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
  const system = msgs.filter((m) => m.role === 'system').map(text).join('\n') || undefined;
  const prompt = msgs.filter((m) => m.role !== 'system').map(text).join('\n\n');
  const mt = b.max_tokens ?? b.max_completion_tokens ?? 256;
  if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1 || mt > maxTokens) throw new RequestError('max_tokens', `integer 1..${maxTokens}`);
  let schema: Record<string, unknown> | undefined;
  const rf = b.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (rf?.type === 'json_schema') {
    try { compileSchema(rf.json_schema?.schema); } catch (e) { throw new RequestError('response_format', (e as Error).message); }
    schema = rf.json_schema!.schema as Record<string, unknown>;
  } else if (rf?.type === 'json_object') schema = { type: 'object' };
  return {
    model: b.model, system, prompt, maxTokens: mt, schema,
    seed: typeof b.seed === 'number' ? b.seed : undefined,
    temperature: typeof b.temperature === 'number' ? b.temperature : undefined,
  };
}
