// Store interfaces: what the controller and the API read and write. Embedded mode implements them on
// SQLite; cluster mode (later) on custom resources. Semantics follow the Kubernetes API: optimistic
// concurrency through `resourceVersion`, and a watch feed of changes.
import type { Execution, ExecutionState, Flow, Label, LogLevel, LogLine, NamespaceSpec } from '../core/types.js';
import type { SecretLayer } from '../secrets/layer.js';
import type { SearchFilter } from './filters.js';

/** Thrown when an update carries a stale resourceVersion (HTTP 409 in Kubernetes). */
export class ConflictError extends Error {
  constructor(message: string) { super(message); this.name = 'ConflictError'; }
}

export interface FlowRecord {
  namespace: string;
  id: string;
  revision: number;
  /** YAML text exactly as submitted. */
  source: string;
  /** Parsed and validated flow, `revision` set. */
  flow: Flow;
  /** ISO date of this revision. */
  updated: string;
  deleted?: boolean;
}

export interface Page<T> { results: T[]; total: number }

export type FlowEvent = { type: 'SAVED'; record: FlowRecord } | { type: 'DELETED'; namespace: string; id: string };

export interface FlowStore {
  /** Stores a new revision when `source` differs from the latest one; identical source returns the latest, created=false. */
  save(flow: Flow, source: string): Promise<{ record: FlowRecord; created: boolean }>;
  /** Latest revision (or the given one). Deleted flows are not returned unless a revision is asked for. */
  get(namespace: string, id: string, revision?: number): Promise<FlowRecord | undefined>;
  revisions(namespace: string, id: string): Promise<FlowRecord[]>;
  /** Marks the flow deleted; revisions stay. Returns false when it did not exist. */
  delete(namespace: string, id: string): Promise<boolean>;
  /** Latest live revisions matching the query, ordered by namespace then id. */
  search(query: FlowQuery): Promise<Page<FlowRecord>>;
  /** Every live flow (latest revisions), for triggers and dependants. */
  all(): Promise<FlowRecord[]>;
  /** Change feed: a new revision was saved, or a flow was deleted. Returns an unsubscribe function. */
  watch(listener: (event: FlowEvent) => void): () => void;
}

/**
 * `namespace` matches the namespace and its children (prefix on dotted segments); `q` matches id/namespace/description
 * (case-insensitive); `filters`: Kestra's search filters (fields flows take: RESOURCE_FIELDS.flows), all must hold.
 */
export interface FlowQuery { namespace?: string; q?: string; filters?: SearchFilter[]; limit?: number; offset?: number }

export interface StoredExecution { execution: Execution; resourceVersion: number }

/**
 * What the periodic resync and the start decisions read of an active execution (listActiveSummaries): its identity,
 * flow and state, never its task runs (a 100,000-run record took ~0.7 s to read whole, in one turn of the event loop).
 */
export interface ExecutionSummary {
  id: string;
  namespace: string;
  flowId: string;
  flowRevision?: number;
  state: ExecutionState;
  /** As in the record (`state.startDate`). */
  startDate: string;
  resourceVersion: number;
}

/** The summary of a record (stores that hold records whole). */
export function summaryOf(execution: Execution, resourceVersion: number): ExecutionSummary {
  const { id, namespace, flowId, flowRevision, state } = execution;
  return { id, namespace, flowId, ...(flowRevision !== undefined ? { flowRevision } : {}), state: state.current, startDate: state.startDate, resourceVersion };
}

export type ExecutionCommand =
  | { type: 'kill' }
  | { type: 'resume'; inputs?: Record<string, unknown> }
  | { type: 'restart' }
  /** The labels of an ended execution, replaced (API: POST /executions/{id}/labels). */
  | { type: 'set-labels'; labels: Label[] }
  /** An ended execution moved to another terminal state (API: change-status). */
  | { type: 'change-state'; state: ExecutionState };

export interface PendingCommand { seq: number; executionId: string; command: ExecutionCommand; created: string }

export interface ExecutionQuery {
  namespace?: string;
  flowId?: string;
  state?: ExecutionState[];
  /** Every label must match. */
  labels?: Record<string, string>;
  /** Executions started at or after / before (ISO). */
  startDate?: string;
  endDate?: string;
  /** Kestra's search filters (RESOURCE_FIELDS.executions; dates compare the start date, as Kestra's), all must hold. */
  filters?: SearchFilter[];
  limit?: number;
  offset?: number;
}

export type WatchEvent = { type: 'ADDED' | 'MODIFIED'; execution: Execution; resourceVersion: number };

