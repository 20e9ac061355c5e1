// Inference service configuration: the model registry (model id -> backend), access tokens, storage
// endpoint and limits, read from the environment and an optional JSON file (see README.md beside this file).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { limitsFromEnv } from '../core/limits.js';
import { hashToken } from './auth.js';

/** The contract's model identifiers. */
export const CONTRACT_MODEL_IDS = ['llama3_70b', 'llama2_70b', 'llama2_7b', 'codellama_70b', 'mixtral_8x7', 'mistral_7b'] as const;

export interface LlamaCppModelConfig {
  backend: 'llama-cpp';
  /** Path of a GGUF file, or `demo` for the generated random-weights model. */
  modelPath: string;
  /** Parallel context sequences (inputs generated in one batch). */
  parallel?: number;
  /** Context size per sequence, in tokens. */
  contextSize?: number;
  /** node-llama-cpp chat wrapper: `auto` (from the GGUF's template) or `general`. */
  chatWrapper?: 'auto' | 'general';
}

export interface OpenAIModelConfig {
  backend: 'openai';
  /** Base URL that ends before `/chat/completions`, e.g. `http://vllm:8000/v1`. */
  baseUrl: string;
  /** Model name the server knows; default the model id. */
  model?: string;
  apiKey?: string;
  /** Concurrent requests. */
  concurrency?: number;
}

export type ModelConfig = LlamaCppModelConfig | OpenAIModelConfig;

export interface StorageConfig {
  /** `http(s)://host:port` of an S3-compatible endpoint; unset = AWS S3 for the request's region. */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  region: string;
  /** STS endpoint used to exchange `role_arn` for temporary credentials. */
  stsEndpoint: string;
  /** S3-interoperable endpoint of Google Cloud Storage (HMAC keys). */
  gcsEndpoint: string;
}

export interface InferenceConfig {
  models: Record<string, ModelConfig>;
  /** SHA-256 hashes (hex) of the accepted access tokens. */
  tokenHashes: string[];
  storage: StorageConfig;
  /** Threads node-llama-cpp may use (default: cores - 1, at least 1). */
  threads: number;
  /** Directory where the demo GGUF is generated and cached. */
  modelsDir?: string;
  maxInputs: number;
  maxTokens: number;
  defaultMaxTokens: number;
  /** Extra attempts for an answer that does not match `structured_output`. */
  structuredRetries: number;
  /** Ids mapped to the demo model (the service warns about them at start). */
  demoModelIds: string[];
  /** Longest completion window of a job, in seconds (INFERENCE_COMPLETION_WINDOW_SECONDS, a limit). */
  completionWindowSeconds: number;
  /** Largest grammar a structured_output schema becomes (INFERENCE_GRAMMAR_MAX_SIZE). */
  grammarMaxSize: number;
  /** Finished jobs' rows are purged this many hours after they ended (INFERENCE_RETENTION_HOURS; 0 keeps them). */
  retentionHours: number;
  /** Finished items are flushed to a partial JSONL file every `flushItems` items or `flushSeconds` seconds. */
  flushItems: number;
  flushSeconds: number;
  /** New attempts of one item after a transient model-server error (INFERENCE_SERVER_RETRIES). */
  modelRetries: number;
  /** Time one request to an OpenAI-compatible server may take, in seconds (INFERENCE_REQUEST_TIMEOUT_SECONDS, a limit). */
  requestTimeoutSeconds: number;
}

interface FileConfig {
  models?: Record<string, ModelConfig>;
  accessTokenHashes?: string[];
  storage?: Partial<StorageConfig>;
  threads?: number;
  modelsDir?: string;
  limits?: { maxInputs?: number; maxTokens?: number; defaultMaxTokens?: number; structuredRetries?: number; modelRetries?: number };
  retentionHours?: number;
}

function readFileConfig(env: NodeJS.ProcessEnv): FileConfig {
  const src = env.INFERENCE_CONFIG;
  if (!src) return {};
  const text = src.trim().startsWith('{') ? src : readFileSync(src, 'utf8');
  return JSON.parse(text) as FileConfig;
}

/** `INFERENCE_MODEL_<ID>=gguf:/path.gguf` | `openai:<baseUrl>[#<served model>]` | `demo` (key: `INFERENCE_MODEL_<ID>_API_KEY`). */
export function parseModelSpec(spec: string): ModelConfig {
  if (spec === 'demo') return { backend: 'llama-cpp', modelPath: 'demo', chatWrapper: 'general' };
  if (spec.startsWith('gguf:')) return { backend: 'llama-cpp', modelPath: spec.slice(5), chatWrapper: 'auto' };
  if (spec.startsWith('openai:')) {
    const [baseUrl, model] = spec.slice(7).split('#');
    return { backend: 'openai', baseUrl, ...(model ? { model } : {}) };
  }
  throw new Error(`invalid model spec '${spec}': expected demo, gguf:<path> or openai:<baseUrl>[#model]`);
}

