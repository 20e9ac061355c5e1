// The safety limits that hostile flows and callers run into, defined once: each is a documented setting (an
// environment variable, listed in the README's "Security" section), read here, and every refusal names it (LimitError).
// Pure: an environment record in, numbers out.

export interface LimitSetting {
  /** Environment variable that sets it. */
  env: string;
  default: number;
  /** Smallest accepted value. */
  min: number;
  /** What it bounds, for docs and errors. */
  doc: string;
}

export const LIMIT_SETTINGS = {
  expressionTimeoutMs: {
    env: 'EXPRESSION_TIMEOUT_MS', default: 1_000, min: 1,
    doc: 'time one rendering (a template, jq included) may take, in milliseconds',
  },
  expressionMaxBytes: {
    env: 'EXPRESSION_MAX_BYTES', default: 10 * 1024 * 1024, min: 1024,
    doc: 'largest text or value one rendering may produce, in bytes',
  },
  maxTaskRuns: {
    env: 'MAX_TASK_RUNS_PER_EXECUTION', default: 200_000, min: 10,
    doc: 'task runs one execution may hold (loops, parallel branches, DAGs and ForEachItem batches included)',
  },
  maxSubflowDepth: {
    env: 'MAX_SUBFLOW_DEPTH', default: 10, min: 1,
    doc: 'nesting depth of Subflow and ForEachItem executions under one root execution',
  },
  taskKillWaitMs: {
    env: 'TASK_KILL_WAIT_MS', default: 10_000, min: 100,
    doc: 'time the processes of a task, once sent SIGKILL, may take to disappear, in milliseconds',
  },
  logsMaxLines: {
    env: 'LOGS_MAX_LINES', default: 10_000, min: 1,
    doc: 'log lines one answer of GET /logs/{executionId} holds (also the largest page size); /download streams them all',
  },
  searchRegexMaxLength: {
    env: 'SEARCH_REGEX_MAX_LENGTH', default: 500, min: 1,
    doc: 'longest pattern of a REGEX search filter (`filters[field][REGEX]=...`; RE2 syntax, matched in linear time), in characters',
  },
  searchFilterMaxValues: {
    env: 'SEARCH_FILTER_MAX_VALUES', default: 1_000, min: 1,
    doc: 'search filters one request may give (`filters[...]` parameters) and values one IN/NOT_IN filter may list',
  },
  apiMaxBodyBytes: {
    env: 'API_MAX_BODY_BYTES', default: 10 * 1024 * 1024, min: 1024,
    doc: 'largest JSON, YAML or text request body, and largest multipart field, the API reads, in bytes',
  },
  apiBulkMaxItems: {
    env: 'API_BULK_MAX_ITEMS', default: 1_000, min: 1,
    doc: 'executions (`/executions/.../by-ids`, `/by-query`) or KV keys (`DELETE /namespaces/{ns}/kv`) one bulk request may act on',
  },
  statsMaxDays: {
    env: 'STATS_MAX_DAYS', default: 366, min: 1,
    doc: 'days one request for daily execution statistics (`POST /stats/executions/daily`) may span',
  },
  apiMaxFileBytes: {
    env: 'API_MAX_FILE_BYTES', default: 1024 * 1024 * 1024, min: 1024,
    doc: 'largest file one multipart upload part may hold, in bytes',
  },
  namespaceFilesMaxCount: {
    env: 'NAMESPACE_FILES_MAX_COUNT', default: 10_000, min: 1,
    doc: 'files and folders one namespace\'s namespace files may hold (also the most a listing, a search, an export or a task\'s namespaceFiles walks)',
  },
  namespaceFilesMaxBytes: {
    env: 'NAMESPACE_FILES_MAX_BYTES', default: 1024 * 1024 * 1024, min: 1024,
    doc: 'total size of one namespace\'s namespace files (uploads and zip imports past it are refused), in bytes',
  },
  storeBusyTimeoutMs: {
    env: 'STORE_BUSY_TIMEOUT_MS', default: 250, min: 0,
    doc: 'time a write of the embedded SQLite store waits for another process\'s lock before it fails as transient and is retried later with backoff (the wait blocks the server, so it stays short), in milliseconds',
  },
  executionCacheMaxTaskRuns: {
    env: 'EXECUTION_CACHE_MAX_TASK_RUNS', default: 500_000, min: 1_000,
    doc: 'task runs of the records of active executions kept in memory between their steps, all together (the controller\'s records, and in embedded mode the runs the store last wrote of each): the least recently written are let go first and read back from the store at their next event, which costs a read of the whole record (and in embedded mode a write of all its runs); the record being stepped is kept whatever its size',
  },
  resyncIntervalMs: {
    env: 'RESYNC_INTERVAL_MS', default: 30_000, min: 100,
    doc: 'interval at which the controller re-derives the work of every active execution from the store, so a lost wake-up delays an execution by at most this long, in milliseconds',
  },
  taskInfraRetries: {
    env: 'TASK_INFRA_RETRIES', default: 3, min: 0,
    doc: 'new attempts a task run gets when its runner failed rather than the task (exited without a result, could not start, reported an infrastructure failure); they do not count against the task\'s retry policy',
  },
  storageMaxItemBytes: {
    env: 'STORAGE_MAX_ITEM_BYTES', default: 10 * 1024 * 1024, min: 1024,
    doc: 'longest line (one item) the row-file tasks (core.storage.Split, FilterItems, DeduplicateItems) and the serdes.* converters read, in bytes; also one CSV record, JSON item, XML row and decompressed Avro block',
  },
  storageMaxSplitFiles: {
    env: 'STORAGE_MAX_SPLIT_FILES', default: 10_000, min: 1,
    doc: 'files one core.storage.Split may create',
  },
  storageMaxPurgeFiles: {
    env: 'STORAGE_MAX_PURGE_FILES', default: 10_000, min: 1,
    doc: 'files and folders of its execution one core.storage.PurgeCurrentExecutionFiles may list and delete (its `uris` output lists the files); beyond it the task fails before deleting anything',
  },
  serdesMaxRowGroupBytes: {
    env: 'SERDES_MAX_ROW_GROUP_BYTES', default: 256 * 1024 * 1024, min: 1024,
    doc: 'largest Parquet row group (uncompressed bytes) serdes.parquet.ParquetToIon reads and IonToParquet buffers (its `rowGroupSize` may not exceed it): memory holds one row group',
  },
  serdesMaxSharedStringsBytes: {
    env: 'SERDES_MAX_SHARED_STRINGS_BYTES', default: 64 * 1024 * 1024, min: 1024,
    doc: 'largest shared-strings table (with the styles and workbook parts) serdes.excel.ExcelToIon holds in memory while it reads an .xlsx workbook: the bytes xl/sharedStrings.xml, xl/styles.xml, xl/workbook.xml and its relationships inflate to, plus the overhead of each rich-text string, all together (declared sizes are checked first, the inflated bytes counted as they come, so a zip that lies about its sizes stops there too; the memory held stays within about twice this), in bytes',
  },
  storageMaxDistinctKeys: {
    env: 'STORAGE_MAX_DISTINCT_KEYS', default: 1_000_000, min: 1,
    doc: 'distinct keys core.storage.DeduplicateItems keeps in memory for one file',
  },
  archiveMaxExtractedBytes: {
    env: 'ARCHIVE_MAX_EXTRACTED_BYTES', default: 4 * 1024 * 1024 * 1024, min: 1024,
    doc: 'bytes one compress.ArchiveDecompress or FileDecompress may write to internal storage (all entries together, counted as they are decompressed, so a zip bomb stops there), and the parts of an .xlsx workbook one serdes.excel.ExcelToIon may inflate (all together), in bytes',
  },
  archiveMaxEntries: {
    env: 'ARCHIVE_MAX_ENTRIES', default: 10_000, min: 1,
    doc: 'files one compress.ArchiveDecompress may extract or one compress.ArchiveCompress may archive; also the entries of an .xlsx workbook serdes.excel.ExcelToIon reads',
  },
  fsListMaxEntries: {
    env: 'FS_LIST_MAX_ENTRIES', default: 10_000, min: 1,
    doc: 'entries one fs.sftp.List may read from the server (all folders of a recursive listing together)',
  },
  namespaceMaxBytes: {
    env: 'NAMESPACE_MAX_BYTES', default: 256 * 1024, min: 1024,
    doc: 'largest namespace (its description, variables and plugin defaults as JSON) the API stores; every execution of the namespace and of its children carries it, in bytes',
  },
  runnerStartTimeoutMs: {
    env: 'RUNNER_START_TIMEOUT_MS', default: 300_000, min: 100,
    doc: 'time a task runner keeps retrying transient failures of its start (KV list, internal storage, log store, the attempt input) and of the write of its result before it gives up as an infrastructure failure, in milliseconds',
  },
  jdbcFetchMaxBytes: {
    env: 'JDBC_FETCH_MAX_BYTES', default: 10 * 1024 * 1024, min: 1024,
    doc: 'largest result (its rows as JSON) a jdbc Query or Queries statement with fetchType FETCH or FETCH_ONE returns into the execution; larger results are refused (fetchType STORE streams them to a file), in bytes',
  },
  jdbcMaxFetchSize: {
    env: 'JDBC_MAX_FETCH_SIZE', default: 100_000, min: 1,
    doc: 'largest `fetchSize` of a jdbc Query or Queries task (rows read from the server per round trip and held at once)',
  },
  jdbcConnectTimeoutMs: {
    env: 'JDBC_CONNECT_TIMEOUT_MS', default: 30_000, min: 100,
    doc: 'time a jdbc Query or Queries task waits for its database connection (a URL `connectTimeout` may only shorten it), in milliseconds',
  },
  inferenceCompletionWindowSeconds: {
    env: 'INFERENCE_COMPLETION_WINDOW_SECONDS', default: 86_400, min: 1,
    doc: 'time a batch inference job may take from its submission (also the longest `completion_window` a request may ask); unfinished items then end as expired, the finished ones are kept, in seconds',
  },
  inferenceRequestTimeoutSeconds: {
    env: 'INFERENCE_REQUEST_TIMEOUT_SECONDS', default: 600, min: 1,
    doc: 'time one request to an OpenAI-compatible model server may take (one item\'s generation) before it is abandoned as a transient failure and retried (INFERENCE_SERVER_RETRIES), in seconds',
  },
  inferenceGrammarMaxSize: {
    env: 'INFERENCE_GRAMMAR_MAX_SIZE', default: 20_000, min: 100,
    doc: 'largest grammar a `structured_output` schema may become for the llama.cpp backend, in grammar elements after bounded repetitions are expanded; a larger schema is generated with the generic JSON grammar and only validated afterwards',
  },
} as const satisfies Record<string, LimitSetting>;

