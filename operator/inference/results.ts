// The result files of a batch job, one definition for both homes (written by the one job runner, runner.ts): the
// names derived from the stem fixed at the job's start, the output and error JSONL lines, the manifest and the JSON
// document, written in that order so the document (the file a caller takes, sorting last) appears last.
import type { Client } from 'minio';
import type { FinalState } from './db.js';
import { contractStatus } from './db.js';
import type { BatchRequest } from './request.js';
import { writeJson, writeText } from './storage.js';

/** The names of a job's result files inside its folder, from the stem fixed at its start. */
export function resultFiles(stem: string): { result: string; output: string; errors: string; manifest: string; partial: string } {
  return { result: `${stem}.json`, output: `${stem}-output.jsonl`, errors: `${stem}-errors.jsonl`, manifest: `${stem}-manifest.json`, partial: `${stem}-partial/` };
}

/** One input's outcome as the result files show it (`output` parsed; PENDING: never generated). */
export interface ResultItem {
  index: number; custom_id: string; input: unknown; status: 'DONE' | 'FAILED' | 'PENDING';
  output: unknown; error: string | null; prompt_tokens: number; completion_tokens: number;
}

/** One line of the output JSONL file. */
export function outputLine(it: ResultItem): Record<string, unknown> {
  return { custom_id: it.custom_id, index: it.index, output: it.output ?? null, prompt_tokens: it.prompt_tokens, completion_tokens: it.completion_tokens };
}

/** One line of the error JSONL file; `stopped` names why a still-pending item was not generated. */
export function errorLine(it: ResultItem, stopped?: 'cancelled' | 'expired'): Record<string, unknown> {
  const message = it.error ?? (stopped === 'expired' ? 'not generated: the completion window ended' : 'not generated: the job was cancelled');
  const code = stopped && it.status === 'PENDING' ? stopped
    : message.startsWith('answer did not match structured_output') ? 'schema_mismatch'
      : message.startsWith('unsupported input') ? 'invalid_input'
        : message.startsWith('protocol error') ? 'protocol_error' : 'model_error';
  return { custom_id: it.custom_id, index: it.index, error: { code, message } };
}

/**
 * How a job ends once generation stopped: CANCELLED / EXPIRED when `stopped`; else SUCCESS when at least one item was
 * answered, FAILED when there were no inputs or every item failed (failed items are in the error file).
 */
export function finalState(total: number, done: number, failed: number, stopped?: 'cancelled' | 'expired'): { state: FinalState; error?: string } {
  const finished = `${done + failed} of ${total} items finished`;
  if (stopped === 'cancelled') return { state: 'CANCELLED', error: `cancelled by its owner; ${finished} (see the result files)` };
  if (stopped === 'expired') return { state: 'EXPIRED', error: `the completion window ended; ${finished} (see the result files)` };
  if (total === 0) return { state: 'FAILED', error: 'the job has no inputs' };
  if (done === 0) return { state: 'FAILED', error: `all ${total} items failed; see the error file` };
  return { state: 'SUCCESS' };
}

export const jsonl = (lines: Record<string, unknown>[]): string => lines.map((l) => `${JSON.stringify(l)}\n`).join('');

export interface ResultSummary {
  taskId: string; req: BatchRequest; backend: string; modelFile: string; state: FinalState; error?: string;
  created: string | null; stopped?: 'cancelled' | 'expired';
}

/** Writes output JSONL, error JSONL, manifest, then the JSON document; returns the counts. */
export async function writeResultFiles(client: Client, folder: string, stem: string, items: ResultItem[], s: ResultSummary):
  Promise<{ total: number; done: number; failed: number; promptTokens: number; completionTokens: number }> {
  const files = resultFiles(stem);
  const bucket = s.req.bucket_name;
  const base = `${folder}/`;
  const done = items.filter((i) => i.status === 'DONE');
  const failed = items.filter((i) => i.status === 'FAILED');
  const c = {
    total: items.length, done: done.length, failed: failed.length,
    promptTokens: items.reduce((n, i) => n + i.prompt_tokens, 0), completionTokens: items.reduce((n, i) => n + i.completion_tokens, 0),
  };
  const common = {
    task_id: s.taskId, model: s.req.model, backend: s.backend, model_file: s.modelFile,
    state: s.state, status: contractStatus(s.state), session: s.req.session, created: s.created, finished: new Date().toISOString(),
    counts: { total: c.total, done: c.done, failed: c.failed, not_generated: c.total - c.done - c.failed },
    tokens: { prompt: c.promptTokens, completion: c.completionTokens },
    ...(s.error ? { error: s.error } : {}),
  };
  // The three side files at once, then the document, last.
  await Promise.all([
    writeText(client, bucket, base + files.output, jsonl(done.map(outputLine)), 'application/jsonl'),
    writeText(client, bucket, base + files.errors, jsonl(items.filter((i) => i.status !== 'DONE').map((i) => errorLine(i, s.stopped))), 'application/jsonl'),
    writeJson(client, bucket, base + files.manifest, { ...common, files: { result: files.result, output: files.output, errors: files.errors } }),
  ]);
  await writeJson(client, bucket, base + files.result, {
    ...common,
    ...(s.backend.includes('demo-random-weights') ? { note: 'generated by a random-weights demo model: the text is meaningless' } : {}),
    results: items.map((it) => ({
      index: it.index, custom_id: it.custom_id, input: it.input, output: it.output ?? null,
      prompt_tokens: it.prompt_tokens, completion_tokens: it.completion_tokens,
      ...(it.error ? { error: it.error } : it.status === 'PENDING' ? { error: errorLine(it, s.stopped).error } : {}),
    })),
  });
  return c;
}
