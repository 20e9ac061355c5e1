// Durable batch-job records on SQLite (WAL): one row per job and one per input item. Every item outcome is
// committed once (PENDING -> DONE/FAILED in one transaction with the job's counters), so a worker that
// crashes and restarts resumes with the items still PENDING and never writes a finished item again.
// No access token is stored in clear: jobs keep a keyed hash of it and their bucket folder sealed (AES-GCM) until
// they end; migration 1 converts rows of older versions.
import Database from 'better-sqlite3';
import { chmodSync, existsSync } from 'node:fs';

/**
 * The lifecycle a caller can follow (OpenAI Batch's, in the contract's upper case): QUEUED -> VALIDATING (bucket,
 * model and inputs checked before any generation) -> IN_PROGRESS -> FINALIZING (result files written) -> SUCCESS or
 * FAILED; a cancel goes through CANCELLING to CANCELLED, a job past its completion window ends EXPIRED.
 */
export type JobState = 'QUEUED' | 'VALIDATING' | 'IN_PROGRESS' | 'FINALIZING' | 'CANCELLING' | 'SUCCESS' | 'FAILED' | 'CANCELLED' | 'EXPIRED';
export type FinalState = 'SUCCESS' | 'FAILED' | 'CANCELLED' | 'EXPIRED';
export const FINAL_STATES: readonly JobState[] = ['SUCCESS', 'FAILED', 'CANCELLED', 'EXPIRED'];
const ACTIVE = `('QUEUED','VALIDATING','IN_PROGRESS','FINALIZING','CANCELLING')`;

/** The contract's `status` of a state: QUEUED, RUNNING, then SUCCESS, or FAILED for every other end (callers poll for those two). */
export function contractStatus(state: JobState): 'QUEUED' | 'RUNNING' | 'SUCCESS' | 'FAILED' {
  if (state === 'QUEUED') return 'QUEUED';
  if (state === 'SUCCESS') return 'SUCCESS';
  return FINAL_STATES.includes(state) ? 'FAILED' : 'RUNNING';
}

/** The error of a job whose completion window ended before it started. */
export const EXPIRED_BEFORE_START = 'the completion window ended before the job started; nothing was generated';

export type ItemStatus = 'PENDING' | 'DONE' | 'FAILED';

export interface JobRow {
  id: string; token_hash: string; idempotency_key: string | null; request_hash: string; request: string;
  /** `<token>/<session>` sealed with the service key (additional data: the job id); null once the job ended. */
  folder_sealed: string | null;
  session: string;
  status: JobState; total: number | null; done: number; failed: number;
  prompt_tokens: number; completion_tokens: number;
  /** Stem of the result files' names inside the folder (`result-<time>-<id>`, `~`-prefixed as needed), fixed before the first write. */
  result_stem: string | null;
  /** Name of the final JSON document inside the folder (the stem plus `.json`). */
  result_file: string | null;
  error: string | null; backend: string | null; model_file: string | null;
  created: string; started: string | null; finished: string | null; expires_at: string;
  cancel_requested: number;
}

export interface ItemRow {
  job_id: string; idx: number; custom_id: string; input: string; status: ItemStatus; output: string | null; error: string | null;
  prompt_tokens: number; completion_tokens: number; attempts: number; writes: number; finished: string | null;
  /** Number of the partial JSONL file this outcome was flushed to (null: not yet). */
  part: number | null;
}

export interface ItemOutcome { status: 'DONE' | 'FAILED'; output?: unknown; error?: string; promptTokens: number; completionTokens: number }

/** Keyed hash and sealing of the secrets a job row would otherwise hold (operator/secrets SecretBox). */
export interface RowSecrets {
  /** Keyed hash (hex) of an access token. */
  tokenHash(token: string): string;
  /** Keyed hash (hex) of the unkeyed SHA-256 an older version stored (migration). */
  rehash(sha256Hex: string): string;
  seal(clear: string, jobId: string): string;
}

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