export type LimitName = keyof typeof LIMIT_SETTINGS;
export type Limits = { [K in LimitName]: number };

export const DEFAULT_LIMITS: Limits = Object.freeze(
  Object.fromEntries(Object.entries(LIMIT_SETTINGS).map(([k, s]) => [k, s.default])) as Limits,
);

/** A limit was reached; `setting` is the environment variable that raises it. Permanent for the work that hit it. */
export class LimitError extends Error {
  constructor(readonly setting: string, message: string) {
    super(message);
    this.name = 'LimitError';
  }
}

/** `limitError('maxTaskRuns', 'EachParallel "each" would create 300000 task runs')` → message naming the limit and its setting. */
export function limitError(name: LimitName, what: string, limits: Limits = DEFAULT_LIMITS): LimitError {
  const s = LIMIT_SETTINGS[name];
  return new LimitError(s.env, `${what}: over the limit of ${limits[name]} (${s.doc}; setting ${s.env})`);
}

/** Reads every limit from `env`; a malformed value is refused with the variable's name (at start-up, not later). */
export function limitsFromEnv(env: Record<string, string | undefined>): Limits {
  const out = { ...DEFAULT_LIMITS };
  for (const [name, s] of Object.entries(LIMIT_SETTINGS) as [LimitName, LimitSetting][]) {
    const raw = env[s.env];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw.trim());
    if (!Number.isSafeInteger(n) || n < s.min) {
      throw new Error(`${s.env} must be an integer >= ${s.min} (${s.doc}), got '${raw}'`);
    }
    out[name] = n;
  }
  return out;
}
