// Embedded stores: flows, executions, KV, namespaces, logs, trigger state and live task processes in one SQLite file (`<dataDir>/store.db`), files under `<dataDir>/storage`.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { LocalStorage } from '../../storage/local.js';
import type { Stores } from '../types.js';
import { openDatabase } from './db.js';
import { SqliteExecutionStore } from './executions.js';
import { SqliteFlowStore } from './flows.js';
import { SqliteKVStore } from './kv.js';
import { SqliteLogStore } from './logs.js';
import { SqliteNamespaceStore } from './namespaces.js';
import { SqliteProcessRegistry } from './processes.js';
import { SqliteTriggerStateStore } from './triggers.js';

export { SqliteExecutionStore } from './executions.js';
export { SqliteFlowStore } from './flows.js';
export { SqliteKVStore } from './kv.js';
export { SqliteLogStore } from './logs.js';
export { SqliteNamespaceStore } from './namespaces.js';
export { SqliteProcessRegistry } from './processes.js';
export { SqliteTriggerStateStore } from './triggers.js';
export { BUSY_TIMEOUT_MS, openDatabase } from './db.js';

export interface EmbeddedStores extends Stores {
  flows: SqliteFlowStore;
  executions: SqliteExecutionStore;
  kv: SqliteKVStore;
  namespaces: SqliteNamespaceStore;
  logs: SqliteLogStore;
  storage: LocalStorage;
  triggers: SqliteTriggerStateStore;
  processes: SqliteProcessRegistry;
}

/**
 * Opens (creating if needed) the embedded stores under `dataDir`. `logFlushMs` batches log appends on a timer
 * (default: flushed on the next event-loop turn); `busyTimeoutMs` bounds the wait for another process's write lock
 * (default BUSY_TIMEOUT_MS). `close()` writes buffered logs and closes the database.
 */
export function openEmbeddedStores(dataDir: string, opts: { logFlushMs?: number; busyTimeoutMs?: number; maxWrittenRuns?: number } = {}): EmbeddedStores {
  mkdirSync(dataDir, { recursive: true });
  const storageDir = path.join(dataDir, 'storage');
  mkdirSync(storageDir, { recursive: true });
  const db = openDatabase(path.join(dataDir, 'store.db'), opts.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: opts.busyTimeoutMs });
  const logs = new SqliteLogStore(db, opts.logFlushMs);
  let closed = false;
  return {
    flows: new SqliteFlowStore(db),
    executions: new SqliteExecutionStore(db, opts.maxWrittenRuns === undefined ? {} : { maxWrittenRuns: opts.maxWrittenRuns }),
    kv: new SqliteKVStore(db),
    namespaces: new SqliteNamespaceStore(db),
    logs,
    storage: new LocalStorage(storageDir),
    triggers: new SqliteTriggerStateStore(db),
    processes: new SqliteProcessRegistry(db),
    async close() {
      if (closed) return;
      closed = true;
      try {
        logs.close();
        db.pragma('optimize');
      } finally {
        db.close();
      }
    },
  };
}
