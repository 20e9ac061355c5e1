// The CLI's HTTP client of the REST API (/api/v1): authentication (bearer token or basic), JSON and YAML bodies,
// server-sent events, and every failure turned into one CliError line with the exit code of its kind.
import { CliError, ExitCodes } from './errors.js';

export interface Connection {
  /** The server's root URL (`http://localhost:8080`); a trailing `/api/v1` is accepted and dropped. */
  server: string;
  token?: string;
  /** `user:password` for HTTP basic auth. */
  user?: string;
}

export type Query = Record<string, string | number | boolean | undefined | (string | number)[]>;

export interface RequestOptions {
  query?: Query;
  /** A string is sent as is (with `contentType`), FormData as multipart, anything else as JSON. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Statuses answered to the caller instead of thrown (e.g. 404 for `kv get` of a missing key). */
  accept?: number[];
  signal?: AbortSignal;
}

export interface SseEvent { id: string; data: unknown }

/** The base of every route: `<server>/api/v1`. */
export function apiBase(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(`invalid server URL '${server}': expected e.g. http://localhost:8080 (--server or FLOWPILOT_URL)`, ExitCodes.USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid server URL '${server}': only http and https are supported`, ExitCodes.USAGE);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '')}/api/v1`;
}

/** `why` of a failed fetch: the system error code when there is one (ECONNREFUSED, ENOTFOUND...). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

export class ApiClient {
  readonly base: string;
  private readonly auth?: string;

  constructor(readonly conn: Connection) {
    this.base = apiBase(conn.server);
    if (conn.token) this.auth = `Bearer ${conn.token}`;
    else if (conn.user) {
      if (!conn.user.includes(':')) throw new CliError(`invalid --user '${conn.user.split(':')[0]}': expected user:password`, ExitCodes.USAGE);
      this.auth = `Basic ${Buffer.from(conn.user).toString('base64')}`;
    }
  }

  url(path: string, query: Query = {}): string {
    const u = new URL(`${this.base}${path}`);
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      for (const item of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(item));
    }
    return u.toString();
  }

  /** One call; the answer's status and parsed body (JSON when it is JSON, else text). */
  async raw(method: string, path: string, opts: RequestOptions = {}): Promise<{ status: number; body: any; headers: Headers }> {
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (this.auth) headers.Authorization = this.auth;
    let body: BodyInit | undefined;
    if (typeof opts.body === 'string') {
      body = opts.body;
      headers['Content-Type'] = opts.contentType ?? 'text/plain';
    } else if (opts.body instanceof FormData) {
      body = opts.body;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(this.url(path, opts.query), { method, headers, body, signal: opts.signal });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new CliError(
        `cannot reach ${this.conn.server}: ${networkReason(err)}. Start the server (flowpilot server) or point --server / FLOWPILOT_URL at it`,
        ExitCodes.CONNECTION,
      );
    }
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try { parsed = JSON.parse(text); } catch { /* kept as text */ }
    }
    if (res.status >= 400 && !opts.accept?.includes(res.status)) throw httpError(method, path, res.status, parsed);
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async json<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.raw(method, path, opts)).body as T;
  }

  /** Server-sent events of a GET route, until the server ends the stream (or `signal` aborts). */
  async *events(path: string, query: Query = {}, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (this.auth) headers.Authorization = this.auth;
    let res: Response;
    try {
      res = await fetch(this.url(path, query), { headers, signal });
    } catch (err) {
      if ((err as Error).name === 'AbortError') return;
      throw new CliError(`cannot reach ${this.conn.server}: ${networkReason(err)}. Check --server / FLOWPILOT_URL`, ExitCodes.CONNECTION);
    }
    if (res.status >= 400) {
      const text = await res.text();
      let body: unknown = text;
      try { body = JSON.parse(text); } catch { /* text */ }
      throw httpError('GET', path, res.status, body);
    }
    yield* parseSse(res.body!, signal);
  }
}

/** Splits an event stream into events (`id:` and `data:` fields; comment lines skipped; data parsed as JSON). */
export async function* parseSse(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id = '';
  let data: string[] = [];
  try {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length > 0) {
            const text = data.join('\n');
            let value: unknown = text;
            try { value = JSON.parse(text); } catch { /* text */ }
            yield { id, data: value };
          }
          id = '';
          data = [];
        } else if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw new CliError(`the event stream was cut: ${(err as Error).message}. Run the command again to carry on`, ExitCodes.CONNECTION);
  }
}

/** One line for an error answer: the server's message, its field errors, and what to do for auth failures. */
function httpError(method: string, path: string, status: number, body: unknown): CliError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { message?: string; errors?: { path?: string; message?: string }[] };
  const fields = (b.errors ?? []).map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).filter(Boolean);
  const said = b.message ?? (typeof body === 'string' && body.trim() ? body.trim().split('\n')[0] : `HTTP ${status}`);
  const detail = fields.length && !fields.every((f) => said.includes(f!)) ? ` (${fields.join('; ')})` : '';
  if (status === 401 || status === 403) {
    return new CliError(
      `${method} ${path} refused (${status}): ${said}. Give a token (--token or FLOWPILOT_TOKEN) or basic credentials (--user or FLOWPILOT_USER) the server accepts`,
      ExitCodes.AUTH,
    );
  }
  return new CliError(`${method} ${path} failed (${status}): ${said}${detail}`, ExitCodes.SERVER);
}
