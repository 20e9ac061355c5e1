// Durable batch-job records on SQLite (WAL): one row per job and one per input item. Every item outcome is
// committed once (PENDING -> DONE/FAILED in one transaction with the job's counters), so a worker that
// crashes and restarts resumes with the items still PENDING and never writes a finished item again.
import Database from 'better-sqlite3';
import { chmodSync, existsSync } from 'node:fs';

export type JobStatus = 'QUEUED' | 'RUNNING' | 'SUCCESS' | 'FAILED';
export type ItemStatus = 'PENDING' | 'DONE' | 'FAILED';

export interface JobRow {
  id: string; token_hash: string; idempotency_key: string | null; request_hash: string; request: string;
  folder: string; status: JobStatus; total: number | null; done: number; failed: number;
  prompt_tokens: number; completion_tokens: number; result_key: string | null; error: string | null;
  backend: string | null; created: string; started: string | null; finished: string | null;
}

export interface ItemRow {
  job_id: string; idx: number; input: string; status: ItemStatus; output: string | null; error: string | null;
  prompt_tokens: number; completion_tokens: number; attempts: number; writes: number; finished: string | null;
}

export interface ItemOutcome { status: 'DONE' | 'FAILED'; output?: unknown; error?: string; promptTokens: number; completionTokens: number }

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, idempotency_key TEXT, request_hash TEXT NOT NULL,
  request TEXT NOT NULL, folder TEXT NOT NULL, status TEXT NOT NULL, total INTEGER,
  done INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  result_key TEXT, error TEXT, backend TEXT, created TEXT NOT NULL, started TEXT, finished TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idempotency ON jobs(token_hash, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_active ON jobs(status, created);
CREATE TABLE IF NOT EXISTS items (
  job_id TEXT NOT NULL, idx INTEGER NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
  output TEXT, error TEXT, prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0, writes INTEGER NOT NULL DEFAULT 0, finished TEXT,
  PRIMARY KEY (job_id, idx));`;

const STATUS_COLUMNS = 'id, token_hash, idempotency_key, request_hash, folder, status, total, done, failed, ' +
  'prompt_tokens, completion_tokens, result_key, error, backend, created, started, finished';

const now = (): string => new Date().toISOString();

export class JobStore {
  readonly db: Database.Database;
  /** Prepared once per SQL text: preparing costs more than running these one-row statements (hot on polls and item commits). */
  private statements = new Map<string, Database.Statement>();

  constructor(path: string) {
    const fresh = !existsSync(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    if (fresh) chmodSync(path, 0o600); // job rows hold bucket folders, which start with the caller's token
  }

  private sql(text: string): Database.Statement {
    let st = this.statements.get(text);
    if (!st) { st = this.db.prepare(text); this.statements.set(text, st); }
    return st;
  }

  /** Inserts the job unless the same token already used this idempotency key; returns the stored row. */
  create(job: Pick<JobRow, 'id' | 'token_hash' | 'idempotency_key' | 'request_hash' | 'request' | 'folder'>): { row: JobRow; created: boolean } {
    return this.db.transaction(() => {
      if (job.idempotency_key) {
        const prior = this.sql('SELECT * FROM jobs WHERE token_hash = ? AND idempotency_key = ?')
          .get(job.token_hash, job.idempotency_key) as JobRow | undefined;
        if (prior) return { row: prior, created: false };
      }
      this.sql(`INSERT INTO jobs (id, token_hash, idempotency_key, request_hash, request, folder, status, created)
        VALUES (@id, @token_hash, @idempotency_key, @request_hash, @request, @folder, 'QUEUED', @created)`).run({ ...job, created: now() });
      return { row: this.get(job.id)!, created: true };
    })();
  }

  get(id: string): JobRow | undefined {
    return this.sql('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  }

  /** The job without its request text (which holds every list input): what a status poll needs. */
  status(id: string): Omit<JobRow, 'request'> | undefined {
    return this.sql(`SELECT ${STATUS_COLUMNS} FROM jobs WHERE id = ?`).get(id) as Omit<JobRow, 'request'> | undefined;
  }

  /** The stored request text of a job. */
  request(id: string): string | undefined {
    return (this.sql('SELECT request FROM jobs WHERE id = ?').get(id) as { request: string } | undefined)?.request;
  }

  /** The oldest unfinished job not in `exclude` (RUNNING ones first: they were interrupted). */
  nextRunnable(exclude: ReadonlySet<string> = new Set()): JobRow | undefined {
    const rows = this.sql(`SELECT * FROM jobs WHERE status IN ('QUEUED','RUNNING')
      ORDER BY CASE status WHEN 'RUNNING' THEN 0 ELSE 1 END, created, id LIMIT ?`).all(exclude.size + 1) as JobRow[];
    return rows.find((r) => !exclude.has(r.id));
  }

  markRunning(id: string, backend: string): void {
    this.sql(`UPDATE jobs SET status = 'RUNNING', backend = ?, started = COALESCE(started, ?) WHERE id = ? AND status IN ('QUEUED','RUNNING')`)
      .run(backend, now(), id);
  }

  /** Stores the job's inputs once; a second call (after a restart) keeps the first list. */
  insertItems(id: string, inputs: unknown[]): void {
    this.db.transaction(() => {
      const j = this.get(id);
      if (!j || j.total !== null) return;
      const ins = this.sql(`INSERT INTO items (job_id, idx, input, status) VALUES (?, ?, ?, 'PENDING')`);
      inputs.forEach((input, idx) => ins.run(id, idx, JSON.stringify(input ?? null)));
      this.sql('UPDATE jobs SET total = ? WHERE id = ?').run(inputs.length, id);
    })();
  }

  pendingItems(id: string): ItemRow[] {
    return this.sql(`SELECT * FROM items WHERE job_id = ? AND status = 'PENDING' ORDER BY idx`).all(id) as ItemRow[];
  }

  items(id: string): ItemRow[] {
    return this.sql('SELECT * FROM items WHERE job_id = ? ORDER BY idx').all(id) as ItemRow[];
  }

  /** Counts a generation attempt of an item (visible in results, used to prove resumes redo nothing finished). */
  startItem(id: string, idx: number): void {
    this.sql('UPDATE items SET attempts = attempts + 1 WHERE job_id = ? AND idx = ?').run(id, idx);
  }

  /** Commits one item outcome exactly once; returns false when it was already final. */
  finishItem(id: string, idx: number, o: ItemOutcome): boolean {
    return this.db.transaction(() => {
      const r = this.sql(`UPDATE items SET status = ?, output = ?, error = ?, prompt_tokens = ?, completion_tokens = ?,
          writes = writes + 1, finished = ? WHERE job_id = ? AND idx = ? AND status = 'PENDING'`)
        .run(o.status, o.output === undefined ? null : JSON.stringify(o.output), o.error ?? null,
          o.promptTokens, o.completionTokens, now(), id, idx);
      if (r.changes !== 1) return false;
      this.sql(`UPDATE jobs SET done = done + ?, failed = failed + ?, prompt_tokens = prompt_tokens + ?,
          completion_tokens = completion_tokens + ? WHERE id = ?`)
        .run(o.status === 'DONE' ? 1 : 0, o.status === 'FAILED' ? 1 : 0, o.promptTokens, o.completionTokens, id);
      return true;
    })();
  }

  /** Fixes the result key once; later calls return the first one (so a resumed job rewrites the same object). */
  resultKey(id: string, proposed: string): string {
    this.sql('UPDATE jobs SET result_key = ? WHERE id = ? AND result_key IS NULL').run(proposed, id);
    return this.get(id)!.result_key!;
  }

  finish(id: string, status: 'SUCCESS' | 'FAILED', error?: string): void {
    this.sql(`UPDATE jobs SET status = ?, error = ?, finished = ? WHERE id = ? AND status IN ('QUEUED','RUNNING')`)
      .run(status, error ?? null, now(), id);
  }

  close(): void { this.db.close(); }
}
