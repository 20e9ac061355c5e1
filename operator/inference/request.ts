// Validation of a batch inference request (the contract's request table): returns the normalised request
// or the first problem with the field it concerns, which the API answers as HTTP 400.
import { compileSchema } from './structured.js';

export interface BatchRequest {
  model: string;
  question?: string;
  system_prompt?: string;
  list_inputs?: unknown[];
  input_json_file?: string;
  storage_provider: 's3' | 'gcs';
  bucket_name: string;
  session: string;
  max_tokens: number;
  role_arn?: string;
  region?: string;
  return_output: boolean;
  structured_output?: Record<string, unknown>;
  /** Extension: sampling seed (default 0); the same request and seed give the same answers. */
  seed?: number;
  /** Extension: sampling temperature. */
  temperature?: number;
  /** Extension (OpenAI Batch's `completion_window`): seconds after submission at which unfinished items expire. */
  completion_window?: number;
}

export class RequestError extends Error {
  constructor(readonly field: string, message: string) { super(`${field}: ${message}`); this.name = 'RequestError'; }
}

export interface RequestLimits { modelIds: string[]; maxInputs: number; maxTokens: number; defaultMaxTokens: number; completionWindowSeconds: number }

const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._=@+-]{0,199}$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

type Body = Record<string, unknown>;
const optString = (b: Body, f: string): string | undefined => {
  const v = b[f];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RequestError(f, 'must be a string');
  return v;
};

function inputsOf(b: Body, limits: RequestLimits): unknown[] | undefined {
  const v = b.list_inputs;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new RequestError('list_inputs', 'must be a list of strings');
  if (v.length > limits.maxInputs) throw new RequestError('list_inputs', `at most ${limits.maxInputs} inputs`);
  return v;
}

function fileName(b: Body): string | undefined {
  const f = optString(b, 'input_json_file');
  if (f === undefined || f === '') return undefined;
  if (f.startsWith('/') || f.split('/').some((p) => p === '..' || p === '.' || p === '')) {
    throw new RequestError('input_json_file', 'must be a file name inside the session folder');
  }
  return f;
}

function schemaOf(b: Body): Record<string, unknown> | undefined {
  let s = b.structured_output;
  if (s === undefined || s === null || s === '') return undefined;
  if (typeof s === 'string') {
    try { s = JSON.parse(s); } catch { throw new RequestError('structured_output', 'is not valid JSON'); }
  }
  try { compileSchema(s); } catch (e) { throw new RequestError('structured_output', `invalid JSON schema: ${(e as Error).message}`); }
  return s as Record<string, unknown>;
}

function maxTokens(b: Body, limits: RequestLimits): number {
  const v = b.max_tokens;
  if (v === undefined || v === null) return limits.defaultMaxTokens;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > limits.maxTokens) {
    throw new RequestError('max_tokens', `must be an integer between 1 and ${limits.maxTokens}`);
  }
  return v;
}

function optNumber(b: Body, f: string, integer: boolean): number | undefined {
  const v = b[f];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new RequestError(f, integer ? 'must be an integer' : 'must be a number');
  }
  return v;
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `completion_window`: `"24h"` (OpenAI's form; also `m`, `s`, `d`) or a number of seconds, at most the limit. */
function completionWindow(b: Body, limits: RequestLimits): number | undefined {
  const v = b.completion_window;
  if (v === undefined || v === null) return undefined;
  const m = typeof v === 'string' ? /^(\d{1,9})([smhd])$/.exec(v.trim()) : null;
  const seconds = typeof v === 'number' ? v : m ? Number(m[1]) * WINDOW_UNITS[m[2]] : NaN;
  if (!Number.isInteger(seconds) || seconds < 1) throw new RequestError('completion_window', 'must be a duration such as "24h", "90m" or a number of seconds');
  if (seconds > limits.completionWindowSeconds) {
    throw new RequestError('completion_window', `at most ${limits.completionWindowSeconds} seconds (setting INFERENCE_COMPLETION_WINDOW_SECONDS)`);
  }
  return seconds;
}

/** Validates a parsed JSON body. Throws RequestError naming the offending field. */
export function validateRequest(body: unknown, limits: RequestLimits): BatchRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RequestError('body', 'must be a JSON object');
  const b = body as Body;
  const model = optString(b, 'model');
  if (!model) throw new RequestError('model', `is required; one of ${limits.modelIds.join(', ')}`);
  if (!limits.modelIds.includes(model)) throw new RequestError('model', `unknown model '${model}'; one of ${limits.modelIds.join(', ')}`);
  const list = inputsOf(b, limits);
  const file = fileName(b);
  if (!list?.length && !file) throw new RequestError('list_inputs', 'give list_inputs and/or input_json_file');
  const provider = optString(b, 'storage_provider') ?? 's3';
  if (provider !== 's3' && provider !== 'gcs') throw new RequestError('storage_provider', "must be 's3' or 'gcs'");
  const bucket = optString(b, 'bucket_name');
  if (!bucket) throw new RequestError('bucket_name', 'is required: results are written to the bucket');
  if (!BUCKET.test(bucket)) throw new RequestError('bucket_name', 'is not a valid bucket name');
  const session = optString(b, 'session');
  if (!session) throw new RequestError('session', 'is required: it names the folder of the job');
  if (!SAFE_SEGMENT.test(session)) throw new RequestError('session', 'may hold letters, digits and . _ = @ + - only');
  const roleArn = optString(b, 'role_arn');
  if (roleArn && !/^arn:[a-z0-9-]+:iam::[^:]*:role\/.+$/.test(roleArn)) throw new RequestError('role_arn', 'must be an IAM role ARN');
  const ret = b.return_output;
  if (ret !== undefined && ret !== null && typeof ret !== 'boolean') throw new RequestError('return_output', 'must be a boolean');
  return {
    model, question: optString(b, 'question'), system_prompt: optString(b, 'system_prompt'),
    list_inputs: list, input_json_file: file, storage_provider: provider, bucket_name: bucket, session,
    max_tokens: maxTokens(b, limits), role_arn: roleArn || undefined, region: optString(b, 'region') || undefined,
    return_output: ret === true, structured_output: schemaOf(b),
    seed: optNumber(b, 'seed', true), temperature: optNumber(b, 'temperature', false),
    completion_window: completionWindow(b, limits),
  };
}