/**
 * Executions started in [startDate, endDate] (ISO; the store counts by UTC day of the start date) matching `namespace`
 * (the namespace and its children), `flowId` and `filters` (as ExecutionQuery's).
 */
export interface DailyStatsQuery { namespace?: string; flowId?: string; filters?: SearchFilter[]; startDate: string; endDate: string }

/** One (UTC day, state) group: how many executions, and the durations (ms) of those that have an end date. */
export interface DailyStatsRow {
  /** YYYY-MM-DD (UTC) of the start date. */
  day: string;
  state: ExecutionState;
  count: number;
  /** Durations of the ended ones (end date − start date), in ms; `ended` 0 leaves min and max 0. */
  ended: number; durationMinMs: number; durationMaxMs: number; durationSumMs: number;
}

export interface ExecutionStore {
  /** Durably stores a new execution. Creating an id that exists returns the existing record (idempotent). */
  create(execution: Execution): Promise<StoredExecution>;
  get(id: string): Promise<StoredExecution | undefined>;
  /**
   * The record as `get` reads it, but its task runs as the JSON the store holds (`taskRunList` left empty; no run
   * parsed): their texts in order, separated by commas (what goes between the list's brackets), as UTF-8 bytes, for
   * answers that send them as they are. The stored texts are masked already (masking is applied where records are
   * written). Optional: a store that does not keep runs as text leaves it out and readers use `get`. Undefined when
   * there is no such execution, or when its runs are too large to join in one value: readers then use `get` too.
   */
  getRunsJson?(id: string): Promise<{ stored: StoredExecution; runs: Buffer } | undefined>;
  /**
   * Replaces the execution if its stored resourceVersion equals `expected`, else ConflictError.
   * `ackCommands` lists command seqs consumed by this update; they are deleted in the same transaction.
   */
  update(execution: Execution, expected: number, ackCommands?: number[]): Promise<StoredExecution>;
  search(query: ExecutionQuery): Promise<Page<Execution>>;
  /** Deletes an execution record and its pending commands; false when it did not exist. */
  delete(id: string): Promise<boolean>;
  /** Executions in a non-terminal state, oldest first (recovery after restart). */
  listActive(): Promise<StoredExecution[]>;
  /** The summaries of the executions listActive lists, in the same order, read without their task runs. */
  listActiveSummaries(): Promise<ExecutionSummary[]>;
  /** Counts executions of a flow in the given states. */
  count(namespace: string, flowId: string, states: ExecutionState[]): Promise<number>;
  /** Counts by UTC day and state (Kestra's daily statistics), aggregated by the store: no execution record is read. */
  dailyStats(query: DailyStatsQuery): Promise<DailyStatsRow[]>;
  /** Durable command queue (kill, resume, restart, set-labels, change-state) written by the API, consumed by the controller. */
  addCommand(executionId: string, command: ExecutionCommand): Promise<PendingCommand>;
  pendingCommands(executionId?: string): Promise<PendingCommand[]>;
  /** Change feed; listeners run after the write commits. Returns an unsubscribe function. */
  watch(listener: (event: WatchEvent) => void): () => void;
  onCommand(listener: (command: PendingCommand) => void): () => void;
}

export type KVType = 'STRING' | 'NUMBER' | 'BOOLEAN' | 'DATETIME' | 'DATE' | 'DURATION' | 'JSON';

export interface KVEntry {
  namespace: string;
  key: string;
  type: KVType;
  value: unknown;
  /** ISO date after which the entry no longer exists. */
  expirationDate?: string;
  updated: string;
}

export interface KVStore {
  /** Missing or expired entries are undefined. */
  get(namespace: string, key: string): Promise<KVEntry | undefined>;
  /** Synchronous read for the `kv()` template function (embedded stores are synchronous underneath). */
  getSync(namespace: string, key: string): KVEntry | undefined;
  set(entry: { namespace: string; key: string; value: unknown; type?: KVType; ttl?: string; overwrite?: boolean }): Promise<KVEntry>;
  /** Returns false when the key did not exist. */
  delete(namespace: string, key: string): Promise<boolean>;
  list(namespace: string): Promise<KVEntry[]>;
}

export type { NamespaceSpec };

export interface NamespaceRecord extends NamespaceSpec {
  /** ISO date of the last write. */
  updated: string;
  /** Grows on every write (a new version of the namespace: caches of what it gives executions are rebuilt). */
  version: number;
}

