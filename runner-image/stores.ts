// The stores a task Pod's runner uses, built from its environment: internal storage (attempt input/result, task files),
// the KV store (for `kv()` and the KV tasks) and the log store. Today: LocalStorage when STORAGE_DIR is set, SQLite logs
// when LOG_DB is set (else JSON lines on stdout), SQLite KV when KV_DB is set. The cluster wiring (S3 storage, the
// cluster log database, KVPair resources) plugs in here.
import type { LogLine } from '../operator/core/types.js';
import { LocalStorage } from '../operator/storage/local.js';
import { openDatabase, SqliteKVStore, SqliteLogStore } from '../operator/store/sqlite/index.js';
import type { Db } from '../operator/store/sqlite/db.js';
import type { InternalStorage, KVStore, LogStore } from '../operator/store/types.js';
import type { Deadline } from './deadline.js';

export interface RunnerStores {
  storage: InternalStorage;
  kv: KVStore;
  logs: LogStore;
  /** Waits until the stores can serve the task (cluster: the KV cache's first list), under the start deadline. */
  ready?(start: Deadline): Promise<void>;
  /** Flushes buffered logs and releases connections. */
  close(): Promise<void>;
}

const notConfigured = (what: string, variable: string) => new Error(`${what} is not configured in this runner (set ${variable})`);

/** Lines as JSON on stdout (`kubectl logs` shows them) when no log database is configured. */
export class StdoutLogStore implements LogStore {
  append(lines: LogLine[]): void { for (const l of lines) process.stdout.write(`${JSON.stringify(l)}\n`); }
  async flush(): Promise<void> {}
  async forExecution(): Promise<LogLine[]> { throw notConfigured('Reading logs', 'LOG_DB'); }
  async countForExecution(): Promise<number> { throw notConfigured('Reading logs', 'LOG_DB'); }
  async *pagesForExecution(): AsyncIterable<LogLine[]> { throw notConfigured('Reading logs', 'LOG_DB'); }
  async linesAfter(): Promise<never> { throw notConfigured('Reading logs', 'LOG_DB'); }
  async search(): Promise<never> { throw notConfigured('Searching logs', 'LOG_DB'); }
  async deleteExecution(): Promise<void> { throw notConfigured('Deleting logs', 'LOG_DB'); }
}

/** A KV store that fails on use, for runners without one (only tasks that use KV fail). */
function missingKV(): KVStore {
  const fail = (): never => { throw notConfigured('The KV store', 'KV_DB'); };
  return { get: async () => fail(), getSync: fail, set: async () => fail(), delete: async () => fail(), list: async () => fail() };
}

export function openRunnerStores(env: NodeJS.ProcessEnv): RunnerStores {
  if (!env.STORAGE_DIR) throw notConfigured('Internal storage', 'STORAGE_DIR');
  const storage = new LocalStorage(env.STORAGE_DIR);
  const dbs = new Map<string, Db>();
  const db = (file: string): Db => {
    let d = dbs.get(file);
    if (!d) { d = openDatabase(file); dbs.set(file, d); }
    return d;
  };
  const sqliteLogs = env.LOG_DB ? new SqliteLogStore(db(env.LOG_DB)) : undefined;
  const logs: LogStore = sqliteLogs ?? new StdoutLogStore();
  const kv = env.KV_DB ? new SqliteKVStore(db(env.KV_DB)) : missingKV();
  let closed = false;
  return {
    storage, kv, logs,
    async close() {
      if (closed) return;
      closed = true;
      try { sqliteLogs?.close(); } finally { for (const d of dbs.values()) d.close(); }
    },
  };
}