/** Version 1: lifecycle states, keyed token hashes, sealed folders, result stems, completion windows, partial files. */
const MIGRATION_1 = `
ALTER TABLE jobs ADD COLUMN folder_sealed TEXT;
ALTER TABLE jobs ADD COLUMN session TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN result_stem TEXT;
ALTER TABLE jobs ADD COLUMN result_file TEXT;
ALTER TABLE jobs ADD COLUMN model_file TEXT;
ALTER TABLE jobs ADD COLUMN expires_at TEXT NOT NULL DEFAULT '9999-12-31T00:00:00.000Z';
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN custom_id TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN part INTEGER;
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs(token_hash, created, id);
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs(finished) WHERE finished IS NOT NULL;`;

const STATUS_COLUMNS = 'id, token_hash, idempotency_key, request_hash, folder_sealed, session, status, total, done, failed, ' +
  'prompt_tokens, completion_tokens, result_stem, result_file, error, backend, model_file, created, started, finished, expires_at, cancel_requested';

const now = (): string => new Date().toISOString();

export type JobSummary = Omit<JobRow, 'request'>;

export class JobStore {
  readonly db: Database.Database;
  /** Prepared once per SQL text: preparing costs more than running these one-row statements (hot on polls and item commits). */
  private statements = new Map<string, Database.Statement>();

