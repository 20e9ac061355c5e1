// Execution logs on PostgreSQL (cluster mode): buffered appends written as one multi-row INSERT per batch, full-text
// search on a generated tsvector column with a GIN index. Same semantics as the SQLite log store: every read flushes
// the buffer first, so a reader sees each line appended before it.
import { withSchemaLock } from './schema-lock.js';
import type { Pool } from 'pg';
import { type LogLevel, type LogLine, LogLevels } from '../../core/types.js';
import type { ExecutionLogFilter, ExecutionLogQuery, LogCursor, LogQuery, LogStore, Page } from '../types.js';
import { type SqlTarget, filtersSql, postgresDialect } from '../filters.js';
import { TS_CONFIG, compileLogQuery } from './log-query.js';

/** Search filters on the log table; `q` is the full-text syntax of log-query.ts. */
const FILTER_TARGET: SqlTarget = {
  text: { namespace: 'namespace', flowId: 'flow_id', executionId: 'execution_id' },
  dates: { startDate: 'ts', endDate: 'ts' },
  level: (rank, d) => `level >= ${d.param(rank)}`,
  q: (value, d) => {
    const match = compileLogQuery(value, (v) => d.param(v));
    return match === undefined ? '1 = 0' : `tsv @@ (${match})`;
  },
};

export interface PgLogStoreOptions {
  /** Table name (default `flowpilot_logs`): configuration, never user input; must be a plain identifier. */
  table?: string;
  /** Delay before buffered lines are written (default: the next event-loop turn). */
  flushMs?: number;
  /** Lines buffered beyond this are written at once (default 5000). */
  batchSize?: number;
  /** Lines kept while the database is unreachable; the oldest are dropped beyond it (default 100000). */
  maxBuffered?: number;
}

interface Row {
  execution_id: string; namespace: string; flow_id: string; task_id: string | null; task_run_id: string | null;
  attempt: number | null; level: number; ts: Date; message: string;
}

const COLUMNS = 'execution_id, namespace, flow_id, task_id, task_run_id, attempt, level, ts, message';
const TYPES = ['text', 'text', 'text', 'text', 'text', 'int4', 'int2', 'timestamptz', 'text'];
/** Only this much of a message is indexed (a tsvector is limited to 1 MiB). */
const INDEXED_CHARS = 200_000;

/** Delay before a failed background flush is tried again. */
const RETRY_MS = 2000;
/** Lines per read of pagesForExecution. */
const DEFAULT_PAGE_LINES = 1000;

const levelRank = (level: LogLevel | undefined): number => Math.max(0, LogLevels.indexOf(level ?? 'TRACE'));
/** PostgreSQL text cannot hold NUL characters. */
const clean = (s: string): string => (s.includes('\0') ? s.replace(/\0/g, '\uFFFD') : s);
const cleanOpt = (s: string | undefined): string | null => (s === undefined ? null : clean(s));

function toValues(line: LogLine): unknown[] {
  const ms = Date.parse(line.timestamp);
  return [
    clean(line.executionId), clean(line.namespace), clean(line.flowId), cleanOpt(line.taskId), cleanOpt(line.taskRunId),
    line.attemptNumber ?? null, levelRank(line.level), new Date(Number.isNaN(ms) ? Date.now() : ms), clean(line.message),
  ];
}

function toLine(row: Row): LogLine {
  const line: LogLine = {
    executionId: row.execution_id, namespace: row.namespace, flowId: row.flow_id,
    level: LogLevels[row.level] ?? 'INFO', timestamp: row.ts.toISOString(), message: row.message,
  };
  if (row.task_id !== null) line.taskId = row.task_id;
  if (row.task_run_id !== null) line.taskRunId = row.task_run_id;
  if (row.attempt !== null) line.attemptNumber = row.attempt;
  return line;
}

