// The one client of the REST API (/api/v1) for every page: fetch with the signed-in credential, JSON errors surfaced
// with the server's message and field, typed calls for the routes the pages use, and `followSse` for the routes that
// stream server-sent events (execution follow, log follow), over fetch so the credential goes along, reconnecting.

export const API_BASE = '/api/v1';

/** One field's problem, as the server's `{message, errors: [{path, message}]}` names it. */
export interface FieldError { path: string; message: string }

/** A non-2xx answer: the server's message, its status and the fields it names. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly errors: FieldError[] = []) {
    super(message);
    this.name = 'ApiError';
  }
  /** The server's message for one field (`inputs.name`, `namespace`...), if it named it. */
  fieldMessage(path: string): string | undefined {
    return this.errors.find((e) => e.path === path)?.message;
  }
}

// ---- credentials (kept for the browser tab's session only) ----

export type Credential = { kind: 'basic'; username: string; password: string } | { kind: 'bearer'; token: string };

const STORAGE_KEY = 'flowpilot.credential';
const listeners = new Set<() => void>();
let unauthorized = false;

export function getCredential(): Credential | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Credential) : undefined;
  } catch {
    return undefined;
  }
}

export function setCredential(c: Credential | undefined): void {
  if (c) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(STORAGE_KEY);
  unauthorized = false;
  listeners.forEach((l) => l());
}

/** Whether the last call was refused for want of (valid) credentials: the app then shows the sign-in form. */
export const isUnauthorized = (): boolean => unauthorized;

/** Called whenever the credential or the unauthorized flag changes; returns the unsubscribe function. */
export function onAuthChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => { listeners.delete(listener); };
}

