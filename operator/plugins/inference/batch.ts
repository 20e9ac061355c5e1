// ai.service.plugin.inference.BatchCompletion: submits a batch inference job to the inference API, waits for
// it with progress in the task log, and outputs the result file's URI and the counts. A retried attempt reuses
// the same Idempotency-Key (execution, task run and request digest), so it follows the job already submitted instead of a new one.
import { createHash } from 'node:crypto';
import { definePlugin, p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';
import { durationMs, failed, isRecord } from '../util.js';

interface ResultView {
  task_id: string; status: string; backend?: string | null; error?: string; result_key?: string | null; bucket?: string;
  progress?: { total: number | null; done: number; failed: number };
  tokens?: { prompt: number; completion: number };
  outputs?: unknown[];
}

const batchProperties = {
  url: p.string().required().describe('Base URL of the inference API (e.g. http://flowpilot:8080).'),
  token: p.string().required().secret().describe('Bearer token of the inference API.'),
  model: p.string().required().describe('The model.'),
  question: p.string().describe('The question asked of every input.'),
  systemPrompt: p.string().describe('The system prompt.'),
  inputs: p.any().describe('The inputs: a list, or an expression or JSON text yielding one.'),
  inputJsonFile: p.string().describe('A JSON file of inputs in the bucket, instead of `inputs`.'),
  storageProvider: p.string().default('s3').describe('Where inputs and results are stored.'),
  bucket: p.string().required().describe('The bucket of inputs and results.'),
  session: p.string().required().describe('The session (folder) of the job in the bucket.'),
  maxTokens: p.number().describe('Most tokens generated per input.'),
  roleArn: p.string().describe('A role the service assumes to reach the bucket.'),
  region: p.string().describe('The bucket\'s region.'),
  // A schema is data: not rendered when written as a map (it may legitimately contain braces); a string is rendered JSON.
  structuredOutput: p.raw({ type: ['object', 'string'] }).describe('A JSON schema the answers must follow.'),
  returnOutput: p.boolean().default(false).describe('Also return the answers as the `outputs` output.'),
  seed: p.number().describe('Sampling seed.'),
  pollInterval: p.durationText().default('PT5S').describe('How often the job is polled.'),
  maxDuration: p.durationText().default('PT1H').describe('Longest wait for the job.'),
  idempotencyKey: p.string().describe('Idempotency-Key of the submission (default: execution, task run and request digest).'),
};
type BatchProps = PropValues<typeof batchProperties>;

function inputsOf(raw: unknown): unknown[] | undefined {
  if (raw === undefined) return undefined;
  let v = raw;
  if (typeof v === 'string') { try { v = JSON.parse(v); } catch { /* keep as text */ } }
  if (!Array.isArray(v)) throw new Error("'inputs' must be a list (or an expression yielding one)");
  return v;
}

function schemaOf(ctx: RunContext, s: unknown): unknown {
  if (s === undefined) return undefined;
  if (typeof s === 'string') return JSON.parse(ctx.render(s));
  return s;
}

/** The contract's request body built from the task's properties (empty strings count as unset). */
export function requestBody(ctx: RunContext, props: BatchProps): Record<string, unknown> {
  const s = (v: string | undefined): string | undefined => v || undefined;
  const body: Record<string, unknown> = {
    model: props.model, question: s(props.question), system_prompt: s(props.systemPrompt),
    list_inputs: inputsOf(props.inputs), input_json_file: s(props.inputJsonFile), storage_provider: s(props.storageProvider) ?? 's3',
    bucket_name: props.bucket, session: props.session,
    max_tokens: props.maxTokens, role_arn: s(props.roleArn), region: s(props.region),
    return_output: props.returnOutput, structured_output: schemaOf(ctx, props.structuredOutput), seed: props.seed,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
  const t = setTimeout(done, ms);
  function done(): void { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
  signal.addEventListener('abort', done);
});

async function submit(ctx: RunContext, props: BatchProps, base: string): Promise<string> {
  const token = props.token;
  const body = JSON.stringify(requestBody(ctx, props));
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const key = props.idempotencyKey ?? `${ctx.execution.id}/${ctx.taskRun.id}/${digest}`;
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST', signal: ctx.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body,
  });
  const text = await res.text();
  if (res.status !== 200 && res.status !== 202) throw new Error(`inference API refused the job (HTTP ${res.status}): ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { task_id: string }).task_id;
}

function outputsOf(view: ResultView): Record<string, unknown> {
  const bucket = view.bucket ?? '';
  return {
    taskId: view.task_id, status: view.status, backend: view.backend ?? undefined,
    uri: view.result_key ? `s3://${bucket}/${view.result_key}` : undefined, resultKey: view.result_key ?? undefined, bucket,
    total: view.progress?.total ?? 0, done: view.progress?.done ?? 0, failed: view.progress?.failed ?? 0,
    promptTokens: view.tokens?.prompt ?? 0, completionTokens: view.tokens?.completion ?? 0,
    ...(view.outputs ? { outputs: view.outputs } : {}),
  };
}