/** WHERE clause of one execution's lines, its values registered through `param` (served by the (execution_id, ts) index). */
function executionWhere(executionId: string, f: ExecutionLogFilter, param: (value: unknown) => string): string {
  let where = `WHERE execution_id = ${param(executionId)} AND level >= ${param(levelRank(f.minLevel))}`;
  if (f.taskRunId !== undefined) where += ` AND task_run_id = ${param(f.taskRunId)}`;
  if (f.taskId !== undefined) where += ` AND task_id = ${param(f.taskId)}`;
  if (f.attempt !== undefined) where += ` AND attempt = ${param(f.attempt)}`;
  return where;
}

/** Bind parameters collected in order, each named by its placeholder (`$n`). */
function parameters(): { params: unknown[]; param: (value: unknown) => string } {
  const params: unknown[] = [];
  return { params, param: (value) => { params.push(value); return `$${params.length}`; } };
}

/** A line's writing transaction; lines written before the column existed count as the oldest (0). */
const TXID = 'COALESCE(txid, 0)';

/** linesAfter's cursor: `''`, or the last line delivered as `<txid>:<id>`. */
function parseFollowCursor(cursor: LogCursor): { txid: string; id: string } | undefined {
  if (cursor === '') return undefined;
  const m = /^(\d{1,19}):(\d{1,19})$/.exec(cursor);
  if (!m) throw new Error(`invalid log cursor '${cursor}'`);
  return { txid: m[1]!, id: m[2]! };
}

/** Data errors (class 22) and program limits (class 54) are caused by a line itself: retrying the batch cannot help. */
const isLineError = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: string })?.code ?? ''));

export class PgLogStore implements LogStore {
  readonly table: string;
  private buffer: unknown[][] = [];
  private timer: { cancel(): void } | undefined;
  private writing: Promise<void> = Promise.resolve();
  private ready: Promise<void> | undefined;
  private closed = false;
  private readonly batchSize: number;
  private readonly maxBuffered: number;

  constructor(private readonly pool: Pool, private readonly options: PgLogStoreOptions = {}) {
    this.table = options.table ?? 'flowpilot_logs';
    if (!/^[a-z_][a-z0-9_]{0,50}$/.test(this.table)) throw new Error(`invalid log table name: ${this.table}`);
    this.batchSize = options.batchSize ?? 5000;
    this.maxBuffered = options.maxBuffered ?? 100_000;
  }

  /** Creates the table and its indexes when missing (under an advisory lock, so concurrent operators do not race). */
  init(): Promise<void> {
    this.ready ??= this.createSchema().catch((err) => { this.ready = undefined; throw err; });
    return this.ready;
  }