export interface NamespaceStore {
  get(id: string): Promise<NamespaceRecord | undefined>;
  /** Every stored namespace, by id. */
  list(): Promise<NamespaceRecord[]>;
  /** Creates or replaces; with `create`, an existing namespace is a ConflictError. */
  put(spec: NamespaceSpec, opts?: { create?: boolean }): Promise<NamespaceRecord>;
  /** Returns false when it was not stored. */
  delete(id: string): Promise<boolean>;
  /**
   * The stored ones among the namespace and its parents, nearest first: what its flows inherit (read for every
   * execution step, so cluster mode answers from its cache without asking the API server).
   */
  chain(namespace: string): Promise<NamespaceRecord[]>;
}

export interface LogQuery {
  q?: string;
  namespace?: string;
  flowId?: string;
  executionId?: string;
  taskRunId?: string;
  /** Minimum level (INFO returns INFO, WARN, ERROR). */
  minLevel?: LogLevel;
  /** Kestra's search filters (RESOURCE_FIELDS.logs; dates compare the line's timestamp), all must hold. */
  filters?: SearchFilter[];
  limit?: number;
  offset?: number;
}

/** Which lines of one execution (Kestra's GET /logs/{executionId} filters). */
export interface ExecutionLogFilter {
  /** Minimum level (INFO returns INFO, WARN, ERROR). */
  minLevel?: LogLevel;
  taskRunId?: string;
  taskId?: string;
  /** Attempt number of the task run. */
  attempt?: number;
}

/** A page of them in time order: at most `limit` lines (default: all) after skipping `offset`. */
export interface ExecutionLogQuery extends ExecutionLogFilter {
  limit?: number;
  offset?: number;
}

/** Where a log follow stands (LogStore.linesAfter): opaque, `''` before the first line. */
export type LogCursor = string;

export interface LogStore {
  /** Buffered appends are flushed in batches; `flush()` forces it. */
  append(lines: LogLine[]): void;
  flush(): Promise<void>;
  /** Lines of one execution in time order, one page of them when `limit`/`offset` are given (read as such: LIMIT/OFFSET). */
  forExecution(executionId: string, query?: ExecutionLogQuery): Promise<LogLine[]>;
  /** How many lines of one execution match the filter. */
  countForExecution(executionId: string, filter?: ExecutionLogFilter): Promise<number>;
  /**
   * Every matching line of one execution in time order, read from the store in pages of `pageSize` lines (keyset on
   * time and insertion order), so a reader (the text download) never holds them all.
   */
  pagesForExecution(executionId: string, filter?: ExecutionLogFilter, pageSize?: number): AsyncIterable<LogLine[]>;
  /**
   * Lines of one execution past `cursor` (`''`: from the first), at most `limit`, in an order no line can arrive behind
   * later (SQLite: insertion order, one writer; PostgreSQL: commit-safe order, see postgres/logs.ts); the answer's
   * opaque `cursor` continues after them. For following an execution's log: every line is delivered once, even one that
   * arrives late with an earlier time or that a writer committed after others it preceded. `final`: the last read of a
   * follow (the execution ended), every line visible now, even those a store would otherwise hold back.
   */
  linesAfter(executionId: string, cursor: LogCursor, filter?: ExecutionLogFilter, limit?: number, opts?: { final?: boolean }): Promise<{ lines: LogLine[]; cursor: LogCursor }>;
  /** Full-text search (FTS5 syntax for `q`), newest first. */
  search(query: LogQuery): Promise<Page<LogLine>>;
  deleteExecution(executionId: string): Promise<void>;
}

/** Internal storage for files addressed by URIs such as `kestra:///ns/flow/executions/id/...`. */
export interface InternalStorage {
  /** Writes bytes under a storage path and returns its URI. */
  put(path: string, data: Buffer | NodeJS.ReadableStream): Promise<string>;
  get(uri: string): Promise<Buffer>;
  /** Synchronous read for the `read()` template function. */
  getSync(uri: string): Buffer;
  /** Synchronous size in bytes (undefined when the file does not exist), for `fileSize()` / `fileExists()` / `isFileEmpty()`. */
  statSync(uri: string): number | undefined;
  stream(uri: string): Promise<NodeJS.ReadableStream>;
  exists(uri: string): Promise<boolean>;
  size(uri: string): Promise<number>;
  delete(uri: string): Promise<boolean>;
  /** Deletes every file under a storage folder (path or URI); returns how many files were removed (0 when none). */
  deleteTree(pathOrUri: string): Promise<number>;
  /** Local file path behind a URI (embedded storage only; undefined elsewhere). */
  localPath?(uri: string): string | undefined;
  /** Folder operations (namespace files); both storages have them; a task's view (operator/tenancy) only inside its execution's folder. */
  tree?: StorageTree;
}

