// The batch inference service: authenticates and validates submissions, records jobs durably (idempotency
// keys included), reports results, serves OpenAI-style chat completions from the configured models, and
// drives the background worker that runs jobs.
import { createHash, randomBytes } from 'node:crypto';
import type { BackendRegistry } from './backends/registry.js';
import { hashToken, tokenMatches } from './auth.js';
import type { InferenceConfig } from './config.js';
import type { JobRow, JobStore } from './db.js';
import { validateRequest, RequestError, type BatchRequest } from './request.js';
import { checkAnswer, compileSchema } from './structured.js';

/** 401: missing or unknown access token. */
export class AuthError extends Error {
  constructor() { super('missing or invalid access token'); this.name = 'AuthError'; }
}
/** 409: an idempotency key reused with a different request. */
export class IdempotencyConflictError extends Error {
  constructor(readonly taskId: string) { super('Idempotency-Key was already used with a different request'); this.name = 'IdempotencyConflictError'; }
}
export { RequestError };

export interface SubmitResult { task_id: string; created: boolean }

export interface JobResultView {
  task_id: string;
  status: 'QUEUED' | 'RUNNING' | 'SUCCESS' | 'FAILED';
  model: string;
  backend: string | null;
  progress: { total: number | null; done: number; failed: number };
  tokens: { prompt: number; completion: number; total: number };
  bucket: string;
  /** Full object key of the result file; only for the job owner's token (the key begins with it). */
  result_key?: string | null;
  /** The result file's name inside the session folder (the key without `<access_token>/<session>/`). */
  result_file: string | null;
  error?: string;
  created: string;
  started: string | null;
  finished: string | null;
  outputs?: { index: number; output: unknown; error?: string }[];
}

export interface InferenceService {
  /** Throws AuthError, RequestError (field named) or IdempotencyConflictError. */
  submit(token: string | undefined, body: unknown, idempotencyKey?: string): SubmitResult;
  /**
   * Undefined when no such job exists. No credentials are needed; `result_key` (which begins with the access
   * token) is included only when `token` is the job owner's.
   */
  getResult(taskId: string, token?: string): JobResultView | undefined;
  /** OpenAI-compatible `/v1/chat/completions` over the configured models (token required). */
  chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>>;
  models(): string[];
}

const newTaskId = (): string => randomBytes(16).toString('hex');

/** The request fields a result view shows; parsed once per job, not on every poll (the request holds every input). */
interface RequestSummary { model: string; bucket_name: string; return_output: boolean }
const SUMMARY_CACHE = 1000;

export class InferenceServiceImpl implements InferenceService {
  private summaries = new Map<string, RequestSummary>();

  constructor(private config: InferenceConfig, private store: JobStore, private backends: BackendRegistry,
    private wake: () => void) {}

  private authenticate(token: string | undefined): string {
    if (!token || !tokenMatches(token, this.config.tokenHashes)) throw new AuthError();
    return token;
  }

  models(): string[] { return this.backends.ids(); }

  submit(token: string | undefined, body: unknown, idempotencyKey?: string): SubmitResult {
    const t = this.authenticate(token);
    const req = validateRequest(body, {
      modelIds: this.models(), maxInputs: this.config.maxInputs, maxTokens: this.config.maxTokens,
      defaultMaxTokens: this.config.defaultMaxTokens,
    });
    const request = JSON.stringify(req);
    const requestHash = createHash('sha256').update(request).digest('hex');
    const key = idempotencyKey?.trim() || null;
    if (key && key.length > 200) throw new RequestError('Idempotency-Key', 'at most 200 characters');
    const { row, created } = this.store.create({
      id: newTaskId(), token_hash: hashToken(t), idempotency_key: key, request_hash: requestHash, request,
      folder: `${t}/${req.session}`,
    });
    if (!created && row.request_hash !== requestHash) throw new IdempotencyConflictError(row.id);
    if (created) this.wake();
    return { task_id: row.id, created };
  }

  getResult(taskId: string, token?: string): JobResultView | undefined {
    if (!/^[0-9a-f]{32}$/.test(taskId)) return undefined;
    const job = this.store.status(taskId);
    if (!job) return undefined;
    const v = this.view(job, this.summary(job.id));
    if (!token || !tokenMatches(token, [job.token_hash])) delete v.result_key;
    return v;
  }

  private summary(id: string): RequestSummary {
    let s = this.summaries.get(id);
    if (!s) {
      const req = JSON.parse(this.store.request(id) ?? '{}') as BatchRequest;
      s = { model: req.model, bucket_name: req.bucket_name, return_output: req.return_output === true };
      if (this.summaries.size >= SUMMARY_CACHE) this.summaries.delete(this.summaries.keys().next().value!);
      this.summaries.set(id, s);
    }
    return s;
  }

  private view(job: Omit<JobRow, 'request'>, req: RequestSummary): JobResultView {
    const v: JobResultView = {
      task_id: job.id, status: job.status, model: req.model, backend: job.backend,
      progress: { total: job.total, done: job.done, failed: job.failed },
      tokens: { prompt: job.prompt_tokens, completion: job.completion_tokens, total: job.prompt_tokens + job.completion_tokens },
      bucket: req.bucket_name, result_key: job.status === 'SUCCESS' || job.status === 'FAILED' ? job.result_key : null,
      result_file: null,
      created: job.created, started: job.started, finished: job.finished,
    };
    if (v.result_key) v.result_file = v.result_key.slice(job.folder.length + 1);
    if (job.error) v.error = job.error;
    if (req.return_output && (job.status === 'SUCCESS' || job.status === 'FAILED') && job.total !== null) {
      v.outputs = this.store.items(job.id).map((it) => ({
        index: it.idx, output: it.output === null ? null : JSON.parse(it.output), ...(it.error ? { error: it.error } : {}),
      }));
    }
    return v;
  }

  async chatCompletion(token: string | undefined, body: unknown): Promise<Record<string, unknown>> {
    this.authenticate(token);
    const c = parseChatBody(body, this.models(), this.config.maxTokens);
    const backend = await this.backends.get(c.model);
    const r = await backend.complete({
      system: c.system, prompt: c.prompt, maxTokens: c.maxTokens, schema: c.schema, seed: c.seed, temperature: c.temperature,
    });
    if (c.schema) {
      const checked = checkAnswer(c.schema, r.text);
      if (!checked.ok) throw new Error(`the model's answer did not match the schema: ${checked.error}`);
    }
    return {
      id: `chatcmpl-${newTaskId()}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: c.model,
      system_fingerprint: backend.label,
      choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.finishReason }],
      usage: { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens, total_tokens: r.promptTokens + r.completionTokens },
    };
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
