// Namespaced key-value store on SQLite with typed values and TTLs; expired entries are invisible and purged lazily.
// Values read back have prototype-free objects (their keys are the writer's).
import { parseJsonSafe } from '../../core/keyed.js';
import { isTransient } from '../../faults.js';
import type { KVEntry, KVStore, KVType } from '../types.js';
import type { Db } from './db.js';
import { expirationFromTtl, kvInputError, typedKVValue } from './kv-types.js';

interface KVRow { namespace: string; key: string; type: KVType; value: string; expiration_date: string | null; updated: string }

const COLUMNS = 'namespace, key, type, value, expiration_date, updated';

function toEntry(row: KVRow): KVEntry {
  const entry: KVEntry = {
    namespace: row.namespace, key: row.key, type: row.type, value: parseJsonSafe(row.value), updated: row.updated,
  };
  if (row.expiration_date) entry.expirationDate = row.expiration_date;
  return entry;
}

const isExpired = (row: KVRow, nowIso: string): boolean => row.expiration_date !== null && row.expiration_date <= nowIso;

export class SqliteKVStore implements KVStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      get: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE namespace = ? AND key = ?`),
      upsert: db.prepare(`INSERT INTO kv (${COLUMNS}) VALUES (@namespace, @key, @type, @value, @expiration_date, @updated)
        ON CONFLICT (namespace, key) DO UPDATE SET type = excluded.type, value = excluded.value,
        expiration_date = excluded.expiration_date, updated = excluded.updated`),
      delete: db.prepare('DELETE FROM kv WHERE namespace = ? AND key = ?'),
      list: db.prepare(`SELECT ${COLUMNS} FROM kv WHERE namespace = ? AND (expiration_date IS NULL OR expiration_date > ?) ORDER BY key`),
      purge: db.prepare('DELETE FROM kv WHERE namespace = ? AND expiration_date IS NOT NULL AND expiration_date <= ?'),
      purgeKey: db.prepare('DELETE FROM kv WHERE namespace = ? AND key = ? AND expiration_date IS NOT NULL AND expiration_date <= ?'),
    };
  }

  async get(namespace: string, key: string): Promise<KVEntry | undefined> {
    return this.getSync(namespace, key);
  }

  getSync(namespace: string, key: string): KVEntry | undefined {
    const row = this.stmts.get.get(namespace, key) as KVRow | undefined;
    if (!row) return undefined;
    const now = new Date().toISOString();
    if (isExpired(row, now)) {
      // The purge is housekeeping: a busy database must not turn a read into an error (a later read purges it).
      try { this.stmts.purgeKey.run(namespace, key, now); } catch (err) { if (!isTransient(err)) throw err; }
      return undefined;
    }
    return toEntry(row);
  }

  async set(entry: { namespace: string; key: string; value: unknown; type?: KVType; ttl?: string; overwrite?: boolean }): Promise<KVEntry> {
    if (!entry.namespace || !entry.key) throw kvInputError('KV namespace and key are required');
    const typed = typedKVValue(entry.value, entry.type);
    const now = new Date();
    const row: KVRow = {
      namespace: entry.namespace,
      key: entry.key,
      type: typed.type,
      value: JSON.stringify(typed.value ?? null),
      expiration_date: entry.ttl ? expirationFromTtl(entry.ttl, now) : null,
      updated: now.toISOString(),
    };
    this.db.transaction(() => {
      if (entry.overwrite === false) {
        const existing = this.stmts.get.get(entry.namespace, entry.key) as KVRow | undefined;
        if (existing && !isExpired(existing, row.updated)) {
          const err = kvInputError(`KV key '${entry.key}' already exists in namespace '${entry.namespace}' and overwrite is false`);
          err.status = 409;
          throw err;
        }
      }
      this.stmts.upsert.run(row);
    }).immediate();
    return toEntry(row);
  }

  async delete(namespace: string, key: string): Promise<boolean> {
    const row = this.stmts.get.get(namespace, key) as KVRow | undefined;
    this.stmts.delete.run(namespace, key);
    return row !== undefined && !isExpired(row, new Date().toISOString());
  }

  async list(namespace: string): Promise<KVEntry[]> {
    const now = new Date().toISOString();
    try { this.stmts.purge.run(namespace, now); } catch (err) { if (!isTransient(err)) throw err; }
    return (this.stmts.list.all(namespace, now) as KVRow[]).map(toEntry);
  }
}
