// Executions on SQLite with Kubernetes-style optimistic concurrency (resource_version), a labels index,
// a durable command queue acknowledged atomically with updates, and an in-process watch feed. Creates and updates are
// group-committed (group-commit.ts): each resolves once its transaction, shared with the others of its turn, commits.
// A record is stored as a body (everything but its task runs) plus one row per task run; an update writes the runs
// that differ by identity from the version this store last wrote (written runs are frozen, so an unchanged object is an
// unchanged run), so the bytes written per update follow what changed, not the size of the record.
import { freezeData } from '../../core/keyed.js';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import { WeightedLru } from '../../core/weighted-lru.js';
import { type Execution, type ExecutionState, ExecutionStates, type Label, type TaskRun, isTerminal } from '../../core/types.js';
import {
  ConflictError, type DailyStatsQuery, type DailyStatsRow, type ExecutionCommand, type ExecutionQuery, type ExecutionStore, type ExecutionSummary, type Page,
  type PendingCommand, type StoredExecution, type WatchEvent,
} from '../types.js';
import { type SqlTarget, filtersSql, sqliteDialect } from '../filters.js';
import { type Db, StatementCache, namespaceClause, normalizeDate, pageClause } from './db.js';
import { Emitter } from './emitter.js';
import { GroupCommit } from './group-commit.js';

interface CommandRow { seq: number; execution_id: string; json: string; created: string }

const ACTIVE_STATES = JSON.stringify(ExecutionStates.filter((s) => !isTerminal(s)));

function toCommand(row: CommandRow): PendingCommand {
  return { seq: row.seq, executionId: row.execution_id, command: JSON.parse(row.json) as ExecutionCommand, created: row.created };
}

/**
 * Summary columns derived from an execution, and its `body` (execution_bodies): the record as JSON without its task runs
 * (execution_task_runs).
 */
function columns(execution: Execution) {
  return {
    id: execution.id,
    namespace: execution.namespace,
    flow_id: execution.flowId,
    state: execution.state.current,
    start_date: normalizeDate(execution.state.startDate),
    end_date: execution.state.endDate ? normalizeDate(execution.state.endDate) : null,
    labels: JSON.stringify(execution.labels ?? []),
    body: JSON.stringify({ ...execution, taskRunList: undefined }),
  };
}

/** What this store last wrote of an execution (once committed): its version and the run objects of it, by position. */
interface Written { resourceVersion: number; runs: TaskRun[] }

/**
 * Executions whose last written runs are remembered (the least recently written are forgotten: their next update
 * writes every run); their runs together are bounded too (`maxWrittenRuns`, EXECUTION_CACHE_MAX_TASK_RUNS).
 */
const WRITTEN_MAX = 2_000;

/** Bytes and rows written by the execution store since it was opened (tests show the cost of an update with them). */
export interface ExecutionWriteStats { bytes: number; runRows: number; updates: number }

/** The run rows one write puts (position, JSON), the run list as written, and where rows past its end start. */
interface RunWrites { rows: [number, string][]; list: TaskRun[]; trimAt: number | undefined; bytes: number }

/**
 * The runs of `runs` that are not the very objects of `before` (the runs of the version being replaced, as this store
 * wrote them; undefined: unknown, every run is written), serialised when the write is asked for (as its body is), and
 * frozen: each is the stored version, which the next update recognises by identity. `list` is a frozen copy of the run
 * list: what the store remembers and the watch feed hands out once the write commits.
 */
function changedRuns(runs: readonly TaskRun[], before: readonly TaskRun[] | undefined): RunWrites {
  const writes: RunWrites = { rows: [], list: [], trimAt: undefined, bytes: 0 };
  for (let i = 0; i < runs.length; i++) serialiseRun(runs, before, i, writes);
  return finishRuns(runs, before, writes);
}

/** Runs serialised per turn of the event loop by `changedRunsInTurns` (~2,000 task runs: a few ms). */
const RUNS_PER_TURN = 2_000;

