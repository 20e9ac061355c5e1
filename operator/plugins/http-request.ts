// Building and sending the HTTP request shared by core.http.Request and core.http.Download (Kestra's
// AbstractHttp): uri, method, headers, body or formData, options (auth, timeouts, redirects, allowFailed).
import { dict } from '../core/keyed.js';
import type { RunContext } from './types.js';
import { durationMs, isRecord, renderBool, renderString, renderStringMap, requireString } from './util.js';

export interface HttpOptions {
  allowFailed: boolean;
  followRedirects: boolean;
  timeoutMs?: number;
  maxContentLength: number;
}

export interface PreparedRequest {
  url: string;
  method: string;
  init: RequestInit;
  options: HttpOptions;
}

const DEFAULT_MAX_CONTENT = 10 * 1024 * 1024;

function optionsOf(ctx: RunContext): Record<string, unknown> {
  const o = ctx.task.options;
  return isRecord(o) ? o : {};
}

function timeoutOf(ctx: RunContext, o: Record<string, unknown>): number | undefined {
  const candidates: unknown[] = [o.readTimeout, o.readIdleTimeout, o.connectTimeout];
  if (isRecord(o.timeout)) candidates.push(o.timeout.readIdleTimeout, o.timeout.connectTimeout);
  else candidates.push(o.timeout);
  const ms = candidates
    .map((c) => (c === undefined || c === null ? undefined : renderString(ctx, c)))
    .filter((c): c is string => c !== undefined && c !== '')
    .map((c) => durationMs(c));
  return ms.length ? Math.min(...ms) : undefined;
}

export function httpOptions(ctx: RunContext): HttpOptions {
  const o = optionsOf(ctx);
  const allowFailed = ctx.task.allowFailed !== undefined
    ? renderBool(ctx, ctx.task.allowFailed, false)
    : renderBool(ctx, o.allowFailed, false);
  const redirects = o.followRedirects !== undefined ? o.followRedirects : ctx.task.followRedirects;
  const max = o.maxContentLength === undefined ? DEFAULT_MAX_CONTENT : Number(ctx.renderTyped(o.maxContentLength));
  return {
    allowFailed,
    followRedirects: renderBool(ctx, redirects, true),
    timeoutMs: timeoutOf(ctx, o),
    maxContentLength: Number.isFinite(max) && max > 0 ? max : DEFAULT_MAX_CONTENT,
  };
}

function authHeader(ctx: RunContext, o: Record<string, unknown>): string | undefined {
  const auth = isRecord(o.auth) ? o.auth : undefined;
  const type = renderString(ctx, auth?.type)?.toUpperCase();
  if (type === 'BEARER') return `Bearer ${renderString(ctx, auth?.token) ?? ''}`;
  const user = type === 'BASIC' ? renderString(ctx, auth?.username) : renderString(ctx, o.basicAuthUser);
  const pass = type === 'BASIC' ? renderString(ctx, auth?.password) : renderString(ctx, o.basicAuthPassword);
  if (user === undefined) return undefined;
  return 'Basic ' + Buffer.from(`${user}:${pass ?? ''}`).toString('base64');
}

function stringValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

async function storageFile(ctx: RunContext, uri: string, name?: string): Promise<{ blob: Blob; name: string }> {
  const data = await ctx.storage.get(uri);
  const fileName = name ?? decodeURIComponent(uri.split('/').pop() ?? 'file');
  return { blob: new Blob([new Uint8Array(data)]), name: fileName };
}

async function multipartBody(ctx: RunContext, form: Record<string, unknown>): Promise<FormData> {
  const fd = new FormData();
  for (const [key, value] of Object.entries(form)) {
    if (typeof value === 'string' && value.startsWith('kestra://')) {
      const f = await storageFile(ctx, value);
      fd.append(key, f.blob, f.name);
    } else if (isRecord(value) && typeof value.name === 'string' && typeof value.content === 'string') {
      const f = await storageFile(ctx, value.content, value.name);
      fd.append(key, f.blob, f.name);
    } else {
      fd.append(key, stringValue(value));
    }
  }
  return fd;
}

function urlEncodedBody(form: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) {
    if (Array.isArray(v)) v.forEach((x) => params.append(k, stringValue(x)));
    else params.append(k, stringValue(v));
  }
  return params;
}

/** Renders the request properties into a fetch() call description. */
export async function prepareRequest(ctx: RunContext): Promise<PreparedRequest> {
  const o = optionsOf(ctx);
  const url = requireString(ctx, 'uri').replace(/ /g, '%20');
  const method = (renderString(ctx, ctx.task.method) ?? 'GET').toUpperCase();
  const contentType = ctx.task.contentType === undefined ? 'application/json' : renderString(ctx, ctx.task.contentType);
  const headers = new Headers();
  let body: BodyInit | undefined;
  const rawForm = ctx.task.formData;
  const form = rawForm === undefined ? undefined : typeof rawForm === 'string' ? ctx.renderTyped(rawForm) : ctx.renderValue(rawForm);
  if (isRecord(form) && Object.keys(form).length > 0) {
    body = contentType?.startsWith('multipart/form-data') ? await multipartBody(ctx, form) : urlEncodedBody(form);
  } else if (ctx.task.body !== undefined && ctx.task.body !== null) {
    body = renderString(ctx, ctx.task.body);
    if (contentType) headers.set('content-type', contentType);
  } else if (contentType) {
    headers.set('content-type', contentType);
  }
  const auth = authHeader(ctx, o);
  if (auth) headers.set('authorization', auth);
  for (const [k, v] of Object.entries(renderStringMap(ctx, ctx.task.headers))) headers.set(k, v);
  // fetch sets the multipart content type itself, with its boundary.
  if (body instanceof FormData) headers.delete('content-type');
  const options = httpOptions(ctx);
  const init: RequestInit = { method, headers, body, redirect: options.followRedirects ? 'follow' : 'manual' };
  return { url, method, init, options };
}

/** Sends the request with the task's kill signal and optional timeout; logs the request line at DEBUG. */
export async function send(ctx: RunContext, req: PreparedRequest): Promise<Response> {
  ctx.logger.debug(`Request '${req.method} ${req.url}'`);
  const signals = [ctx.signal];
  if (req.options.timeoutMs !== undefined) signals.push(AbortSignal.timeout(req.options.timeoutMs));
  try {
    return await fetch(req.url, { ...req.init, signal: AbortSignal.any(signals) });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (err instanceof Error && err.name === 'TimeoutError') {
      throw new Error(`Request '${req.method} ${req.url}' timed out after ${req.options.timeoutMs} ms`);
    }
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new Error(`Request '${req.method} ${req.url}' failed${cause || (err instanceof Error ? ': ' + err.message : '')}`);
  }
}

/** Kestra's headers output: lower-case name → list of values. */
export function responseHeaders(res: Response): Record<string, string[]> {
  const out = dict<string[]>(); // the server chose the names
  res.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    out[name] = [value];
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  return out;
}

export function statusError(code: number): string {
  return `Failed http request with response code '${code}'`;
}
