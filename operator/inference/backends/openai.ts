// OpenAI-compatible backend: `POST <baseUrl>/chat/completions` on vLLM, llama.cpp's server, Ollama or this
// service itself, with `response_format` carrying the JSON schema. Concurrency comes from the worker's pool.
import type { CompletionBackend, CompletionRequest, CompletionResult } from './types.js';

export interface OpenAIBackendOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  concurrency: number;
  /** Per-request time limit in ms. */
  timeoutMs?: number;
}

interface ChatResponse {
  choices?: { message?: { content?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  system_fingerprint?: string;
}

export class OpenAICompatibleBackend implements CompletionBackend {
  readonly kind = 'openai-compatible';
  readonly parallelism: number;
  label: string;

  constructor(private opts: OpenAIBackendOptions) {
    this.parallelism = opts.concurrency;
    this.label = `openai-compatible:${opts.model}`;
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const messages = [
      ...(req.system ? [{ role: 'system', content: req.system }] : []),
      { role: 'user', content: req.prompt },
    ];
    const body: Record<string, unknown> = {
      model: this.opts.model, messages, max_tokens: req.maxTokens,
      temperature: req.temperature ?? 0.8, ...(req.seed !== undefined ? { seed: req.seed } : {}),
    };
    if (req.schema) body.response_format = { type: 'json_schema', json_schema: { name: 'answer', schema: req.schema, strict: true } };
    const signal = AbortSignal.any([req.signal, AbortSignal.timeout(this.opts.timeoutMs ?? 600_000)].filter(Boolean) as AbortSignal[]);
    const res = await fetch(`${this.opts.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST', signal,
      headers: { 'content-type': 'application/json', ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`model server answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    const json = JSON.parse(text) as ChatResponse;
    const choice = json.choices?.[0];
    // A server that itself runs the demo model says so; keep that in our label.
    if (json.system_fingerprint?.includes('demo-random-weights')) this.label = `openai-compatible:${this.opts.model}:demo-random-weights`;
    return {
      text: choice?.message?.content ?? '',
      promptTokens: json.usage?.prompt_tokens ?? 0,
      completionTokens: json.usage?.completion_tokens ?? 0,
      finishReason: choice?.finish_reason === 'length' ? 'length' : 'stop',
    };
  }

  async close(): Promise<void> { /* stateless */ }
}