/**
 * `changedRuns`, serialising at most RUNS_PER_TURN runs per turn of the event loop: the 100,000 changed runs of a
 * fan-out took ~0.3 s in one go. The caller must not change the record meanwhile (the controller awaits its write; a
 * run already serialised is frozen, so changing it throws).
 */
async function changedRunsInTurns(runs: readonly TaskRun[], before: readonly TaskRun[] | undefined): Promise<RunWrites> {
  const writes: RunWrites = { rows: [], list: [], trimAt: undefined, bytes: 0 };
  let room = RUNS_PER_TURN;
  for (let i = 0; i < runs.length; i++) {
    if (!serialiseRun(runs, before, i, writes) || --room > 0) continue;
    room = RUNS_PER_TURN;
    await new Promise((r) => setImmediate(r));
  }
  return finishRuns(runs, before, writes);
}

/** Serialises and freezes run `i` unless it is the very object of `before` (unchanged); whether it did. */
function serialiseRun(runs: readonly TaskRun[], before: readonly TaskRun[] | undefined, i: number, writes: RunWrites): boolean {
  const run = runs[i]!;
  if (before && before[i] === run) return false;
  const body = JSON.stringify(run);
  writes.rows.push([i, body]);
  writes.bytes += body.length;
  freezeData(run);
  return true;
}

/** Where rows past the end start (a shorter list, or an unknown earlier one), and the frozen run list as written. */
function finishRuns(runs: readonly TaskRun[], before: readonly TaskRun[] | undefined, writes: RunWrites): RunWrites {
  writes.trimAt = !before || before.length > runs.length ? runs.length : undefined;
  writes.list = Object.freeze(runs.slice()) as TaskRun[];
  return writes;
}

/** Rows per statement of the task-run writes, largest first (one statement per size; 1 takes what is left). */
const PUT_RUN_ROWS = [64, 8, 1] as const;

const lowerHas = (column: string, p: string): string => `instr(lower(${column}), lower(${p})) > 0`;

/** Search filters on the summary columns (dates: Kestra compares the start date), labels on execution_labels. */
const FILTER_TARGET: SqlTarget = {
  text: {
    namespace: 'namespace', flowId: 'flow_id', state: 'state',
    triggerExecutionId: `(SELECT json_extract(b.body, '$.parent.executionId') FROM execution_bodies b WHERE b.seq = executions.seq)`,
  },
  constants: { kind: 'NORMAL' },
  dates: { startDate: 'start_date', endDate: 'start_date' },
  label: (l, mode, d) => {
    if (mode === 'equals') return `seq IN (SELECT seq FROM execution_labels WHERE key = ${d.param(l.key)} AND value = ${d.param(l.value)})`;
    if (l.key === '') return `seq IN (SELECT seq FROM execution_labels WHERE ${d.contains('key', l.value)} OR ${d.contains('value', l.value)})`;
    return `seq IN (SELECT seq FROM execution_labels WHERE key = ${d.param(l.key)} AND ${d.contains('value', l.value)})`;
  },
  q: (value, d) => `(${lowerHas('id', d.param(value))} OR ${lowerHas('namespace', d.param(value))} OR ${lowerHas('flow_id', d.param(value))}
    OR seq IN (SELECT seq FROM execution_labels WHERE ${lowerHas("key || ':' || value", d.param(value))}))`,
};

export class SqliteExecutionStore implements ExecutionStore {
  private readonly dynamic: StatementCache;
  private readonly changes = new Emitter<WatchEvent>('execution watch');
  private readonly commands = new Emitter<PendingCommand>('execution command');
  private readonly stmts;
  /** The runs last written of each execution, for the next update's comparison (WRITTEN_MAX, `maxWrittenRuns`). */
  private readonly written: WeightedLru<Written>;
  /** Bytes and rows written since the store was opened. */
  readonly writeStats: ExecutionWriteStats = { bytes: 0, runRows: 0, updates: 0 };
  /** Creates and updates asked for in one turn of the event loop share a transaction (group-commit.ts). */
  readonly group: GroupCommit;