  constructor(path: string, secrets: RowSecrets) {
    const fresh = !existsSync(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    if (fresh) chmodSync(path, 0o600);
    this.migrate(secrets);
  }

  private migrate(secrets: RowSecrets): void {
    if ((this.db.pragma('user_version', { simple: true }) as number) >= 1) return;
    this.db.transaction(() => {
      this.db.exec(MIGRATION_1);
      type Old = { id: string; token_hash: string; folder: string; status: string; result_key: string | null; created: string };
      const rows = this.db.prepare('SELECT id, token_hash, folder, status, result_key, created FROM jobs').all() as Old[];
      const upd = this.db.prepare(`UPDATE jobs SET token_hash = ?, folder = '', folder_sealed = ?, session = ?, status = ?,
        result_file = ?, result_stem = ?, result_key = NULL WHERE id = ?`);
      for (const r of rows) {
        const active = r.status === 'QUEUED' || r.status === 'RUNNING';
        const file = r.result_key ? r.result_key.slice(r.folder.length + 1) : null;
        upd.run(secrets.rehash(r.token_hash), active ? secrets.seal(r.folder, r.id) : null, r.folder.slice(r.folder.indexOf('/') + 1),
          r.status === 'RUNNING' ? 'IN_PROGRESS' : r.status, file, file ? file.replace(/\.json$/, '') : null, r.id);
      }
      this.db.prepare(`UPDATE items SET custom_id = CAST(idx AS TEXT)`).run();
      this.db.pragma('user_version = 1');
    })();
    // The rows of before hold tokens in clear: their pages leave the main file now, not at some later checkpoint.
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  private sql(text: string): Database.Statement {
    let st = this.statements.get(text);
    if (!st) { st = this.db.prepare(text); this.statements.set(text, st); }
    return st;
  }

  /** Inserts the job unless the same token already used this idempotency key; returns the stored row. */
  create(job: Pick<JobRow, 'id' | 'token_hash' | 'idempotency_key' | 'request_hash' | 'request' | 'folder_sealed' | 'session' | 'created' | 'expires_at'>): { row: JobRow; created: boolean } {
    return this.db.transaction(() => {
      if (job.idempotency_key) {
        const prior = this.sql('SELECT * FROM jobs WHERE token_hash = ? AND idempotency_key = ?')
          .get(job.token_hash, job.idempotency_key) as JobRow | undefined;
        if (prior) return { row: prior, created: false };
      }
      this.sql(`INSERT INTO jobs (id, token_hash, idempotency_key, request_hash, request, folder, folder_sealed, session, status, created, expires_at)
        VALUES (@id, @token_hash, @idempotency_key, @request_hash, @request, '', @folder_sealed, @session, 'QUEUED', @created, @expires_at)`)
        .run(job);
      return { row: this.get(job.id)!, created: true };
    })();
  }

  get(id: string): JobRow | undefined {
    return this.sql('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  }

  /** The job without its request text (which holds every list input): what a status poll needs. */
  status(id: string): JobSummary | undefined {
    return this.sql(`SELECT ${STATUS_COLUMNS} FROM jobs WHERE id = ?`).get(id) as JobSummary | undefined;
  }

  /** The stored request text of a job. */
  request(id: string): string | undefined {
    return (this.sql('SELECT request FROM jobs WHERE id = ?').get(id) as { request: string } | undefined)?.request;
  }

  /** A page of one owner's jobs, newest first; `after` is the id of the last job of the previous page. */
  list(tokenHash: string, limit: number, after?: string): { jobs: JobSummary[]; hasMore: boolean } {
    const anchor = after ? this.sql('SELECT created, id FROM jobs WHERE id = ? AND token_hash = ?').get(after, tokenHash) as { created: string; id: string } | undefined : undefined;
    const rows = (anchor
      ? this.sql(`SELECT ${STATUS_COLUMNS} FROM jobs WHERE token_hash = ? AND (created < ? OR (created = ? AND id < ?))
          ORDER BY created DESC, id DESC LIMIT ?`).all(tokenHash, anchor.created, anchor.created, anchor.id, limit + 1)
      : this.sql(`SELECT ${STATUS_COLUMNS} FROM jobs WHERE token_hash = ? ORDER BY created DESC, id DESC LIMIT ?`).all(tokenHash, limit + 1)) as JobSummary[];
    return { jobs: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** The oldest unfinished job not in `exclude` (started ones first: they were interrupted). */
  nextRunnable(exclude: ReadonlySet<string> = new Set()): JobRow | undefined {
    const rows = this.sql(`SELECT * FROM jobs WHERE status IN ${ACTIVE}
      ORDER BY CASE status WHEN 'QUEUED' THEN 1 ELSE 0 END, created, id LIMIT ?`).all(exclude.size + 1) as JobRow[];
    return rows.find((r) => !exclude.has(r.id));
  }

  /** Moves an unfinished job to `state` (never out of CANCELLING except to its end). */
  setState(id: string, state: 'VALIDATING' | 'IN_PROGRESS' | 'FINALIZING' | 'CANCELLING'): void {
    this.sql(`UPDATE jobs SET status = CASE WHEN status = 'CANCELLING' THEN status ELSE ? END,
        started = COALESCE(started, ?) WHERE id = ? AND status IN ${ACTIVE}`)
      .run(state, now(), id);
  }

  /** Records which backend and model file run the job. */
  setBackend(id: string, backend: string, modelFile: string): void {
    this.sql('UPDATE jobs SET backend = ?, model_file = ? WHERE id = ?').run(backend, modelFile, id);
  }

  /** Marks a cancel; returns the job's state after it (QUEUED jobs end CANCELLED at once), undefined when final already. */
  requestCancel(id: string): JobState | undefined {
    return this.db.transaction(() => {
      const j = this.status(id);
      if (!j || FINAL_STATES.includes(j.status)) return undefined;
      this.sql('UPDATE jobs SET cancel_requested = 1 WHERE id = ?').run(id);
      if (j.status === 'QUEUED' && j.total === null) {
        this.finish(id, 'CANCELLED', 'cancelled by its owner before it started');
        return 'CANCELLED';
      }
      this.setState(id, 'CANCELLING');
      return 'CANCELLING';
    })();
  }

  cancelRequested(id: string): boolean {
    return (this.sql('SELECT cancel_requested FROM jobs WHERE id = ?').get(id) as { cancel_requested: number } | undefined)?.cancel_requested === 1;
  }

  /** Stores the job's inputs once; a second call (after a restart) keeps the first list. */
  insertItems(id: string, inputs: unknown[]): void {
    this.db.transaction(() => {
      const j = this.get(id);
      if (!j || j.total !== null) return;
      const ins = this.sql(`INSERT INTO items (job_id, idx, custom_id, input, status) VALUES (?, ?, ?, ?, 'PENDING')`);
      inputs.forEach((input, idx) => ins.run(id, idx, customIdOf(input, idx), JSON.stringify(input ?? null)));
      this.sql('UPDATE jobs SET total = ? WHERE id = ?').run(inputs.length, id);
    })();
  }

  pendingItems(id: string): ItemRow[] {
    return this.sql(`SELECT * FROM items WHERE job_id = ? AND status = 'PENDING' ORDER BY idx`).all(id) as ItemRow[];
  }

  items(id: string): ItemRow[] {
    return this.sql('SELECT * FROM items WHERE job_id = ? ORDER BY idx').all(id) as ItemRow[];
  }

  /** Finished items not yet in a partial file, and the number the next partial file takes. */
  unflushed(id: string): { items: ItemRow[]; part: number } {
    const items = this.sql(`SELECT * FROM items WHERE job_id = ? AND status != 'PENDING' AND part IS NULL ORDER BY idx`).all(id) as ItemRow[];
    const max = (this.sql('SELECT MAX(part) AS m FROM items WHERE job_id = ?').get(id) as { m: number | null }).m;
    return { items, part: (max ?? 0) + 1 };
  }

  /** Records that `idxs` were written to partial file `part`. */
  markFlushed(id: string, idxs: number[], part: number): void {
    const st = this.sql('UPDATE items SET part = ? WHERE job_id = ? AND idx = ?');
    this.db.transaction(() => { for (const i of idxs) st.run(part, id, i); })();
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

  /** Fixes the result files' stem once; later calls return the first one (so a resumed job rewrites the same objects). */
  resultStem(id: string, proposed: { stem: string; file: string }): { stem: string; file: string } {
    this.sql('UPDATE jobs SET result_stem = ?, result_file = ? WHERE id = ? AND result_stem IS NULL').run(proposed.stem, proposed.file, id);
    const j = this.status(id)!;
    return { stem: j.result_stem!, file: j.result_file! };
  }

  /** Ends an unfinished job and forgets its sealed folder. */
  finish(id: string, state: FinalState, error?: string): void {
    this.sql(`UPDATE jobs SET status = ?, error = ?, finished = ?, folder_sealed = NULL WHERE id = ? AND status IN ${ACTIVE}`)
      .run(state, error ?? null, now(), id);
  }

  /** Ends QUEUED jobs that never started and whose completion window is over (the worker may be busy elsewhere). */
  expireQueued(now: string): number {
    return this.sql(`UPDATE jobs SET status = 'EXPIRED', finished = ?, folder_sealed = NULL,
        error = ? WHERE status = 'QUEUED' AND total IS NULL AND expires_at <= ?`).run(now, EXPIRED_BEFORE_START, now).changes;
  }

  /** Deletes jobs (and their items) that ended before `before` (ISO time); returns how many. */
  purgeFinished(before: string): number {
    return this.db.transaction(() => {
      const ids = (this.sql('SELECT id FROM jobs WHERE finished IS NOT NULL AND finished < ?').all(before) as { id: string }[]).map((r) => r.id);
      const di = this.sql('DELETE FROM items WHERE job_id = ?');
      const dj = this.sql('DELETE FROM jobs WHERE id = ?');
      for (const id of ids) { di.run(id); dj.run(id); }
      return ids.length;
    })();
  }

  close(): void { this.db.close(); }
}

/** The input's own `custom_id` (a non-empty string, as in OpenAI's batch input lines), else its index. */
export function customIdOf(input: unknown, idx: number): string {
  const c = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>).custom_id : undefined;
  return typeof c === 'string' && c.length > 0 && c.length <= 256 ? c : String(idx);
}