async function waitFor(ctx: RunContext, props: BatchProps, base: string, taskId: string): Promise<ResultView | undefined> {
  const token = props.token;
  const interval = durationMs(props.pollInterval);
  const deadline = Date.now() + durationMs(props.maxDuration);
  let last = '';
  while (!ctx.signal.aborted) {
    const res = await fetch(`${base}/get_result/${taskId}`, { signal: ctx.signal, headers: { authorization: `Bearer ${token}` } });
    if (!res.ok) throw new Error(`get_result answered HTTP ${res.status}`);
    const view = await res.json() as ResultView;
    const p = view.progress;
    const line = `job ${taskId}: ${view.status}, ${p?.done ?? 0} done, ${p?.failed ?? 0} failed of ${p?.total ?? '?'}`;
    if (line !== last) { ctx.logger.info(line); last = line; }
    if (view.status === 'SUCCESS' || view.status === 'FAILED') return view;
    if (Date.now() >= deadline) throw new Error(`job ${taskId} did not finish within maxDuration`);
    await sleep(interval, ctx.signal);
  }
  return undefined;
}

export const batchCompletionDefinition = definePlugin({
  type: 'inference.BatchCompletion',
  title: 'Batch completion',
  description: 'Submits a batch inference job to the inference API, waits for it with progress in the task log, and outputs the result file\'s URI and the counts; WARNING when some items failed. A retried attempt reuses the same Idempotency-Key, so it follows the job already submitted.',
  properties: batchProperties,
  outputs: {
    taskId: { type: 'string', description: 'The job id.' },
    status: { type: 'string', description: 'SUCCESS or FAILED.' },
    backend: { type: 'string', description: 'The backend that ran it.' },
    uri: { type: 'string', description: 's3:// URI of the result file.' },
    resultKey: { type: 'string', description: 'Its key in the bucket.' },
    bucket: { type: 'string', description: 'The bucket.' },
    total: { type: 'integer', description: 'Items.' },
    done: { type: 'integer', description: 'Items answered.' },
    failed: { type: 'integer', description: 'Items failed.' },
    promptTokens: { type: 'integer', description: 'Prompt tokens used.' },
    completionTokens: { type: 'integer', description: 'Completion tokens generated.' },
    outputs: { type: 'array', description: 'The answers (with returnOutput).' },
  },
  examples: [{ title: 'Tag reviews', code: 'id: llm\ntype: ai.service.plugin.inference.BatchCompletion\nurl: http://flowpilot:8080\ntoken: "{{ secret(\'INFERENCE_TOKEN\') }}"\nmodel: llama2_7b\nquestion: Tag the review\ninputs: ["great", "awful"]\nbucket: research\nsession: week-47\n' }],
  async run(ctx, props) {
    const base = props.url.replace(/\/+$/, '');
    const taskId = await submit(ctx, props, base);
    ctx.logger.info(`Submitted batch inference job ${taskId}`);
    const view = await waitFor(ctx, props, base, taskId);
    if (!view) return failed('Task killed');
    const outputs = outputsOf(view);
    if (view.status === 'FAILED') return failed(`batch job ${taskId} FAILED: ${view.error ?? 'unknown error'}`, outputs);
    if (isRecord(outputs) && Number(outputs.failed) > 0) {
      ctx.logger.warn(`${String(outputs.failed)} item(s) failed; see ${String(outputs.uri)}`);
      return { state: 'WARNING', outputs };
    }
    return { state: 'SUCCESS', outputs };
  },
});
export const batchCompletionPlugin = batchCompletionDefinition.runnable;
