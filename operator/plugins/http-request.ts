// Building and sending the HTTP request shared by core.http.Request and core.http.Download (Kestra's
// AbstractHttp): uri, method, headers, body or formData, options (auth, timeouts, redirects, allowFailed).
import { dict } from '../core/keyed.js';
import { p } from './define.js';
import type { RunContext } from './types.js';
import { durationMs, isRecord } from './util.js';
import { timeoutSignal } from '../faults.js';

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;

/** The properties core.http.Request and core.http.Download share (Kestra's AbstractHttp). */
export const httpProperties = {
  uri: p.string().required().describe('The URL.'),
  method: p.enum(HTTP_METHODS).default('GET').describe('The HTTP method.'),
  headers: p.stringMap().describe('Request headers.'),
  contentType: p.string().default('application/json').describe('Content type of the body.'),
  body: p.text({}).describe('The request body (a map or a list is sent as JSON text).'),
  options: p.map().describe('Kestra\'s HTTP options: `auth` ({type: BASIC, username, password} or {type: BEARER, token}), `basicAuthUser`/`basicAuthPassword`, `readTimeout`/`readIdleTimeout`/`connectTimeout`/`timeout` (ISO 8601; the shortest applies), `followRedirects` (default true), `maxContentLength` (bytes, default 10 MiB), `allowFailed`.'),
};

/** What prepareRequest reads: the shared properties, plus the Request task's form and allowFailed. */
export interface HttpProps {
  uri: string;
  method: string;
  headers?: Record<string, string>;
  contentType: string;
  body?: string;
  options?: Record<string, unknown>;
  formData?: Record<string, unknown>;
  allowFailed?: boolean;
}

/** A rendered option value as text (undefined when absent). */
const optionText = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));

function optionBool(v: unknown, fallback: boolean, name: string): boolean {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (s === 'true' || s === 'false') return s === 'true';
  throw new Error(`Property 'options.${name}' must be a boolean, got '${String(v)}'`);
}

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

function timeoutOf(o: Record<string, unknown>): number | undefined {
  const candidates: unknown[] = [o.readTimeout, o.readIdleTimeout, o.connectTimeout];
  if (isRecord(o.timeout)) candidates.push(o.timeout.readIdleTimeout, o.timeout.connectTimeout);
  else candidates.push(o.timeout);
  const ms = candidates
    .map(optionText)
    .filter((c): c is string => c !== undefined && c !== '')
    .map((c) => durationMs(c));
  return ms.length ? Math.min(...ms) : undefined;
}

/** The options of a request (`options`, rendered), the task's own `allowFailed` winning over `options.allowFailed`. */
export function httpOptions(props: Pick<HttpProps, 'options' | 'allowFailed'>): HttpOptions {
  const o = props.options ?? {};
  const max = o.maxContentLength === undefined ? DEFAULT_MAX_CONTENT : Number(o.maxContentLength);
  return {
    allowFailed: props.allowFailed ?? optionBool(o.allowFailed, false, 'allowFailed'),
    followRedirects: optionBool(o.followRedirects, true, 'followRedirects'),
    timeoutMs: timeoutOf(o),
    maxContentLength: Number.isFinite(max) && max > 0 ? max : DEFAULT_MAX_CONTENT,
  };
}

/** The Authorization header of `options.auth` (or Kestra's older basicAuthUser/Password); the credentials are masked. */
function authHeader(ctx: RunContext, o: Record<string, unknown>): string | undefined {
  const auth = isRecord(o.auth) ? o.auth : undefined;
  const type = optionText(auth?.type)?.toUpperCase();
  const secret = (v: string | undefined): string | undefined => {
    if (v) ctx.secrets.add(v);
    return v;
  };
  if (type === 'BEARER') return `Bearer ${secret(optionText(auth?.token)) ?? ''}`;
  const user = type === 'BASIC' ? optionText(auth?.username) : optionText(o.basicAuthUser);
  const pass = secret(type === 'BASIC' ? optionText(auth?.password) : optionText(o.basicAuthPassword));
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
export async function prepareRequest(ctx: RunContext, props: HttpProps): Promise<PreparedRequest> {
  const o = props.options ?? {};
  const url = props.uri.replace(/ /g, '%20');
  const method = props.method.toUpperCase();
  const contentType = props.contentType;
  const headers = new Headers();
  let body: BodyInit | undefined;
  const form = props.formData;
  if (form && Object.keys(form).length > 0) {
    body = contentType.startsWith('multipart/form-data') ? await multipartBody(ctx, form) : urlEncodedBody(form);
  } else if (props.body !== undefined) {
    body = props.body;
    if (contentType) headers.set('content-type', contentType);
  } else if (contentType) {
    headers.set('content-type', contentType);
  }
  const auth = authHeader(ctx, o);
  if (auth) headers.set('authorization', auth);
  for (const [k, v] of Object.entries(props.headers ?? {})) headers.set(k, v);
  // fetch sets the multipart content type itself, with its boundary.
  if (body instanceof FormData) headers.delete('content-type');
  const options = httpOptions(props);
  const init: RequestInit = { method, headers, body, redirect: options.followRedirects ? 'follow' : 'manual' };
  return { url, method, init, options };
}

/** Sends the request with the task's kill signal and optional timeout; logs the request line at DEBUG. */
export async function send(ctx: RunContext, req: PreparedRequest): Promise<Response> {
  ctx.logger.debug(`Request '${req.method} ${req.url}'`);
  const signals = [ctx.signal];
  if (req.options.timeoutMs !== undefined) signals.push(timeoutSignal(req.options.timeoutMs));
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
