// Execution logs on SQLite: buffered appends written in one transaction per batch, and FTS5 full-text search.
// Every read flushes the buffer first, so a reader always sees each line appended before it. Appending never throws:
// a batch the database refuses for now (busy, locked) stays buffered and is retried with a backoff.
import { type LogLevel, type LogLine, LogLevels } from '../../core/types.js';
import { backoff, isTransient, reasonOf } from '../../faults.js';
import { type SqlTarget, filtersSql, sqliteDialect } from '../filters.js';
import type { ExecutionLogFilter, ExecutionLogQuery, LogCursor, LogQuery, LogStore, Page } from '../types.js';
import { type Db, StatementCache, namespaceClause, normalizeDate, pageClause } from './db.js';

interface LogRow {
  execution_id: string; namespace: string; flow_id: string; task_id: string | null; task_run_id: string | null;
  attempt: number | null; level: number; ts: string; message: string;
}

/** Lines buffered beyond this are written at once instead of waiting for the timer. */
const MAX_BUFFER = 5000;
/** Lines per read of pagesForExecution. */
const DEFAULT_PAGE_LINES = 1000;
const COLUMNS = 'execution_id, namespace, flow_id, task_id, task_run_id, attempt, level, ts, message';

const levelRank = (level: LogLevel | undefined): number => Math.max(0, LogLevels.indexOf(level ?? 'TRACE'));

/** WHERE clause (and its parameters) of one execution's lines; served by the (execution_id, ts) index. */
function executionWhere(executionId: string, f: ExecutionLogFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [executionId, levelRank(f.minLevel)];
  let where = 'WHERE execution_id = ? AND level >= ?';
  if (f.taskRunId !== undefined) { where += ' AND task_run_id = ?'; params.push(f.taskRunId); }
  if (f.taskId !== undefined) { where += ' AND task_id = ?'; params.push(f.taskId); }
  if (f.attempt !== undefined) { where += ' AND attempt = ?'; params.push(f.attempt); }
  return { where, params };
}

function toRow(line: LogLine): LogRow {
  return {
    execution_id: line.executionId, namespace: line.namespace, flow_id: line.flowId,
    task_id: line.taskId ?? null, task_run_id: line.taskRunId ?? null, attempt: line.attemptNumber ?? null,
    level: levelRank(line.level), ts: normalizeDate(line.timestamp), message: line.message,
  };
}

function toLine(row: LogRow): LogLine {
  const line: LogLine = {
    executionId: row.execution_id, namespace: row.namespace, flowId: row.flow_id,
    level: LogLevels[row.level] ?? 'INFO', timestamp: row.ts, message: row.message,
  };
  if (row.task_id !== null) line.taskId = row.task_id;
  if (row.task_run_id !== null) line.taskRunId = row.task_run_id;
  if (row.attempt !== null) line.attemptNumber = row.attempt;
  return line;
}

/** A literal phrase query for FTS5, used when `q` is not valid FTS5 syntax. */
const quotedPhrase = (q: string): string => `"${q.replace(/"/g, '""')}"`;

/** Search filters on the logs table; `q` is full-text (FTS5 syntax, or a literal phrase when `quote`). */
const filterTarget = (quote: boolean): SqlTarget => ({
  text: { namespace: 'l.namespace', flowId: 'l.flow_id', executionId: 'l.execution_id' },
  dates: { startDate: 'l.ts', endDate: 'l.ts' },
  level: (rank, d) => `l.level >= ${d.param(rank)}`,
  q: (value, d) => `l.id IN (SELECT rowid FROM logs_fts WHERE logs_fts MATCH ${d.param(quote ? quotedPhrase(value) : value)})`,
});

export class SqliteLogStore implements LogStore {
  private buffer: LogRow[] = [];
  private closed = false;
  private timer: { cancel(): void } | undefined;
  /** Failed flushes in a row (transient errors): the next one waits a growing delay. */
  private failures = 0;
  private readonly dynamic: StatementCache;
  private readonly insertBatch: (rows: LogRow[]) => void;
  private readonly deleteStmt;