  /**
   * `maxWrittenRuns`: runs of the last written versions kept for the next updates' comparison, all together (the
   * one just written is kept whatever its size); default EXECUTION_CACHE_MAX_TASK_RUNS's.
   */
  constructor(private readonly db: Db, opts: { maxWrittenRuns?: number } = {}) {
    this.written = new WeightedLru((w) => w.runs.length, {
      maxWeight: opts.maxWrittenRuns ?? DEFAULT_LIMITS.executionCacheMaxTaskRuns, maxEntries: WRITTEN_MAX,
    });
    this.dynamic = new StatementCache(db);
    this.group = new GroupCommit(db);
    this.stmts = {
      insert: db.prepare(`INSERT INTO executions (id, namespace, flow_id, state, start_date, end_date, labels, resource_version)
        VALUES (@id, @namespace, @flow_id, @state, @start_date, @end_date, @labels, 1) ON CONFLICT (id) DO NOTHING RETURNING seq`),
      insertBody: db.prepare('INSERT INTO execution_bodies (seq, body) VALUES (?, ?)'),
      get: db.prepare(`SELECT e.seq, b.body, e.resource_version FROM executions e JOIN execution_bodies b ON b.seq = e.seq
        WHERE e.id = ?`),
      runsOf: db.prepare('SELECT body FROM execution_task_runs WHERE seq = ? ORDER BY idx').pluck(),
      // The run texts joined by SQLite as the bytes it stores (UTF-8): no JavaScript string per run, no encoding.
      runsJson: db.prepare(`SELECT CAST(group_concat(body, ',' ORDER BY idx) AS BLOB) FROM execution_task_runs WHERE seq = ?`).pluck(),
      // An upsert, not INSERT OR REPLACE: replacing deletes and re-inserts each row, which with foreign keys on cost
      // ~8x more for the rows of a fan-out's results (~1.1 s against ~0.14 s for 100,000 rows).
      putRuns: PUT_RUN_ROWS.map((n) => db.prepare(`INSERT INTO execution_task_runs (seq, idx, body) VALUES
        ${Array.from({ length: n }, () => '(?, ?, ?)').join(', ')} ON CONFLICT (seq, idx) DO UPDATE SET body = excluded.body`)),
      trimRuns: db.prepare('DELETE FROM execution_task_runs WHERE seq = ? AND idx >= ?'),
      current: db.prepare('SELECT seq, resource_version, labels FROM executions WHERE id = ?'),
      update: db.prepare(`UPDATE executions SET namespace = @namespace, flow_id = @flow_id, state = @state,
        start_date = @start_date, end_date = @end_date, labels = @labels, resource_version = @rv WHERE seq = @seq`),
      updateBody: db.prepare('UPDATE execution_bodies SET body = ? WHERE seq = ?'),
      deleteLabels: db.prepare('DELETE FROM execution_labels WHERE seq = ?'),
      insertLabel: db.prepare('INSERT OR IGNORE INTO execution_labels (seq, key, value) VALUES (?, ?, ?)'),
      ackCommand: db.prepare('DELETE FROM commands WHERE seq = ? AND execution_id = ?'),
      active: db.prepare(`SELECT e.seq, e.id, b.body, e.resource_version FROM executions e JOIN execution_bodies b ON b.seq = e.seq
        WHERE e.state IN (SELECT value FROM json_each(?)) ORDER BY e.start_date, e.seq`),
      // The summary columns, and the two fields of the body (no task runs in it) that have no column of their own.
      activeSummaries: db.prepare(`SELECT e.id, e.namespace, e.flow_id AS flowId, e.state, e.resource_version AS resourceVersion,
          json_valid(b.body) AS valid,
          CASE WHEN json_valid(b.body) THEN json_extract(b.body, '$.flowRevision') END AS flowRevision,
          CASE WHEN json_valid(b.body) THEN json_extract(b.body, '$.state.startDate') END AS startDate
        FROM executions e JOIN execution_bodies b ON b.seq = e.seq
        WHERE e.state IN (SELECT value FROM json_each(?)) ORDER BY e.start_date, e.seq`),
      count: db.prepare(`SELECT count(*) AS n FROM executions
        WHERE namespace = ? AND flow_id = ? AND state IN (SELECT value FROM json_each(?))`),
      addCommand: db.prepare('INSERT INTO commands (execution_id, json, created) VALUES (?, ?, ?) RETURNING seq'),
      commandsOf: db.prepare('SELECT seq, execution_id, json, created FROM commands WHERE execution_id = ? ORDER BY seq'),
      allCommands: db.prepare('SELECT seq, execution_id, json, created FROM commands ORDER BY seq'),
      delete: db.prepare('DELETE FROM executions WHERE id = ?'),
      deleteCommands: db.prepare('DELETE FROM commands WHERE execution_id = ?'),
    };
  }