  append(lines: LogLine[]): void {
    if (this.closed) {
      console.warn(`log store closed: ${lines.length} line(s) dropped`);
      return;
    }
    for (const line of lines) this.buffer.push(toValues(line));
    if (this.buffer.length > this.maxBuffered) {
      const dropped = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, dropped);
      console.warn(`log buffer full: ${dropped} oldest line(s) dropped`);
    }
    if (this.buffer.length >= this.batchSize) this.background();
    else if (this.buffer.length > 0) this.schedule();
  }

  /** Writes every buffered line; on a connection failure the lines stay buffered and the error is thrown. */
  flush(): Promise<void> {
    this.cancelTimer();
    const run = this.writing.catch(() => {}).then(() => this.writeAll());
    this.writing = run;
    return run;
  }

  async forExecution(executionId: string, query: ExecutionLogQuery = {}): Promise<LogLine[]> {
    await this.flush();
    const { params, param } = parameters();
    const where = executionWhere(executionId, query, param);
    const limit = query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : null;
    const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
    const sql = `SELECT ${COLUMNS} FROM ${this.table} ${where} ORDER BY ts, id LIMIT ${param(limit)} OFFSET ${param(offset)}`;
    const { rows } = await this.pool.query<Row>(sql, params);
    return rows.map(toLine);
  }

  async countForExecution(executionId: string, filter: ExecutionLogFilter = {}): Promise<number> {
    await this.flush();
    const { params, param } = parameters();
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table} ${executionWhere(executionId, filter, param)}`, params);
    return Number(rows[0]!.n);
  }

  async *pagesForExecution(executionId: string, filter: ExecutionLogFilter = {}, pageSize = DEFAULT_PAGE_LINES): AsyncIterable<LogLine[]> {
    await this.flush();
    // The cursor keeps the time as PostgreSQL's text (microseconds), not as a Date (milliseconds).
    let after: { ts: string; id: string } | undefined;
    for (;;) {
      const { params, param } = parameters();
      let sql = `SELECT id, ts::text AS ts_key, ${COLUMNS} FROM ${this.table} ${executionWhere(executionId, filter, param)}`;
      if (after) sql += ` AND (ts, id) > (${param(after.ts)}::timestamptz, ${param(after.id)}::bigint)`;
      sql += ` ORDER BY ts, id LIMIT ${param(pageSize)}`;
      const { rows } = await this.pool.query<Row & { id: string; ts_key: string }>(sql, params);
      if (rows.length === 0) return;
      const last = rows[rows.length - 1]!;
      after = { ts: last.ts_key, id: last.id };
      yield rows.map(toLine);
      if (rows.length < pageSize) return;
    }
  }

  // Commit-safe order. Ids come from a sequence when a line is inserted, so with several writers at once (task Pods, the
  // operator) a line with a lower id can become visible after a higher one was read: an id cursor would skip it. Each
  // line records its writing transaction (`txid`, txid_current()); a read returns only lines of transactions older than
  // its own snapshot's xmin, which have all ended (no line can still appear below them), ordered by (txid, id), and the
  // cursor is the last (txid, id) delivered. A line of a transaction still running waits for a later read (a session
  // idle in a transaction on this database delays the follow, it loses nothing); `final` reads whatever is visible.
  async linesAfter(executionId: string, cursor: LogCursor, filter: ExecutionLogFilter = {}, limit = DEFAULT_PAGE_LINES, opts: { final?: boolean } = {}): Promise<{ lines: LogLine[]; cursor: LogCursor }> {
    const after = parseFollowCursor(cursor);
    await this.flush();
    const { params, param } = parameters();
    let sql = `SELECT id, ${TXID} AS txid_key, ${COLUMNS} FROM ${this.table} ${executionWhere(executionId, filter, param)}`;
    if (after) sql += ` AND (${TXID}, id) > (${param(after.txid)}::bigint, ${param(after.id)}::bigint)`;
    if (!opts.final) sql += ` AND ${TXID} < txid_snapshot_xmin(txid_current_snapshot())`;
    sql += ` ORDER BY ${TXID}, id LIMIT ${param(Math.max(1, Math.floor(limit)))}`;
    const { rows } = await this.pool.query<Row & { id: string; txid_key: string }>(sql, params);
    const last = rows[rows.length - 1];
    return { lines: rows.map(toLine), cursor: last ? `${last.txid_key}:${last.id}` : cursor };
  }

  async search(query: LogQuery): Promise<Page<LogLine>> {
    await this.flush();
    const params: unknown[] = [];
    const dialect = postgresDialect(params);
    const param = dialect.param;
    const where: string[] = [];
    if (query.q?.trim()) {
      const match = compileLogQuery(query.q, param);
      if (match === undefined) return { results: [], total: 0 };
      where.push(`tsv @@ (${match})`);
    }
    if (query.namespace) {
      where.push(`(namespace = ${param(query.namespace)} OR (namespace >= ${param(`${query.namespace}.`)} AND namespace < ${param(`${query.namespace}/`)}))`);
    }
    if (query.flowId) where.push(`flow_id = ${param(query.flowId)}`);
    if (query.executionId) where.push(`execution_id = ${param(query.executionId)}`);
    if (query.taskRunId) where.push(`task_run_id = ${param(query.taskRunId)}`);
    if (query.minLevel) where.push(`level >= ${param(levelRank(query.minLevel))}`);
    if (query.filters?.length) where.push(...filtersSql(query.filters, FILTER_TARGET, dialect));
    const filter = `FROM ${this.table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
    const limit = query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : null;
    const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
    const countParams = [...params];
    const page = `LIMIT ${param(limit)} OFFSET ${param(offset)}`;
    const [count, rows] = await Promise.all([
      this.pool.query<{ n: string }>(`SELECT count(*) AS n ${filter}`, countParams),
      this.pool.query<Row>(`SELECT ${COLUMNS} ${filter} ORDER BY ts DESC, id DESC ${page}`, params),
    ]);
    return { results: rows.rows.map(toLine), total: Number(count.rows[0]!.n) };
  }

  async deleteExecution(executionId: string): Promise<void> {
    await this.flush();
    await this.pool.query(`DELETE FROM ${this.table} WHERE execution_id = $1`, [executionId]);
  }

  /** Writes what is buffered and refuses later appends (the pool belongs to the caller and stays open). */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private async createSchema(): Promise<void> {
    const t = this.table;
    await withSchemaLock(this.pool, t, async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS ${t} (
        id           bigserial PRIMARY KEY,
        execution_id text NOT NULL,
        namespace    text COLLATE "C" NOT NULL,
        flow_id      text NOT NULL,
        task_id      text,
        task_run_id  text,
        attempt      integer,
        level        smallint NOT NULL,
        ts           timestamptz NOT NULL,
        message      text NOT NULL,
        txid         bigint DEFAULT txid_current(),
        tsv          tsvector GENERATED ALWAYS AS (to_tsvector('${TS_CONFIG}', left(message, ${INDEXED_CHARS}))) STORED
      )`);
      // A table of an earlier version gets the writing transaction (linesAfter); its lines keep none (read as 0).
      const { rowCount } = await client.query(`SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'txid' AND NOT attisdropped`, [t]);
      if (!rowCount) {
        await client.query(`ALTER TABLE ${t} ADD COLUMN txid bigint`); // without a default: no rewrite of the table
        await client.query(`ALTER TABLE ${t} ALTER COLUMN txid SET DEFAULT txid_current()`);
      }
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_execution ON ${t} (execution_id, ts)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_follow ON ${t} (execution_id, (${TXID}), id)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_flow ON ${t} (namespace, flow_id, ts)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_ts ON ${t} (ts)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_tsv ON ${t} USING GIN (tsv)`);
    });
  }


  private async writeAll(): Promise<void> {
    await this.init();
    while (this.buffer.length > 0) {
      const rows = this.buffer.splice(0, this.batchSize);
      try {
        await this.insert(rows);
      } catch (err) {
        if (!isLineError(err)) {
          this.buffer = rows.concat(this.buffer);
          throw err;
        }
        await this.insertOneByOne(rows);
      }
    }
  }

  /** One INSERT for the whole batch: each column travels as one array parameter, unnested server-side. */
  private async insert(rows: unknown[][]): Promise<void> {
    const columns = TYPES.map((_, c) => rows.map((r) => r[c]));
    const unnest = TYPES.map((type, c) => `$${c + 1}::${type}[]`).join(', ');
    await this.pool.query(`INSERT INTO ${this.table} (${COLUMNS}) SELECT * FROM unnest(${unnest})`, columns);
  }

  /** After a data error: writes line by line and drops only the lines the database refuses. */
  private async insertOneByOne(rows: unknown[][]): Promise<void> {
    for (let i = 0; i < rows.length; i++) {
      try {
        await this.insert([rows[i]!]);
      } catch (err) {
        if (!isLineError(err)) {
          this.buffer = rows.slice(i).concat(this.buffer);
          throw err;
        }
        console.warn(`log line refused by the database and dropped: ${(err as Error).message}`);
      }
    }
  }

  private background(): void {
    this.flush().catch((err) => {
      console.error('log flush failed; lines kept for the next flush:', (err as Error).message);
      if (!this.closed && !this.timer) {
        const handle = setTimeout(() => { this.timer = undefined; this.background(); }, RETRY_MS).unref();
        this.timer = { cancel: () => clearTimeout(handle) };
      }
    });
  }

  private schedule(): void {
    if (this.timer) return;
    const fire = () => { this.timer = undefined; this.background(); };
    if (this.options.flushMs && this.options.flushMs > 0) {
      const handle = setTimeout(fire, this.options.flushMs);
      this.timer = { cancel: () => clearTimeout(handle) };
    } else {
      const handle = setImmediate(fire);
      this.timer = { cancel: () => clearImmediate(handle) };
    }
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}