/** Raw tokens (one per line or comma-separated) and `sha256:<hex>` lines, hashed. */
export function tokenHashesFrom(text: string | undefined): string[] {
  if (!text) return [];
  return text.split(/[\n,]/).map((t) => t.trim()).filter((t) => t && !t.startsWith('#'))
    .map((t) => (t.startsWith('sha256:') ? t.slice(7).toLowerCase() : hashToken(t)));
}

/**
 * One core less than the machine has (Node's own thread needs one): measured on a 2-core box, 1 llama.cpp thread
 * generated ~1100 tokens/s on the demo model where 2 threads, spinning against Node's thread, gave ~70.
 */
export const defaultThreads = (): number => Math.max(1, availableParallelism() - 1);

function intEnv(v: string | undefined, dflt: number, min = 1): number {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= min ? n : dflt;
}

function modelRegistry(env: NodeJS.ProcessEnv, file: FileConfig): { models: Record<string, ModelConfig>; demo: string[] } {
  const models: Record<string, ModelConfig> = {};
  for (const id of CONTRACT_MODEL_IDS) models[id] = { backend: 'llama-cpp', modelPath: 'demo', chatWrapper: 'general' };
  Object.assign(models, file.models ?? {});
  for (const [k, v] of Object.entries(env)) {
    const m = /^INFERENCE_MODEL_([A-Z0-9_]+)$/.exec(k);
    if (!m || !v || k.endsWith('_API_KEY')) continue;
    const mc = parseModelSpec(v);
    const key = env[`${k}_API_KEY`];
    models[m[1].toLowerCase()] = mc.backend === 'openai' && key ? { ...mc, apiKey: key } : mc;
  }
  const demo = Object.entries(models).filter(([, c]) => c.backend === 'llama-cpp' && c.modelPath === 'demo').map(([id]) => id);
  return { models, demo };
}

export function loadInferenceConfig(env: NodeJS.ProcessEnv = process.env): InferenceConfig {
  const file = readFileConfig(env);
  const { models, demo } = modelRegistry(env, file);
  const tokenHashes = [
    ...(file.accessTokenHashes ?? []).map((h) => h.replace(/^sha256:/, '').toLowerCase()),
    ...tokenHashesFrom(env.ACCESS_TOKENS),
    ...(env.ACCESS_TOKENS_FILE ? tokenHashesFrom(readFileSync(env.ACCESS_TOKENS_FILE, 'utf8')) : []),
  ];
  const fs = file.storage ?? {};
  const limits = file.limits ?? {};
  return {
    models,
    tokenHashes: [...new Set(tokenHashes)],
    storage: {
      endpoint: env.S3_ENDPOINT || fs.endpoint,
      accessKeyId: env.S3_ACCESS_KEY_ID || fs.accessKeyId,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || fs.secretAccessKey,
      sessionToken: env.S3_SESSION_TOKEN || fs.sessionToken,
      region: env.S3_REGION || fs.region || 'us-east-1',
      stsEndpoint: env.STS_ENDPOINT || fs.stsEndpoint || 'https://sts.amazonaws.com',
      gcsEndpoint: env.GCS_ENDPOINT || fs.gcsEndpoint || 'https://storage.googleapis.com',
    },
    threads: intEnv(env.INFERENCE_THREADS, file.threads ?? defaultThreads()),
    modelsDir: env.INFERENCE_MODELS_DIR || file.modelsDir,
    maxInputs: intEnv(env.INFERENCE_MAX_INPUTS, limits.maxInputs ?? 10_000),
    maxTokens: intEnv(env.INFERENCE_MAX_TOKENS, limits.maxTokens ?? 4096),
    defaultMaxTokens: limits.defaultMaxTokens ?? 256,
    structuredRetries: limits.structuredRetries ?? 2,
    demoModelIds: demo,
    completionWindowSeconds: limitsFromEnv({ INFERENCE_COMPLETION_WINDOW_SECONDS: env.INFERENCE_COMPLETION_WINDOW_SECONDS }).inferenceCompletionWindowSeconds,
    grammarMaxSize: limitsFromEnv({ INFERENCE_GRAMMAR_MAX_SIZE: env.INFERENCE_GRAMMAR_MAX_SIZE }).inferenceGrammarMaxSize,
    requestTimeoutSeconds: limitsFromEnv({ INFERENCE_REQUEST_TIMEOUT_SECONDS: env.INFERENCE_REQUEST_TIMEOUT_SECONDS }).inferenceRequestTimeoutSeconds,
    retentionHours: intEnv(env.INFERENCE_RETENTION_HOURS, file.retentionHours ?? 720, 0),
    flushItems: intEnv(env.INFERENCE_FLUSH_ITEMS, 100),
    flushSeconds: intEnv(env.INFERENCE_FLUSH_SECONDS, 5),
    modelRetries: intEnv(env.INFERENCE_SERVER_RETRIES, limits.modelRetries ?? 5, 0),
  };
}