  async create(execution: Execution): Promise<StoredExecution> {
    const row = columns(execution);
    const runs = changedRuns(execution.taskRunList, undefined);
    const inserted = await this.group.submit(() => {
      const created = this.stmts.insert.get(row) as { seq: number } | undefined;
      if (!created) return false;
      this.stmts.insertBody.run(created.seq, row.body);
      this.writeRuns(created.seq, runs);
      this.writeLabels(created.seq, execution.labels);
      return true;
    }, (ok) => { if (ok) this.committed('ADDED', execution.id, row, runs, 1); });
    if (!inserted) return this.getSync(execution.id)!;
    return { execution, resourceVersion: 1 };
  }

  async get(id: string): Promise<StoredExecution | undefined> {
    return this.getSync(id);
  }

  async getRunsJson(id: string): Promise<{ stored: StoredExecution; runs: Buffer } | undefined> {
    const row = this.row(id);
    if (!row) return undefined;
    let runs: Buffer;
    try {
      runs = (this.stmts.runsJson.get(row.seq) as Buffer | null) ?? Buffer.alloc(0); // no row: NULL
    } catch (err) {
      // More than SQLite joins in one value (1e9 bytes: outputs of up to EXPRESSION_MAX_BYTES each can get there):
      // the caller reads the record with `get`, a run at a time, as it did before this read existed.
      if ((err as { code?: string }).code === 'SQLITE_TOOBIG') return undefined;
      throw err;
    }
    const execution = JSON.parse(row.body) as Execution;
    execution.taskRunList = [];
    return { stored: { execution, resourceVersion: row.resource_version }, runs };
  }

  getSync(id: string): StoredExecution | undefined {
    const row = this.row(id);
    return row && { execution: this.assemble(row.seq, row.body), resourceVersion: row.resource_version };
  }

  /** The execution's row: its sequence number (its task runs' key), its body (no task run) and its version. */
  private row(id: string): { seq: number; body: string; resource_version: number } | undefined {
    return this.stmts.get.get(id) as { seq: number; body: string; resource_version: number } | undefined;
  }

  async update(execution: Execution, expected: number, ackCommands: number[] = []): Promise<StoredExecution> {
    const row = columns(execution);
    const resourceVersion = expected + 1;
    const known = this.written.get(execution.id);
    // Forgotten until this write commits: a write that fails (alone or with its group) leaves nothing to compare with.
    this.written.delete(execution.id);
    const before = known?.resourceVersion === expected ? known.runs : undefined;
    const runs = execution.taskRunList.length > RUNS_PER_TURN ? await changedRunsInTurns(execution.taskRunList, before)
      : changedRuns(execution.taskRunList, before);
    await this.group.submit(() => {
      const current = this.stmts.current.get(execution.id) as { seq: number; resource_version: number; labels: string } | undefined;
      if (!current) throw new Error(`Execution '${execution.id}' not found`);
      if (current.resource_version !== expected) {
        throw new ConflictError(
          `Execution '${execution.id}' was modified: resourceVersion is ${current.resource_version}, expected ${expected}`);
      }
      this.stmts.update.run({ ...row, rv: resourceVersion, seq: current.seq });
      this.stmts.updateBody.run(row.body, current.seq);
      this.writeRuns(current.seq, runs);
      if (current.labels !== row.labels) {
        this.stmts.deleteLabels.run(current.seq);
        this.writeLabels(current.seq, execution.labels);
      }
      for (const seq of ackCommands) this.stmts.ackCommand.run(seq, execution.id);
    }, () => this.committed('MODIFIED', execution.id, row, runs, resourceVersion));
    return { execution, resourceVersion };
  }

