// ai.service.plugin.inference.BatchCompletion: submits a batch inference job to the inference API, waits for
// it with progress in the task log, and outputs the result file's URI and the counts. A retried attempt reuses
// the same Idempotency-Key (execution, task run and request digest), so it follows the job already submitted instead of a new one.
import { createHash } from 'node:crypto';
import type { RunContext, RunnablePlugin, TaskResult } from '../types.js';
import { durationMs, failed, isRecord, plugin, renderBool, renderString, requireString } from '../util.js';

interface ResultView {
  task_id: string; status: string; backend?: string | null; error?: string; result_key?: string | null; bucket?: string;
  progress?: { total: number | null; done: number; failed: number };
  tokens?: { prompt: number; completion: number };
  outputs?: unknown[];
}

function optNumber(ctx: RunContext, name: string): number | undefined {
  const v = ctx.task[name];
  if (v === undefined || v === null) return undefined;
  const n = Number(ctx.renderTyped(v));
  if (!Number.isFinite(n)) throw new Error(`'${name}' must be a number`);
  return n;
}

function inputsOf(ctx: RunContext): unknown[] | undefined {
  if (ctx.task.inputs === undefined) return undefined;
  let v = ctx.renderTyped(ctx.task.inputs);
  if (typeof v === 'string') { try { v = JSON.parse(v); } catch { /* keep as text */ } }
  if (!Array.isArray(v)) throw new Error("'inputs' must be a list (or an expression yielding one)");
  return v;
}

function schemaOf(ctx: RunContext): unknown {
  const s = ctx.task.structuredOutput;
  if (s === undefined) return undefined;
  if (typeof s === 'string') return JSON.parse(ctx.render(s));
  return s; // a schema is data: not rendered (it may legitimately contain braces)
}

/** The contract's request body built from the task's properties. */
export function requestBody(ctx: RunContext): Record<string, unknown> {
  const s = (name: string): string | undefined => renderString(ctx, ctx.task[name]) || undefined;
  const body: Record<string, unknown> = {
    model: requireString(ctx, 'model'), question: s('question'), system_prompt: s('systemPrompt'),
    list_inputs: inputsOf(ctx), input_json_file: s('inputJsonFile'), storage_provider: s('storageProvider') ?? 's3',
    bucket_name: requireString(ctx, 'bucket'), session: requireString(ctx, 'session'),
    max_tokens: optNumber(ctx, 'maxTokens'), role_arn: s('roleArn'), region: s('region'),
    return_output: renderBool(ctx, ctx.task.returnOutput, false), structured_output: schemaOf(ctx), seed: optNumber(ctx, 'seed'),
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
  const t = setTimeout(done, ms);
  function done(): void { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); }
  signal.addEventListener('abort', done);
});

async function submit(ctx: RunContext, base: string, token: string): Promise<string> {
  const body = JSON.stringify(requestBody(ctx));
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const key = renderString(ctx, ctx.task.idempotencyKey) ?? `${ctx.execution.id}/${ctx.taskRun.id}/${digest}`;
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

async function waitFor(ctx: RunContext, base: string, taskId: string, token: string): Promise<ResultView | undefined> {
  const interval = durationMs(renderString(ctx, ctx.task.pollInterval) ?? 'PT5S');
  const deadline = Date.now() + durationMs(renderString(ctx, ctx.task.maxDuration) ?? 'PT1H');
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

export const batchCompletionPlugin: RunnablePlugin = plugin('inference.BatchCompletion', async (ctx): Promise<TaskResult> => {
  const base = requireString(ctx, 'url').replace(/\/+$/, '');
  const token = requireString(ctx, 'token');
  ctx.secrets.add(token);
  const taskId = await submit(ctx, base, token);
  ctx.logger.info(`Submitted batch inference job ${taskId}`);
  const view = await waitFor(ctx, base, taskId, token);
  if (!view) return failed('Task killed');
  const outputs = outputsOf(view);
  if (view.status === 'FAILED') return failed(`batch job ${taskId} FAILED: ${view.error ?? 'unknown error'}`, outputs);
  if (isRecord(outputs) && Number(outputs.failed) > 0) {
    ctx.logger.warn(`${String(outputs.failed)} item(s) failed; see ${String(outputs.uri)}`);
    return { state: 'WARNING', outputs };
  }
  return { state: 'SUCCESS', outputs };
});
