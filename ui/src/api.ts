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
  const errors: FieldError[] = Array.isArray(body?.errors)
    ? body.errors.map((e: { path?: unknown; message?: unknown }) => ({ path: String(e?.path ?? ''), message: String(e?.message ?? '') }))
    : [];
  // The bulk routes name each refused item as Kestra does: `invalids: [{message, invalidValue, propertyPath}]`.
  const invalids = (body as { invalids?: unknown } | undefined)?.invalids;
  if (Array.isArray(invalids)) {
    for (const e of invalids as { message?: unknown; invalidValue?: unknown }[]) errors.push({ path: String(e?.invalidValue ?? ''), message: String(e?.message ?? '') });
  }
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

/**
 * Calls `API_BASE + path` and returns the raw answer (for headers such as `X-Total-Count`, file bodies and
 * downloads); a non-2xx answer throws `ApiError` as `request` does.
 */
export async function requestRaw(path: string, init: { method?: string; signal?: AbortSignal } = {}): Promise<Response> {
  const res = await fetch(`${API_BASE}${path}`, { method: init.method ?? 'GET', headers: headersFor(), signal: init.signal });
  noteStatus(res.status);
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** Saves the answer of `path` as a file named `name` (the credential goes along, so a plain link cannot do it). */
export async function downloadFile(path: string, name: string): Promise<void> {
  const blob = await (await requestRaw(path)).blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
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
export interface StateRecord { current: StateType; startDate?: string; endDate?: string; duration?: string; histories?: { state: StateType; date: string }[] }
export interface Metric { name: string; type: 'counter' | 'timer'; value: number; tags?: Record<string, string> }
export interface TaskRunAttempt { state: StateRecord; metrics?: Metric[] }
export interface TaskRun {
  id: string; taskId: string; parentTaskRunId?: string; value?: string; iteration?: number; state: StateRecord;
  attempts?: TaskRunAttempt[]; outputs?: Record<string, unknown>; error?: string; flowableState?: { status?: string };
}
/** A whole execution (GET /executions/{id} and each event of its follow stream). */
export interface Execution extends ExecutionSummary {
  flowRevision: number; state: StateRecord; labels: FlowLabel[]; inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>; taskRunList: TaskRun[]; originalId?: string;
  trigger?: { id: string; type: string }; parent?: { executionId: string; namespace: string; flowId: string };
}
export interface LogLine { taskId?: string; taskRunId?: string; attemptNumber?: number; level: string; timestamp: string; message: string }
export interface MetricEntry { taskId: string; taskRunId: string; type: string; name: string; value: number; timestamp: string; tags: Record<string, string> }
export interface ExecutionSearch {
  namespace?: string; flowId?: string; state?: string[]; labels?: string[]; startDate?: string; endDate?: string;
  page: number; size: number; sort?: string;
}
export interface LastExecution { id: string; namespace: string; flowId: string; startDate?: string; status: StateType }

export interface NamespaceItem { id: string; description?: string }
export type KvType = 'STRING' | 'NUMBER' | 'BOOLEAN' | 'DATETIME' | 'DATE' | 'DURATION' | 'JSON';
export const KV_TYPES: KvType[] = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'DATE', 'DURATION', 'JSON'];
export interface KvItem { key: string; type: KvType; expirationDate: string | null; updateDate?: string }
export interface KvValue { type: KvType; value: unknown }
export interface FileAttributes { fileName: string; type: 'File' | 'Directory'; size: number; lastModifiedTime?: number }
export interface TriggerBackfill { start: string; end: string | null; currentDate?: string; paused: boolean; inputs?: Record<string, unknown> | null }
export interface TriggerContext {
  namespace: string; flowId: string; triggerId: string; type: string; disabled: boolean; updatedDate?: string | null;
  executionId?: string | null; date?: string | null; nextExecutionDate?: string | null; backfill?: TriggerBackfill | null;
}
export interface TriggerSearchItem { abstractTrigger: FlowTrigger; triggerContext: TriggerContext }
export interface TriggerRef { namespace: string; flowId: string; triggerId: string }
/** A log line found by GET /logs/search: the line and the execution it belongs to. */
export interface LogEntry extends LogLine { executionId: string; namespace: string; flowId: string }
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];
export interface DailyStatistics {
  startDate: string; executionCounts: Record<string, number>;
  duration: { min: string; avg: string; max: string; sum: string; count: number };
}
/** Kestra's FlowGraph (GET /flows/{ns}/{id}/graph, POST /flows/graph, GET /executions/{id}/graph). */
export interface GraphTaskDecl { id: string; type: string; description?: string; [k: string]: unknown }
export interface FlowGraphNode {
  uid: string; type: string; relationType?: string; branchType?: 'ERROR' | 'FINALLY' | 'AFTER_EXECUTION';
  task?: GraphTaskDecl; taskRun?: TaskRun; values?: string[]; triggerDeclaration?: GraphTaskDecl;
}
export interface FlowGraphEdge { source: string; target: string; relation: { relationType?: string; value?: string } }
export interface FlowGraphCluster {
  cluster: { uid: string; type: string; relationType?: string; taskNode?: FlowGraphNode; branchType?: FlowGraphNode['branchType'] };
  nodes: string[]; parents: string[]; start: string; end: string;
}
export interface FlowGraph { nodes: FlowGraphNode[]; edges: FlowGraphEdge[]; clusters: FlowGraphCluster[] }
/** Kestra's FlowTopologyGraph (GET /flows/{ns}/{id}/dependencies, GET /namespaces/{ns}/dependencies). */
export interface FlowTopologyGraph {
  nodes: { uid: string; namespace: string; id: string }[];
  edges: { source: string; target: string; relation: 'FLOW_TASK' | 'FLOW_TRIGGER' }[];
}

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
  /** One page of a flow's executions as summaries, newest first; `state` keeps those in that state only. */
  flowExecutions: (namespace: string, flowId: string, page: number, size: number, signal?: AbortSignal, state?: StateType) =>
    request<Page<ExecutionSummary>>(`/executions/flows/${seg(namespace)}/${seg(flowId)}${query({ page, size, state, summary: true })}`, { signal }),
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

  // ---- executions (pages/executions) ----
  /** One page of executions as summaries (no task runs, no outputs: `summary=true`). */
  searchExecutions: (s: ExecutionSearch, signal?: AbortSignal) =>
    request<Page<ExecutionSummary>>(`/executions/search${query({
      namespace: s.namespace, flowId: s.flowId, state: s.state, labels: s.labels, startDate: s.startDate,
      endDate: s.endDate, page: s.page, size: s.size, sort: s.sort, summary: true,
    })}`, { signal }),
  /** Starts an execution with the inputs as multipart form data (files as file parts), as Kestra's UI does. */
  createExecution: (namespace: string, flowId: string, inputs: FormData) =>
    request<ExecutionSummary>(`/executions/${seg(namespace)}/${seg(flowId)}`, { method: 'POST', body: inputs }),
  getExecution: (id: string, signal?: AbortSignal) => request<Execution>(`/executions/${seg(id)}`, { signal }),
  /** The flow at the revision the execution ran (with its source). */
  executionFlow: (id: string, signal?: AbortSignal) => request<Flow & Record<string, unknown>>(`/executions/${seg(id)}/flow`, { signal }),
  killExecution: (id: string) => request<void>(`/executions/${seg(id)}/kill`, { method: 'DELETE' }),
  restartExecution: (id: string) => request<Execution>(`/executions/${seg(id)}/restart`, { method: 'POST' }),
  /** A new execution copying this one, from `taskRunId` on when given. */
  replayExecution: (id: string, taskRunId?: string) => request<Execution>(`/executions/${seg(id)}/replay${query({ taskRunId })}`, { method: 'POST' }),
  /** Resumes a PAUSED execution with its Pause's `onResume` values (multipart, files allowed). */
  resumeExecution: (id: string, values: FormData) => request<void>(`/executions/${seg(id)}/resume`, { method: 'POST', body: values }),
  setExecutionLabels: (id: string, labels: FlowLabel[]) => request<Execution>(`/executions/${seg(id)}/labels`, { method: 'POST', body: labels }),
  bulkKill: (ids: string[]) => request<{ count: number }>('/executions/kill/by-ids', { method: 'DELETE', body: ids }),
  bulkRestart: (ids: string[]) => request<{ count: number }>('/executions/restart/by-ids', { method: 'POST', body: ids }),
  bulkDelete: (ids: string[]) => request<{ count: number }>('/executions/by-ids', { method: 'DELETE', body: ids }),
  /** One page of an execution's log lines and the matching total (X-Total-Count). */
  executionLogs: async (id: string, f: { minLevel?: string; taskId?: string; page: number; size: number }, signal?: AbortSignal) => {
    const res = await requestRaw(`/logs/${seg(id)}${query({ minLevel: f.minLevel, taskId: f.taskId, page: f.page, size: f.size })}`, { signal });
    return { results: (await res.json()) as LogLine[], total: Number(res.headers.get('X-Total-Count') ?? 0) } satisfies Page<LogLine>;
  },
  executionMetrics: (id: string, p: { page: number; size: number; sort?: string }, signal?: AbortSignal) =>
    request<Page<MetricEntry>>(`/metrics/${seg(id)}${query({ page: p.page, size: p.size, sort: p.sort })}`, { signal }),
  fileSize: (id: string, uri: string, signal?: AbortSignal) =>
    request<{ size: number }>(`/executions/${seg(id)}/file/metas${query({ path: uri })}`, { signal }),
  /** The first `maxBytes` of an execution's file (the rest is not read: the download is cancelled). */
  fileHead: async (id: string, uri: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: Uint8Array; truncated: boolean }> => {
    const res = await requestRaw(`/executions/${seg(id)}/file${query({ path: uri })}`, { signal });
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    let read = 0;
    let truncated = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      read += value.length;
      if (read > maxBytes) { truncated = true; await reader.cancel(); break; }
    }
    const bytes = new Uint8Array(Math.min(read, maxBytes));
    let at = 0;
    for (const c of chunks) {
      const part = c.subarray(0, Math.min(c.length, bytes.length - at));
      bytes.set(part, at);
      at += part.length;
      if (at >= bytes.length) break;
    }
    return { bytes, truncated };
  },

  // ---- namespaces, KV, namespace files, triggers, log search, statistics (namespace, trigger, log and dashboard pages) ----
  searchNamespaces: (q: { q?: string; page: number; size: number }, signal?: AbortSignal) =>
    request<Page<NamespaceItem>>(`/namespaces/search${query({ q: q.q, page: q.page, size: q.size })}`, { signal }),

  kvList: (ns: string, signal?: AbortSignal) => request<KvItem[]>(`/namespaces/${seg(ns)}/kv`, { signal }),
  kvGet: (ns: string, key: string, signal?: AbortSignal) => request<KvValue>(`/namespaces/${seg(ns)}/kv/${seg(key)}`, { signal }),
  /** `value` is sent as JSON text (the server infers the type from it, as Kestra's); `ttl` an ISO 8601 duration. */
  kvPut: (ns: string, key: string, value: unknown, ttl?: string) =>
    request<KvValue & { key: string }>(`/namespaces/${seg(ns)}/kv/${seg(key)}`, {
      method: 'PUT', body: JSON.stringify(value), headers: { 'Content-Type': 'application/json', ...(ttl ? { ttl } : {}) },
    }),
  kvDelete: (ns: string, key: string) => request<boolean>(`/namespaces/${seg(ns)}/kv/${seg(key)}`, { method: 'DELETE' }),

  listFiles: (ns: string, path: string, signal?: AbortSignal) =>
    request<FileAttributes[]>(`/namespaces/${seg(ns)}/files/directory${query({ path })}`, { signal }),
  /** A namespace file's content as text (served as octet-stream). */
  readFile: async (ns: string, path: string, signal?: AbortSignal) => (await requestRaw(`/namespaces/${seg(ns)}/files${query({ path })}`, { signal })).text(),
  writeFile: (ns: string, path: string, content: string) => {
    const form = new FormData();
    form.append('fileContent', new Blob([content], { type: 'application/octet-stream' }), path.split('/').pop() || 'file');
    return request<void>(`/namespaces/${seg(ns)}/files${query({ path })}`, { method: 'POST', body: form });
  },
  makeDirectory: (ns: string, path: string) => request<void>(`/namespaces/${seg(ns)}/files/directory${query({ path })}`, { method: 'POST' }),
  deleteFile: (ns: string, path: string) => request<void>(`/namespaces/${seg(ns)}/files${query({ path })}`, { method: 'DELETE' }),

  searchTriggers: (s: { q?: string; namespace?: string; page: number; size: number }, signal?: AbortSignal) =>
    request<Page<TriggerSearchItem>>(`/triggers/search${query({ q: s.q, namespace: s.namespace, page: s.page, size: s.size })}`, { signal }),
  flowTriggers: (ns: string, flowId: string, signal?: AbortSignal) =>
    request<Page<TriggerContext>>(`/triggers/${seg(ns)}/${seg(flowId)}`, { signal }),
  setTriggerDisabled: (t: TriggerRef, disabled: boolean) => request<TriggerContext>('/triggers', { method: 'PUT', body: { ...t, disabled } }),
  startBackfill: (t: TriggerRef, backfill: { start: string; end?: string; inputs?: Record<string, unknown> }) =>
    request<TriggerContext>('/triggers', { method: 'PUT', body: { ...t, backfill } }),
  backfillAction: (t: TriggerRef, action: 'pause' | 'unpause' | 'delete') =>
    request<TriggerContext>(`/triggers/backfill/${action}`, { method: action === 'delete' ? 'POST' : 'PUT', body: t }),
  unlockTrigger: (t: TriggerRef) =>
    request<TriggerContext>(`/triggers/${seg(t.namespace)}/${seg(t.flowId)}/${seg(t.triggerId)}/unlock`, { method: 'POST' }),

  /** `exact`: that namespace only (else its children too). */
  searchLogs: (s: { q?: string; namespace?: string; exact?: boolean; flowId?: string; minLevel?: string; page: number; size: number }, signal?: AbortSignal) =>
    request<Page<LogEntry>>(`/logs/search${query({
      q: s.q, ...(s.exact ? { 'filters[namespace][EQUALS]': s.namespace } : { namespace: s.namespace }), flowId: s.flowId, minLevel: s.minLevel,
      page: s.page, size: s.size,
    })}`, { signal }),

  dailyStatistics: (s: { namespace?: string; flowId?: string; startDate?: string; endDate?: string }, signal?: AbortSignal) =>
    request<DailyStatistics[]>('/stats/executions/daily', { method: 'POST', body: s, signal }),

  // ---- graphs (components/graph) ----
  flowGraph: (namespace: string, id: string, revision?: number, signal?: AbortSignal) =>
    request<FlowGraph>(`/flows/${seg(namespace)}/${seg(id)}/graph${query({ revision })}`, { signal }),
  /** The graph of a YAML source that need not be saved (the editor's live preview); 422 names the invalid fields. */
  sourceGraph: (source: string, signal?: AbortSignal) =>
    request<FlowGraph>('/flows/graph', { method: 'POST', body: source, headers: { 'Content-Type': 'application/x-yaml' }, signal }),
  flowDependencies: (namespace: string, id: string, expandAll: boolean, signal?: AbortSignal) =>
    request<FlowTopologyGraph>(`/flows/${seg(namespace)}/${seg(id)}/dependencies${query({ expandAll: expandAll || undefined })}`, { signal }),
  namespaceDependencies: (namespace: string, signal?: AbortSignal) =>
    request<FlowTopologyGraph>(`/namespaces/${seg(namespace)}/dependencies`, { signal }),
};

/** The API path of an execution's file (for `downloadFile`). */
export const executionFilePath = (id: string, uri: string): string => `/executions/${seg(id)}/file${query({ path: uri })}`;
/** The API path of an execution's logs as text (for `downloadFile`). */
export const executionLogsDownloadPath = (id: string, f: { minLevel?: string; taskId?: string }): string =>
  `/logs/${seg(id)}/download${query({ minLevel: f.minLevel, taskId: f.taskId })}`;

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
  /**
   * The server ends the stream itself once it is over (the log follow does, when the execution has ended): a clean end
   * of the answer stops the follow, only a failed connection is retried. A function decides at each clean end: false
   * (e.g. the execution still runs: a proxy or the server ended the answer early) follows again like a dropped connection.
   */
  endOnClose?: boolean | (() => boolean);
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
          if (done) {
            if (opts.endOnClose === true || (typeof opts.endOnClose === 'function' && opts.endOnClose())) { stopped = true; return; }
            break;
          }
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