  constructor(private readonly db: Db, private readonly flushMs?: number) {
    this.dynamic = new StatementCache(db);
    const insert = db.prepare(`INSERT INTO logs (${COLUMNS}) VALUES
      (@execution_id, @namespace, @flow_id, @task_id, @task_run_id, @attempt, @level, @ts, @message)`);
    this.insertBatch = db.transaction((rows: LogRow[]) => { for (const row of rows) insert.run(row); });
    this.deleteStmt = db.prepare('DELETE FROM logs WHERE execution_id = ?');
  }

  append(lines: LogLine[]): void {
    if (this.closed) {
      console.warn(`log store closed: ${lines.length} line(s) dropped`);
      return;
    }
    for (const line of lines) this.buffer.push(toRow(line));
    if (this.buffer.length >= MAX_BUFFER && this.failures === 0) this.timedFlush();
    else if (this.buffer.length > 0) this.schedule();
  }

  async flush(): Promise<void> {
    this.flushSync();
  }

  /** Writes every buffered line in one transaction; on failure the lines stay buffered for the next flush. */
  flushSync(): void {
    this.cancelTimer();
    if (this.buffer.length === 0) return;
    const rows = this.buffer;
    this.buffer = [];
    try {
      this.insertBatch(rows);
    } catch (err) {
      this.buffer = rows.concat(this.buffer);
      throw err;
    }
  }

  async forExecution(executionId: string, query: ExecutionLogQuery = {}): Promise<LogLine[]> {
    this.flushForRead();
    const { where, params } = executionWhere(executionId, query);
    const sql = `SELECT ${COLUMNS} FROM logs ${where} ORDER BY ts, id ${pageClause(query, params)}`;
    return (this.dynamic.get(sql).all(...params) as LogRow[]).map(toLine);
  }

  async countForExecution(executionId: string, filter: ExecutionLogFilter = {}): Promise<number> {
    this.flushForRead();
    const { where, params } = executionWhere(executionId, filter);
    return (this.dynamic.get(`SELECT count(*) AS n FROM logs ${where}`).get(...params) as { n: number }).n;
  }

  async *pagesForExecution(executionId: string, filter: ExecutionLogFilter = {}, pageSize = DEFAULT_PAGE_LINES): AsyncIterable<LogLine[]> {
    this.flushForRead();
    let after: { ts: string; id: number } | undefined;
    for (;;) {
      const { where, params } = executionWhere(executionId, filter);
      const keyset = after ? ' AND (ts, id) > (?, ?)' : '';
      if (after) params.push(after.ts, after.id);
      params.push(pageSize);
      const rows = this.dynamic.get(`SELECT id, ${COLUMNS} FROM logs ${where}${keyset} ORDER BY ts, id LIMIT ?`)
        .all(...params) as (LogRow & { id: number })[];
      if (rows.length === 0) return;
      const last = rows[rows.length - 1]!;
      after = { ts: last.ts, id: last.id };
      yield rows.map(toLine);
      if (rows.length < pageSize) return;
    }
  }

  // One writer appends in order: ids are the order lines become visible, and the cursor is the last id delivered.
  async linesAfter(executionId: string, cursor: LogCursor, filter: ExecutionLogFilter = {}, limit = DEFAULT_PAGE_LINES): Promise<{ lines: LogLine[]; cursor: LogCursor }> {
    this.flushForRead();
    const after = cursor === '' ? 0 : Number(cursor);
    if (!Number.isSafeInteger(after) || after < 0) throw new Error(`invalid log cursor '${cursor}'`);
    const { where, params } = executionWhere(executionId, filter);
    params.push(after, Math.max(1, Math.floor(limit)));
    const rows = this.dynamic.get(`SELECT id, ${COLUMNS} FROM logs ${where} AND id > ? ORDER BY id LIMIT ?`)
      .all(...params) as (LogRow & { id: number })[];
    return { lines: rows.map(toLine), cursor: rows.length > 0 ? String(rows[rows.length - 1]!.id) : cursor };
  }

