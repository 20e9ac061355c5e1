// Sending a notification payload to a webhook URL (Slack, Microsoft Teams, Discord, the generic webhook): one HTTP
// request with the task's kill signal and Kestra's client timeouts (`options`). A 4xx/5xx answer fails the task naming
// the status and the start of the answer, never the URL: most webhook URLs hold their credential in the path.
import { p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';

/** Kestra's default read timeout of its notification tasks. */
const DEFAULT_READ_TIMEOUT_MS = 10_000;
/** How much of an error answer the failure message quotes (the rest is not read). */
const ERROR_BODY_CHARS = 300;

const optionProps = {
  connectTimeout: p.duration().describe('Time allowed until the server answers (its status line and headers).'),
  readTimeout: p.duration().describe('Time allowed for the whole request, answer included (default PT10S).'),
  readIdleTimeout: p.duration().describe('Time allowed without receiving a byte of the answer.'),
  headers: p.stringMap().describe('HTTP headers added to the request.'),
};

/** The `options` property of the webhook tasks (Kestra's AbstractHttpOptionsTask.RequestOptions, the parts honoured). */
export const httpOptions = p.object(optionProps).describe('Options of the HTTP client: timeouts and extra headers.');
export type HttpOptions = PropValues<typeof optionProps> | undefined;

/** The webhook URL: http(s) only; the message never repeats it (it is a credential). */
function checkedUrl(url: string, name = 'url'): URL {
  let parsed: URL;
  try { parsed = new URL(url.trim()); } catch { throw new Error(`Property '${name}' is not a valid URL`); }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`Property '${name}' must be an http:// or https:// URL`);
  return parsed;
}

async function errorBody(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < ERROR_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const t = text.trim().replace(/\s+/g, ' ');
  return t.length > ERROR_BODY_CHARS ? `${t.slice(0, ERROR_BODY_CHARS)}...` : t;
}

/** Reads and drops the answer, each chunk within `idleMs` of the previous one when set. */
async function drain(res: Response, idleMs: number | undefined, abort: (reason: Error) => void): Promise<void> {
  if (!res.body) return;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (idleMs === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(() => abort(new Error(`no byte of the answer within readIdleTimeout (${idleMs} ms)`)), idleMs);
  };
  try {
    arm();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) { void chunk; arm(); }
  } finally {
    clearTimeout(timer);
  }
}

export interface WebhookRequest {
  url: string;
  body: string;
  contentType?: string;
  method?: 'POST' | 'PUT' | 'PATCH';
  options?: HttpOptions;
  /** What the log line and messages call the target (e.g. 'Slack webhook'). */
  what: string;
}

/** Sends the request; resolves with the answer's status, throws a message naming the status on a 4xx/5xx answer. */
export async function sendWebhook(ctx: RunContext, req: WebhookRequest): Promise<number> {
  const url = checkedUrl(req.url);
  const o = req.options;
  const total = new AbortController();
  const fail = (reason: Error) => total.abort(reason);
  const readMs = o?.readTimeout ?? DEFAULT_READ_TIMEOUT_MS;
  const timers = [setTimeout(() => fail(new Error(`no complete answer within readTimeout (${readMs} ms)`)), readMs)];
  if (o?.connectTimeout !== undefined) {
    const ms = o.connectTimeout;
    timers.push(setTimeout(() => fail(new Error(`no answer within connectTimeout (${ms} ms)`)), ms));
  }
  const headers = new Headers({ 'content-type': req.contentType ?? 'application/json' });
  for (const [k, v] of Object.entries(o?.headers ?? {})) headers.set(k, v);
  ctx.logger.debug(`Send ${req.what} (${req.body.length} characters) to host '${url.host}'`);
  const signal = AbortSignal.any([ctx.signal, total.signal]);
  try {
    let res: Response;
    try {
      res = await fetch(url, { method: req.method ?? 'POST', headers, body: req.body, signal });
    } catch (err) {
      throw new Error(`${req.what} to host '${url.host}' failed: ${reason(err, total.signal)}`);
    }
    clearTimeout(timers[1]);
    if (res.status >= 400) {
      const body = await errorBody(res).catch(() => '');
      throw new Error(`${req.what} failed with HTTP status ${res.status}${res.statusText ? ` (${res.statusText})` : ''}${body ? `: ${body}` : ''}`);
    }
    try {
      await drain(res, o?.readIdleTimeout, fail);
    } catch (err) {
      throw new Error(`${req.what} to host '${url.host}' failed while reading the answer: ${reason(err, total.signal)}`);
    }
    ctx.logger.debug(`${req.what} answered HTTP ${res.status}`);
    return res.status;
  } finally {
    timers.forEach(clearTimeout);
  }
}

function reason(err: unknown, timeout: AbortSignal): string {
  if (timeout.aborted && timeout.reason instanceof Error) return timeout.reason.message;
  const e = err as Error & { cause?: Error };
  return e?.cause?.message ?? e?.message ?? String(err);
}
