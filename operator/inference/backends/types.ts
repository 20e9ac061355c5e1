// Model backend interface: one prompt in, one completion out. Implemented in-process by node-llama-cpp
// (GGUF on CPU) and over HTTP by any OpenAI-compatible server (vLLM, llama.cpp server, Ollama).

export interface CompletionRequest {
  system?: string;
  prompt: string;
  maxTokens: number;
  /** JSON schema the answer must follow (grammar / response_format); validated afterwards by the caller. */
  schema?: Record<string, unknown>;
  seed?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface CompletionResult {
  text: string;
  promptTokens: number;
  completionTokens: number;
  /** `length` when generation stopped at maxTokens. */
  finishReason: 'stop' | 'length';
}

export interface CompletionBackend {
  /** `llama-cpp` or `openai-compatible`. */
  readonly kind: string;
  /** What produced the answers, written into results (`demo-random-weights` for the generated model). */
  readonly label: string;
  /** How many completions may usefully run at once (parallel sequences / concurrent requests). */
  readonly parallelism: number;
  complete(request: CompletionRequest): Promise<CompletionResult>;
  close(): Promise<void>;
}