  async search(query: LogQuery): Promise<Page<LogLine>> {
    this.flushForRead();
    const q = query.q?.trim() ? query.q : undefined;
    try {
      return this.runSearch(query, q, false);
    } catch (err) {
      if (!isFtsQueryError(err)) throw err;
      return this.runSearch(query, q === undefined ? undefined : quotedPhrase(q), true);
    }
  }

  async deleteExecution(executionId: string): Promise<void> {
    this.flushSync();
    this.deleteStmt.run(executionId);
  }

  /** Before a read: write what is buffered; while the database is busy the read goes on without the buffered lines. */
  private flushForRead(): void {
    if (this.buffer.length === 0) return;
    try {
      this.flushSync();
    } catch (err) {
      if (!isTransient(err)) throw err;
      this.schedule();
    }
  }

  /** Stops the flush timer and writes what is buffered (called by the stores' close). */
  close(): void {
    this.flushSync();
    this.closed = true;
  }

  private runSearch(query: LogQuery, match: string | undefined, quote: boolean): Page<LogLine> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (match !== undefined) { where.push('l.id IN (SELECT rowid FROM logs_fts WHERE logs_fts MATCH ?)'); params.push(match); }
    if (query.namespace) where.push(namespaceClause('l.namespace', query.namespace, params));
    if (query.flowId) { where.push('l.flow_id = ?'); params.push(query.flowId); }
    if (query.executionId) { where.push('l.execution_id = ?'); params.push(query.executionId); }
    if (query.taskRunId) { where.push('l.task_run_id = ?'); params.push(query.taskRunId); }
    if (query.minLevel) { where.push('l.level >= ?'); params.push(levelRank(query.minLevel)); }
    if (query.filters?.length) where.push(...filtersSql(query.filters, filterTarget(quote), sqliteDialect(params)));
    const filter = `FROM logs l${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
    const total = (this.dynamic.get(`SELECT count(*) AS n ${filter}`).get(...params) as { n: number }).n;
    const pageParams = [...params];
    const sql = `SELECT ${COLUMNS} ${filter} ORDER BY l.ts DESC, l.id DESC ${pageClause(query, pageParams)}`;
    return { results: (this.dynamic.get(sql).all(...pageParams) as LogRow[]).map(toLine), total };
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = this.failures > 0 ? backoff(this.failures - 1, { baseMs: 100, maxMs: 10_000 }) : this.flushMs;
    if (wait && wait > 0) {
      const handle = setTimeout(() => this.timedFlush(), wait);
      this.timer = { cancel: () => clearTimeout(handle) };
    } else {
      const handle = setImmediate(() => this.timedFlush());
      this.timer = { cancel: () => clearImmediate(handle) };
    }
  }

  /** A flush off the caller's path: a transient failure keeps the lines and retries later; a permanent one drops them. */
  private timedFlush(): void {
    this.timer = undefined;
    try {
      this.flushSync();
      this.failures = 0;
    } catch (err) {
      if (!isTransient(err)) {
        const dropped = this.buffer.length;
        this.buffer = [];
        this.failures = 0;
        console.error(`log flush failed for good; ${dropped} line(s) dropped: ${reasonOf(err)}`);
        return;
      }
      if (this.failures++ % 10 === 0) console.warn(`log flush failed (${reasonOf(err)}); ${this.buffer.length} line(s) kept, retrying`);
      if (!this.closed) this.schedule();
    }
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}

/** SQLite reports malformed FTS5 queries as "fts5: syntax error ..." or similar SQLITE_ERROR messages. */
function isFtsQueryError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return /fts5|syntax error|no such column|unterminated string|unknown special query/i.test(message);
}