  /** Removes an execution (its body and labels cascade) and its pending commands. */
  async delete(id: string): Promise<boolean> {
    this.written.delete(id);
    return this.db.transaction(() => {
      this.stmts.deleteCommands.run(id);
      return this.stmts.delete.run(id).changes > 0;
    }).immediate();
  }

  /** Filters and sorts the compact summary rows, then reads the bodies of the returned page only. */
  async search(query: ExecutionQuery): Promise<Page<Execution>> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (query.namespace) where.push(namespaceClause('namespace', query.namespace, params));
    if (query.flowId) { where.push('flow_id = ?'); params.push(query.flowId); }
    if (query.state?.length) { where.push('state IN (SELECT value FROM json_each(?))'); params.push(JSON.stringify(query.state)); }
    for (const [key, value] of Object.entries(query.labels ?? {})) {
      where.push('seq IN (SELECT seq FROM execution_labels WHERE key = ? AND value = ?)');
      params.push(key, value);
    }
    if (query.startDate) { where.push('start_date >= ?'); params.push(normalizeDate(query.startDate)); }
    if (query.endDate) { where.push('start_date <= ?'); params.push(normalizeDate(query.endDate)); }
    if (query.filters?.length) where.push(...filtersSql(query.filters, FILTER_TARGET, sqliteDialect(params)));
    const filter = `FROM executions${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
    const total = (this.dynamic.get(`SELECT count(*) AS n ${filter}`).get(...params) as { n: number }).n;
    const pageParams = [...params];
    const sql = `SELECT b.seq, b.body FROM (SELECT seq, start_date ${filter} ORDER BY start_date DESC, seq DESC
      ${pageClause(query, pageParams)}) p JOIN execution_bodies b ON b.seq = p.seq ORDER BY p.start_date DESC, p.seq DESC`;
    const rows = this.dynamic.get(sql).all(...pageParams) as { seq: number; body: string }[];
    return { results: rows.map((r) => this.assemble(r.seq, r.body)), total };
  }

  /** A record whose body no longer parses is left out (and reported): one bad row must not stop recovery of the others. */
  async listActive(): Promise<StoredExecution[]> {
    const rows = this.stmts.active.all(ACTIVE_STATES) as { seq: number; id: string; body: string; resource_version: number }[];
    return rows.flatMap((r) => {
      try {
        return [{ execution: this.assemble(r.seq, r.body), resourceVersion: r.resource_version }];
      } catch (err) {
        console.error(`[store] execution ${r.id}: its stored record is not valid JSON, left out of recovery: ${(err as Error).message}`);
        return [];
      }
    });
  }

  /**
   * Read from the columns and two fields of the body (which holds no task run), never the task runs. A record whose
   * body does not parse is left out (and reported), as listActive leaves it out.
   */
  async listActiveSummaries(): Promise<ExecutionSummary[]> {
    type Row = Omit<ExecutionSummary, 'flowRevision' | 'startDate'> & { valid: number; flowRevision: number | null; startDate: string | null };
    return (this.stmts.activeSummaries.all(ACTIVE_STATES) as Row[]).flatMap(({ valid, flowRevision, startDate, ...r }) => {
      if (!valid) {
        console.error(`[store] execution ${r.id}: its stored record is not valid JSON, left out of recovery`);
        return [];
      }
      return [{ ...r, ...(flowRevision !== null ? { flowRevision } : {}), startDate: startDate ?? '' }];
    });
  }

  async count(namespace: string, flowId: string, states: ExecutionState[]): Promise<number> {
    return (this.stmts.count.get(namespace, flowId, JSON.stringify(states)) as { n: number }).n;
  }

  /**
   * GROUP BY day and state over the summary columns (the executions_daily index covers start date, state and end
   * date; a namespace or flow narrows through executions_flow): no body is read.
   */
  async dailyStats(query: DailyStatsQuery): Promise<DailyStatsRow[]> {
    const params: unknown[] = [normalizeDate(query.startDate), normalizeDate(query.endDate)];
    const where = ['start_date >= ?', 'start_date <= ?'];
    if (query.namespace) where.push(namespaceClause('namespace', query.namespace, params));
    if (query.flowId) { where.push('flow_id = ?'); params.push(query.flowId); }
    if (query.filters?.length) where.push(...filtersSql(query.filters, FILTER_TARGET, sqliteDialect(params)));
    const sql = `SELECT day, state, count(*) AS count, count(ms) AS ended, coalesce(min(ms), 0) AS durationMinMs,
        coalesce(max(ms), 0) AS durationMaxMs, coalesce(sum(ms), 0) AS durationSumMs
      FROM (SELECT substr(start_date, 1, 10) AS day, state,
          CASE WHEN end_date IS NULL THEN NULL ELSE max(0, round((julianday(end_date) - julianday(start_date)) * 86400000)) END AS ms
        FROM executions WHERE ${where.join(' AND ')})
      GROUP BY day, state ORDER BY day, state`;
    return this.dynamic.get(sql).all(...params) as DailyStatsRow[];
  }

  async addCommand(executionId: string, command: ExecutionCommand): Promise<PendingCommand> {
    const created = new Date().toISOString();
    const { seq } = this.stmts.addCommand.get(executionId, JSON.stringify(command), created) as { seq: number };
    const pending: PendingCommand = { seq, executionId, command, created };
    this.commands.emit(pending);
    return pending;
  }

  async pendingCommands(executionId?: string): Promise<PendingCommand[]> {
    const rows = (executionId === undefined ? this.stmts.allCommands.all() : this.stmts.commandsOf.all(executionId)) as CommandRow[];
    return rows.map(toCommand);
  }

  watch(listener: (event: WatchEvent) => void): () => void {
    return this.changes.subscribe(listener);
  }

  onCommand(listener: (command: PendingCommand) => void): () => void {
    return this.commands.subscribe(listener);
  }

  private writeLabels(seq: number, labels: Label[] | undefined): void {
    for (const label of labels ?? []) this.stmts.insertLabel.run(seq, label.key, String(label.value));
  }

  /** Writes the run rows `runs` holds (changedRuns) and drops rows past the end of the list. */
  private writeRuns(seq: number, runs: RunWrites): void {
    // Many rows per statement (a statement per row costs more than the row): the largest that fits, then smaller ones.
    const { rows } = runs;
    let at = 0;
    PUT_RUN_ROWS.forEach((n, k) => {
      const stmt = this.stmts.putRuns[k]!;
      for (; rows.length - at >= n; at += n) {
        const params: unknown[] = [];
        for (let j = at; j < at + n; j++) params.push(seq, rows[j]![0], rows[j]![1]);
        stmt.run(...params);
      }
    });
    if (runs.trimAt !== undefined) this.stmts.trimRuns.run(seq, runs.trimAt);
  }

  /**
   * After the group holding the write committed: keeps the runs just written for the next update's comparison (none
   * once the execution ended: nothing follows), counts the bytes, and tells the listeners. They get the body as written
   * and the run list (a frozen array of the frozen runs), so a caller changing its record afterwards changes nothing
   * they saw, and no run is copied, serialised or parsed per event.
   */
  private committed(type: WatchEvent['type'], id: string, row: ReturnType<typeof columns>, runs: RunWrites, resourceVersion: number): void {
    if (!isTerminal(row.state as ExecutionState)) this.written.set(id, { resourceVersion, runs: runs.list });
    this.writeStats.bytes += row.body.length + runs.bytes;
    this.writeStats.runRows += runs.rows.length;
    if (type === 'MODIFIED') this.writeStats.updates++;
    if (this.changes.size === 0) return;
    const execution = JSON.parse(row.body) as Execution;
    execution.taskRunList = runs.list;
    this.changes.emit({ type, execution, resourceVersion });
  }

  /** A stored record from its body and its task-run rows. */
  private assemble(seq: number, body: string): Execution {
    const execution = JSON.parse(body) as Execution;
    execution.taskRunList = (this.stmts.runsOf.all(seq) as string[]).map((r) => JSON.parse(r) as TaskRun);
    return execution;
  }

}
