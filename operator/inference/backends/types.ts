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

/** The model server broke the protocol (a body that is not a chat completion): reported as such, never as a schema mismatch. */
export class ProtocolError extends Error {
  constructor(message: string) { super(message); this.name = 'ProtocolError'; }
}

/** What a model id is served by, without loading it (GET /v1/models). */
export interface ModelDetails {
  backend: 'llama-cpp' | 'openai-compatible' | 'demo-random-weights';
  /** GGUF file of an in-process model. */
  file?: string;
  /** Base URL (and served model) of an OpenAI-compatible server. */
  url?: string;
  /** Context size per sequence in tokens; null when the server decides. */
  context_size: number | null;
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
  /** The GGUF file or the server URL (and served model) that answers, written into results. */
  readonly source: string;
  /** Fails, naming the URL and the cause, when the backend cannot answer at all (checked before a job generates). */
  check(signal?: AbortSignal): Promise<void>;
  complete(request: CompletionRequest): Promise<CompletionResult>;
  close(): Promise<void>;
}
