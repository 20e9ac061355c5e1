// OpenAI-compatible backend: `POST <baseUrl>/chat/completions` on vLLM, llama.cpp's server, Ollama or this
// service itself, with `response_format` carrying the JSON schema. Concurrency comes from the worker's pool.
// Transient failures (connection refused or reset, timeouts, 429 honouring Retry-After, 5xx) are retried per item
// with the project's capped, jittered backoff; a body that is not a chat completion is a ProtocolError.
import { backoff, isTransient, sleep, timeoutSignal, TransientError } from '../../faults.js';
import { ProtocolError, type CompletionBackend, type CompletionRequest, type CompletionResult } from './types.js';

export interface OpenAIBackendOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  concurrency: number;
  /** Per-request time limit in ms. */
  timeoutMs?: number;
  /** New attempts after a transient failure (default 5). */
  retries?: number;
  /** Backoff between attempts (the project's formula, faults.ts); a Retry-After longer than it wins, up to `maxRetryAfterMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxRetryAfterMs?: number;
}

interface ChatResponse {
  choices?: { message?: { content?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  system_fingerprint?: string;
}

/** HTTP 429/408/5xx from the model server, with the wait it asked for. */
class ServerBusyError extends TransientError {
  constructor(message: string, readonly status: number, readonly retryAfterMs?: number) { super(message); }
}

/** `Retry-After`: seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const t = header.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** What a fetch failure was: the socket error's code (ECONNREFUSED...) or the timeout. */
function causeOf(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string } }).cause;
  if ((e as Error).name === 'TimeoutError') return 'timed out';
  return c?.code ?? c?.message ?? (e as Error).message;
}

export class OpenAICompatibleBackend implements CompletionBackend {
  readonly kind = 'openai-compatible';
  readonly parallelism: number;
  readonly source: string;
  label: string;
  private base: string;

  constructor(private opts: OpenAIBackendOptions) {
    this.parallelism = opts.concurrency;
    this.label = `openai-compatible:${opts.model}`;
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.source = `${this.base}#${opts.model}`;
  }

  private headers(): Record<string, string> {
    return { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) };
  }

  /** The server answers `GET /models` (any HTTP answer but 5xx proves it is up; 401/403 means the key is refused). */
  async check(signal?: AbortSignal): Promise<void> {
    const url = `${this.base}/models`;
    let res: Response;
    try {
      res = await fetch(url, { headers: this.headers(), signal: AbortSignal.any([timeoutSignal(10_000), ...(signal ? [signal] : [])]) });
      await res.arrayBuffer();
    } catch (e) {
      throw new Error(`model server ${this.base} is unreachable (${causeOf(e)})`);
    }
    if (res.status === 401 || res.status === 403) throw new Error(`model server ${this.base} refused the API key (HTTP ${res.status})`);
    if (res.status >= 500) throw new Error(`model server ${this.base} is failing (GET /models answered HTTP ${res.status})`);
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const retries = this.opts.retries ?? 5;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(req);
      } catch (e) {
        if (req.signal?.aborted || !isTransient(e) || attempt >= retries) {
          if (isTransient(e) && attempt >= retries) throw new Error(`${(e as Error).message} (after ${attempt + 1} attempts)`);
          throw e;
        }
        const wait = Math.max(backoff(attempt, { baseMs: this.opts.baseDelayMs ?? 1000, maxMs: this.opts.maxDelayMs ?? 30_000 }),
          Math.min((e as ServerBusyError).retryAfterMs ?? 0, this.opts.maxRetryAfterMs ?? 120_000));
        if (!(await sleep(wait, req.signal))) throw e;
      }
    }
  }

  private async once(req: CompletionRequest): Promise<CompletionResult> {
    const messages = [
      ...(req.system ? [{ role: 'system', content: req.system }] : []),
      { role: 'user', content: req.prompt },
    ];
    const body: Record<string, unknown> = {
      model: this.opts.model, messages, max_tokens: req.maxTokens,
      temperature: req.temperature ?? 0.8, ...(req.seed !== undefined ? { seed: req.seed } : {}),
    };
    if (req.schema) body.response_format = { type: 'json_schema', json_schema: { name: 'answer', schema: req.schema, strict: true } };
    const signal = AbortSignal.any([req.signal, timeoutSignal(this.opts.timeoutMs ?? 600_000)].filter(Boolean) as AbortSignal[]);
    const url = `${this.base}/chat/completions`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', signal, headers: this.headers(), body: JSON.stringify(body) });
      text = await res.text();
    } catch (e) {
      if (req.signal?.aborted) throw e;
      throw new TransientError(`model server ${this.base} could not be reached (${causeOf(e)})`, { cause: e });
    }
    if (res.status === 429 || res.status === 408 || res.status >= 500) {
      throw new ServerBusyError(`model server ${this.base} answered HTTP ${res.status}: ${text.slice(0, 300)}`, res.status,
        retryAfterMs(res.headers.get('retry-after')));
    }
    if (!res.ok) throw new Error(`model server ${this.base} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    let json: ChatResponse;
    try { json = JSON.parse(text) as ChatResponse; } catch {
      throw new ProtocolError(`protocol error: model server ${this.base} answered a body that is not JSON: ${text.slice(0, 200)}`);
    }
    const choice = json?.choices?.[0];
    const content = choice?.message?.content;
    if (typeof content !== 'string') {
      throw new ProtocolError(`protocol error: model server ${this.base} answered without choices[0].message.content: ${text.slice(0, 200)}`);
    }
    // A server that itself runs the demo model says so; keep that in our label.
    if (json.system_fingerprint?.includes('demo-random-weights')) this.label = `openai-compatible:${this.opts.model}:demo-random-weights`;
    return {
      text: content,
      promptTokens: json.usage?.prompt_tokens ?? 0,
      completionTokens: json.usage?.completion_tokens ?? 0,
      finishReason: choice?.finish_reason === 'length' ? 'length' : 'stop',
    };
  }

  async close(): Promise<void> { /* stateless */ }
}
