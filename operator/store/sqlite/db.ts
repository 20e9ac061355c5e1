// Opens the embedded SQLite database (WAL, NORMAL sync, busy timeout, foreign keys) and applies schema migrations.
// Also holds small SQL helpers shared by the stores (statement cache, namespace-prefix clause).
import Database from 'better-sqlite3';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import { regexFind } from '../filters.js';
import { readScope } from '../read-scope.js';
import { MIGRATIONS } from './schema.js';

export type Db = Database.Database;

/**
 * How long a statement waits for another process's write lock before failing with SQLITE_BUSY (a transient error,
 * retried later with backoff). better-sqlite3 waits synchronously, blocking the event loop, so the wait is short
 * (STORE_BUSY_TIMEOUT_MS).
 */
export const BUSY_TIMEOUT_MS = DEFAULT_LIMITS.storeBusyTimeoutMs;

/** Opens (creating if needed) the database file and brings its schema up to date. */
export function openDatabase(file: string, opts: { busyTimeoutMs?: number } = {}): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? BUSY_TIMEOUT_MS))}`);
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  // REGEX search filters (operator/store/filters.ts): RE2, linear in the text, patterns checked and bounded by the API.
  db.function('re2_find', { deterministic: true }, (pattern, text) =>
    (typeof pattern === 'string' && typeof text === 'string' && regexFind(pattern, text) ? 1 : 0));
  migrate(db);
  return db;
}

/** Applies every migration newer than the recorded schema version, each in its own transaction. */
export function migrate(db: Db): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null };
  let version = row.v ?? 0;
  const record = db.prepare('INSERT INTO schema_version (version) VALUES (?)');
  for (; version < MIGRATIONS.length; version++) {
    const sql = MIGRATIONS[version];
    db.transaction(() => { db.exec(sql); record.run(version + 1); }).immediate();
  }
  return version;
}

/** Prepared statements for dynamically built queries, keyed by their SQL text. */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(private readonly db: Db) {}

  get(sql: string): Database.Statement {
    let stmt = this.cache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }
}

/** `PRAGMA data_version` of each connection, and the read scope it was read in (see RowCache). */
const otherWrites = new WeakMap<Db, { read: () => number; value: number; scope: number }>();

/**
 * A number that changes when another connection (another process, another open of the file) commits a change to the
 * database: SQLite's `data_version`, read at most once per read scope (`operator/store/read-scope.ts`: the current turn
 * of the event loop or request), ~1.4 µs, however many reads ask.
 */
export function otherWritesVersion(db: Db): number {
  let v = otherWrites.get(db);
  if (!v) {
    const stmt = db.prepare('PRAGMA data_version').pluck();
    v = { read: () => stmt.get() as number, value: 0, scope: -1 };
    otherWrites.set(db, v);
  }
  const scope = readScope();
  if (v.scope !== scope) { v.value = v.read(); v.scope = scope; }
  return v.value;
}

/**
 * Small rows (heads: a revision, a version) a store reads on every request and writes only through itself: kept
 * until the store writes (it calls `clear`) or another connection changes the database (`otherWritesVersion`), so a
 * read costs no query in between. An absent row is remembered as absent. At most `max` keys (the oldest forgotten).
 */
export class RowCache<V> {
  private readonly rows = new Map<string, V | null>();
  private seen: number | undefined;

  constructor(private readonly db: Db, private readonly max = 10_000) {}

  get(key: string, read: () => V | undefined): V | undefined {
    const version = otherWritesVersion(this.db);
    if (version !== this.seen) { this.rows.clear(); this.seen = version; }
    const hit = this.rows.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const row = read();
    if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, row ?? null);
    return row;
  }

  /** Forgets every row: the store is about to write, or has written. */
  clear(): void { this.rows.clear(); }
}

/**
 * SQL condition matching a namespace and its children on dotted segments (`a` matches `a`, `a.b`, not `ab`).
 * Uses a range on the column so an index applies: children of `a` sort between `a.` and `a/` ('/' follows '.').
 */
export function namespaceClause(column: string, namespace: string, params: unknown[]): string {
  params.push(namespace, `${namespace}.`, `${namespace}/`);
  return `(${column} = ? OR (${column} >= ? AND ${column} < ?))`;
}

/** LIMIT/OFFSET clause; no limit when absent (SQLite's LIMIT -1). */
export function pageClause(query: { limit?: number; offset?: number }, params: unknown[]): string {
  params.push(query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : -1);
  params.push(query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0);
  return 'LIMIT ? OFFSET ?';
}

/** `toISOString()` form: 2026-01-31T12:00:00.000Z. */
const ISO_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number written by the ASCII digits of `v` from `at`, `len` of them. */
function digits(v: string, at: number, len: number): number {
  let n = 0;
  for (let i = at; i < at + len; i++) n = n * 10 + v.charCodeAt(i) - 48;
  return n;
}

/** Whether a date is written as `toISOString()` would write it (a real day and time: Date.parse rolls 02-30 over to 03-02). */
function isCanonicalIso(v: string): boolean {
  if (v.length !== 24 || !ISO_FORM.test(v)) return false;
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return month >= 1 && days !== undefined && digits(v, 8, 2) >= 1 && digits(v, 8, 2) <= days && digits(v, 11, 2) < 24 && digits(v, 14, 2) < 60 && digits(v, 17, 2) < 60;
}

/** Normalizes an ISO date to `toISOString()` form so stored dates compare lexicographically; leaves others as is. */
export function normalizeDate(value: string): string {
  // Already in that form (the engine's own dates, every write): as is, without a parse and a format per date.
  if (isCanonicalIso(value)) return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}
