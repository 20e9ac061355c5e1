// One input item -> one model answer: builds the prompt from the request and the input's shape, runs the
// backend, and for `structured_output` validates the answer, retrying an invalid one a bounded number of times.
import type { CompletionBackend } from './backends/types.js';
import type { ItemOutcome } from './db.js';
import type { BatchRequest } from './request.js';
import { checkAnswer } from './structured.js';

class InputError extends Error {}

const TEXT_FIELDS = ['text', 'input', 'content', 'prompt'] as const;

/**
 * Accepted input shapes: a string; or an object whose `text` (or `input`, `content`, `prompt`) string is the
 * input and whose optional `question` / `system_prompt` strings override the request's for that item; any
 * other object is sent as its JSON text. Anything else (number, null, list) fails only that item.
 */
export function promptFor(req: BatchRequest, input: unknown): { system?: string; prompt: string } {
  let text: string;
  let question = req.question;
  let system = req.system_prompt;
  if (typeof input === 'string') text = input;
  else if (input && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    const field = TEXT_FIELDS.find((f) => typeof o[f] === 'string');
    text = field ? (o[field] as string) : JSON.stringify(o);
    if (typeof o.question === 'string') question = o.question;
    if (typeof o.system_prompt === 'string') system = o.system_prompt;
  } else {
    throw new InputError(`unsupported input (${input === null ? 'null' : Array.isArray(input) ? 'list' : typeof input}): expected a string or an object`);
  }
  const prompt = question ? `${question}\n\n${text}` : text;
  return { system: system || undefined, prompt };
}

/** Deterministic per-item seed: the same request and seed give the same answers; each retry samples with another seed. */
export const itemSeed = (req: BatchRequest, index: number, attempt: number): number =>
  ((req.seed ?? 0) + index * 7919 + attempt * 104729) >>> 0;

/** Sampling temperature of an attempt: retries after a schema mismatch sample hotter (a greedy failure would repeat). */
export const attemptTemperature = (temperature: number | undefined, attempt: number): number | undefined =>
  attempt === 0 ? temperature : Math.min(1.5, (temperature ?? 0.8) + 0.25 * attempt);

/**
 * Runs one item. A backend failure (after the backend's own retries of transient errors) fails the item with its
 * message; only an answer that does not match `structured_output` is regenerated, with another seed and temperature.
 */
export async function runItem(backend: CompletionBackend, req: BatchRequest, input: unknown, index: number,
  retries: number, signal?: AbortSignal): Promise<ItemOutcome> {
  let p: { system?: string; prompt: string };
  try { p = promptFor(req, input); } catch (e) {
    return { status: 'FAILED', error: (e as Error).message, promptTokens: 0, completionTokens: 0 };
  }
  let promptTokens = 0, completionTokens = 0, lastError = '';
  const attempts = req.structured_output ? retries + 1 : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    let r;
    try {
      r = await backend.complete({
        system: p.system, prompt: p.prompt, maxTokens: req.max_tokens, schema: req.structured_output,
        seed: itemSeed(req, index, attempt), temperature: attemptTemperature(req.temperature, attempt), signal,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      return { status: 'FAILED', error: (e as Error).message, promptTokens, completionTokens };
    }
    promptTokens += r.promptTokens;
    completionTokens += r.completionTokens;
    if (!req.structured_output) return { status: 'DONE', output: r.text, promptTokens, completionTokens };
    const checked = checkAnswer(req.structured_output, r.text);
    if (checked.ok) return { status: 'DONE', output: checked.value, promptTokens, completionTokens };
    lastError = `${checked.error}${r.finishReason === 'length' ? ' (stopped at max_tokens)' : ''}`;
  }
  return { status: 'FAILED', error: `answer did not match structured_output after ${attempts} attempts: ${lastError}`, promptTokens, completionTokens };
}