function authorization(c: Credential | undefined): string | undefined {
  if (!c) return undefined;
  if (c.kind === 'bearer') return `Bearer ${c.token}`;
  const bytes = new TextEncoder().encode(`${c.username}:${c.password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

function headersFor(extra?: HeadersInit): Headers {
  const h = new Headers(extra);
  // Tells the server not to send a Basic challenge: the browser would show its own prompt instead of our form.
  h.set('X-Requested-With', 'XMLHttpRequest');
  const auth = authorization(getCredential());
  if (auth) h.set('Authorization', auth);
  return h;
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: { message?: unknown; errors?: unknown } | undefined;
  try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
  const message = typeof body?.message === 'string' ? body.message : `${res.status} ${res.statusText || 'error'}`;
  const errors = Array.isArray(body?.errors)
    ? body.errors.map((e: { path?: unknown; message?: unknown }) => ({ path: String(e?.path ?? ''), message: String(e?.message ?? '') }))
    : [];
  return new ApiError(res.status, message, errors);
}

function noteStatus(status: number): void {
  if (status === 401 && !unauthorized) {
    unauthorized = true;
    listeners.forEach((l) => l());
  }
}

/** A query string from defined values; arrays repeat the key (`labels=a:1&labels=b:2`). */
export function query(params: Record<string, string | number | boolean | undefined | (string | number)[]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, String(x)));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A path segment, encoded (namespaces and ids are user text). */
export const seg = (s: string): string => encodeURIComponent(s);

/** Calls `API_BASE + path`; JSON in and out (a string body is sent as is, with its own Content-Type). */
export async function request<T>(path: string, init: { method?: string; body?: unknown; headers?: HeadersInit; signal?: AbortSignal } = {}): Promise<T> {
  const headers = headersFor(init.headers);
  let body: BodyInit | undefined;
  if (typeof init.body === 'string' || init.body instanceof FormData || init.body instanceof Blob) body = init.body;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers.set('Content-Type', 'application/json');
  }
  const res = await fetch(`${API_BASE}${path}`, { method: init.method ?? 'GET', headers, body, signal: init.signal });
  noteStatus(res.status);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

// ---- shapes (the fields the pages read; the server sends more) ----

export type StateType = 'CREATED' | 'RUNNING' | 'PAUSED' | 'RESTARTED' | 'KILLING' | 'SUCCESS' | 'WARNING' | 'FAILED'
  | 'KILLED' | 'CANCELLED' | 'QUEUED' | 'RETRYING' | 'RETRIED' | 'SKIPPED' | 'BREAKPOINT' | 'RESUBMITTED' | 'SUBMITTED';

export interface Page<T> { results: T[]; total: number }

export interface FlowInput {
  id: string; type: string; description?: string; displayName?: string; required?: boolean; defaults?: unknown;
  values?: unknown[]; itemType?: string; min?: number | string; max?: number | string;
}
export interface FlowTrigger { id: string; type: string; description?: string; disabled?: boolean; cron?: string; [k: string]: unknown }
export interface FlowLabel { key: string; value: string }
export interface Flow {
  id: string; namespace: string; revision: number; description?: string; disabled: boolean; deleted: boolean;
  inputs?: FlowInput[]; triggers?: FlowTrigger[]; labels?: FlowLabel[]; tasks?: { id: string; type: string }[];
  updated?: string; source?: string;
}
export interface ExecutionSummary {
  id: string; namespace: string; flowId: string; flowRevision?: number;
  state: { current: StateType; startDate?: string; endDate?: string; duration?: string | number; histories?: { state: StateType; date: string }[] };
  labels?: FlowLabel[];
}
/** One YAML document's answer from POST /flows/validate: `constraints` holds `path: message` lines when invalid. */
export interface FlowValidation {
  index: number; flow?: string; namespace?: string; constraints?: string; deprecationPaths?: string[]; warnings?: string[];
}
/** A JSON schema as served by GET /plugins/schemas/{type} (the subset the editor reads). */
export interface JsonSchema {
  $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; enum?: unknown[];
  const?: unknown; required?: string[]; allOf?: { if?: JsonSchema; then?: JsonSchema }[]; anyOf?: JsonSchema[];
  oneOf?: JsonSchema[]; definitions?: Record<string, JsonSchema>; description?: string; title?: string;
  additionalProperties?: boolean | JsonSchema;
}
export interface LastExecution { id: string; namespace: string; flowId: string; startDate?: string; status: StateType }

// ---- typed calls ----

export interface FlowSearch { q?: string; namespace?: string; page: number; size: number; sort?: string }

export const api = {
  searchFlows: (s: FlowSearch, signal?: AbortSignal) =>
    request<Page<Flow>>(`/flows/search${query({ q: s.q, namespace: s.namespace, page: s.page, size: s.size, sort: s.sort })}`, { signal }),
  getFlow: (namespace: string, id: string, signal?: AbortSignal) =>
    request<Flow>(`/flows/${seg(namespace)}/${seg(id)}${query({ source: true })}`, { signal }),
  flowNamespaces: (signal?: AbortSignal) => request<string[]>('/flows/distinct-namespaces', { signal }),
  /** The newest execution of each flow that has one (Kestra's POST /executions/latest). */
  latestExecutions: (flows: { namespace: string; id: string }[], signal?: AbortSignal) =>
    flows.length === 0 ? Promise.resolve([] as LastExecution[]) : request<LastExecution[]>('/executions/latest', { method: 'POST', body: flows, signal }),
  flowExecutions: (namespace: string, flowId: string, page: number, size: number, signal?: AbortSignal) =>
    request<Page<ExecutionSummary>>(`/executions/flows/${seg(namespace)}/${seg(flowId)}${query({ page, size })}`, { signal }),
  /** Validates a YAML flow without saving it (one answer per document). */
  validateFlow: (source: string, signal?: AbortSignal) =>
    request<FlowValidation[]>('/flows/validate', { method: 'POST', body: source, headers: { 'Content-Type': 'application/x-yaml' }, signal }),
  createFlow: (source: string) =>
    request<Flow>('/flows', { method: 'POST', body: source, headers: { 'Content-Type': 'application/x-yaml' } }),
  /** Saves a flow's new source: a new revision when it changed. */
  updateFlow: (namespace: string, id: string, source: string) =>
    request<Flow>(`/flows/${seg(namespace)}/${seg(id)}`, { method: 'PUT', body: source, headers: { 'Content-Type': 'application/x-yaml' } }),
  /** Every revision of a flow, oldest first, each with its source. */
  flowRevisions: (namespace: string, id: string, signal?: AbortSignal) =>
    request<Flow[]>(`/flows/${seg(namespace)}/${seg(id)}/revisions`, { signal }),
  /** A new revision with the source of `revision`. */
  rollbackFlow: (namespace: string, id: string, revision: number) =>
    request<Flow>(`/flows/${seg(namespace)}/${seg(id)}/revisions/${revision}/rollback`, { method: 'POST' }),
  /** The JSON schema the engine validates flows with (`flow`, `task` or `trigger`). */
  schema: (type: 'flow' | 'task' | 'trigger', signal?: AbortSignal) => request<JsonSchema>(`/plugins/schemas/${type}`, { signal }),
  /** Starts an execution with the inputs as multipart form data (files as file parts), as Kestra's UI does. */
  createExecution: (namespace: string, flowId: string, inputs: FormData) =>
    request<ExecutionSummary>(`/executions/${seg(namespace)}/${seg(flowId)}`, { method: 'POST', body: inputs }),
};

// ---- server-sent events ----

export interface SseEvent { id?: string; event?: string; data: string }

export interface SseOptions {
  onEvent(e: SseEvent): void;
  /** Called on every (re)connection failure with the error; the stream retries unless stopped. */
  onError?(err: unknown): void;
  /** An event after which the stream is over (Kestra sends `id: end`): no reconnection then. */
  isEnd?(e: SseEvent): boolean;
  /** First retry delay in ms (doubled up to 30 s, reset once connected). */
  retryMs?: number;
}

/** Parses SSE text: events are separated by a blank line; `data:` lines join with newlines; comments are skipped. */
export function parseSseChunk(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const e: SseEvent = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') e.id = value;
      else if (field === 'event') e.event = value;
    }
    if (data.length === 0 && e.id === undefined) continue;
    e.data = data.join('\n');
    events.push(e);
  }
  return { events, rest };
}

/**
 * Follows an SSE route (`/executions/{id}/follow`, `/logs/{id}/follow`) until `isEnd` or `stop()`. Reconnects after a
 * dropped connection with a growing delay; a 4xx answer (not found, unauthorized) ends it with `onError`.
 */
export function followSse(path: string, opts: SseOptions): { stop(): void } {
  const ctrl = new AbortController();
  let stopped = false;
  let delay = opts.retryMs ?? 1000;
  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        const res = await fetch(`${API_BASE}${path}`, { headers: headersFor({ Accept: 'text/event-stream' }), signal: ctrl.signal });
        noteStatus(res.status);
        if (!res.ok) {
          const err = await errorOf(res);
          if (res.status < 500) { opts.onError?.(err); return; }
          throw err;
        }
        delay = opts.retryMs ?? 1000;
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const parsed = parseSseChunk(buffer + value);
          buffer = parsed.rest;
          for (const e of parsed.events) {
            opts.onEvent(e);
            if (opts.isEnd?.(e)) { stopped = true; ctrl.abort(); return; }
          }
        }
      } catch (err) {
        if (stopped) return;
        opts.onError?.(err);
      }
      if (stopped) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  };
  void run();
  return { stop() { stopped = true; ctrl.abort(); } };
}