/** One file or folder of internal storage, as a folder listing gives it. */
export interface StorageEntry {
  /** Path relative to the listed folder (`/`-separated), or the path asked for (stat). */
  path: string;
  type: 'File' | 'Directory';
  size: number;
  /** Milliseconds since the epoch. */
  lastModified: number;
  created: number;
}

/**
 * Folders of internal storage: real directories on the local disk, `<key>/` marker objects (and key prefixes) in an
 * S3 bucket. Paths follow the same rules as every storage path (operator/storage/paths.ts).
 */
export interface StorageTree {
  /** Every file and folder below `folder` (recursive, in no particular order); [] when it does not exist. At most
   * `max` entries: one more makes it fail with `tooMany()`'s error, so a listing is bounded. */
  list(folder: string, max: number, tooMany: () => Error): Promise<StorageEntry[]>;
  /** The file or folder at `path`, undefined when there is none (symbolic links are neither). */
  stat(path: string): Promise<StorageEntry | undefined>;
  /** Makes a folder (and its parents); nothing when it exists. */
  mkdir(folder: string): Promise<void>;
  /** Deletes a folder and everything below it; false when there was nothing. */
  deleteTree(folder: string): Promise<boolean>;
}

/** Durable state of one trigger of one flow (keyed by flow namespace, flow id and trigger id). */
export interface TriggerStateRecord {
  namespace: string;
  flowId: string;
  triggerId: string;
  /** Disabled through the API (a trigger's `disabled: true` in the flow source also disables it). */
  disabled: boolean;
  /** Trigger-specific JSON state: last evaluated date, backfill progress, MultipleCondition window... */
  state: Record<string, unknown>;
  updated: string;
  /** Optimistic concurrency: 0 means "does not exist yet". */
  version: number;
}

export interface TriggerStateStore {
  get(namespace: string, flowId: string, triggerId: string): Promise<TriggerStateRecord | undefined>;
  /** Every record, or those of one namespace (and its children) / one flow. */
  list(query?: { namespace?: string; flowId?: string }): Promise<TriggerStateRecord[]>;
  /** Compare-and-set: `expected` is the version read (0 when absent); ConflictError when someone wrote in between. */
  put(rec: { namespace: string; flowId: string; triggerId: string; disabled?: boolean; state: Record<string, unknown> }, expected: number): Promise<TriggerStateRecord>;
  delete(namespace: string, flowId: string, triggerId: string): Promise<boolean>;
  /** Records that `key` was handled in `scope`; false when it already was (exactly-once guards). */
  mark(scope: string, key: string): Promise<boolean>;
  isMarked(scope: string, key: string): Promise<boolean>;
  /** Forgets one mark (its work is done and nothing will ask again); no error when absent. */
  unmark(scope: string, key: string): Promise<void>;
  /** Forgets up to `limit` marks of `scope` made before `before` (ISO date); returns how many were removed. */
  purgeMarks(scope: string, before: string, limit?: number): Promise<number>;
}

/**
 * One task process group of embedded mode, recorded while it may run so that a restart after a crash can kill what
 * the crash left behind. The pid is also the group id; its start time and the boot id tell it from a recycled pid.
 */
export interface TaskProcess {
  /** Random; also the value of FLOWPILOT_TASK_PROCESS in the environment of the group's processes. */
  id: string;
  executionId: string;
  taskRunId: string;
  attempt: number;
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks from boot to the process's start. */
  startTime: number;
  /** /proc/sys/kernel/random/boot_id when the process started. */
  bootId: string;
  created: string;
}

/** Durable record of live task processes. Synchronous, so a process is recorded before it is let run. */
export interface ProcessRegistry {
  add(p: TaskProcess): void;
  /** Forgets a process group that is gone; no error when absent. */
  remove(id: string): void;
  list(): TaskProcess[];
}

export interface Stores {
  flows: FlowStore;
  executions: ExecutionStore;
  kv: KVStore;
  namespaces: NamespaceStore;
  logs: LogStore;
  storage: InternalStorage;
  triggers: TriggerStateStore;
  /** Embedded mode only: where task process groups are recorded (absent: processes are not recorded). */
  processes?: ProcessRegistry;
  /** The masking layer in front of these stores (maskedStores): secret values, SECRET input encryption. */
  secrets?: SecretLayer;
  close(): Promise<void>;
}
