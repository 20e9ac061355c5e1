// Group commit for the embedded store: writes asked for in the same turn of the event loop (many executions created by
// concurrent API calls, many executions' steps written by the controller) are committed in ONE SQLite transaction on
// the next turn, each in its own savepoint. The cost of a commit (the WAL append, the lock) is shared by the group.
// Each caller's promise settles only after the commit: a write is durable before anyone hears of it, as before. A
// write that fails on its own (a stale resourceVersion, a missing record) is rolled back alone and rejects alone;
// a failure of the transaction itself (another process holds the lock: SQLITE_BUSY) rejects the whole group, whose
// callers retry (transient) as they did one write at a time.
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

interface Pending<T> {
  write: () => T;
  after: (value: T) => void;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** SQLite's own failures (other than a constraint of one write): the transaction as a whole cannot go on. */
const failsGroup = (err: unknown): boolean => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT');
};

/** The statements of a group transaction, prepared once per database (better-sqlite3's `transaction()` builds wrappers per call). */
interface TxStatements { begin: Statement; commit: Statement; rollback: Statement; savepoint: Statement; release: Statement; undo: Statement }

export class GroupCommit {
  private pending: Pending<any>[] = [];
  private scheduled = false;
  private readonly tx: TxStatements;
  /** Transactions committed and writes in them (tests, metrics). */
  readonly stats = { commits: 0, writes: 0 };

  constructor(private readonly db: Db) {
    this.tx = {
      begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT group_write'), release: db.prepare('RELEASE group_write'), undo: db.prepare('ROLLBACK TO group_write'),
    };
  }

  /**
   * Runs `write` (synchronous statements) in the next group transaction; once committed, `after` runs (change feeds)
   * and the promise resolves with its result. Writes run in the order asked for.
   */
  submit<T>(write: () => T, after: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, after, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const group = this.pending;
    this.pending = [];
    let outcomes: Outcome[];
    try {
      outcomes = this.commit(group);
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    this.stats.commits++;
    this.stats.writes += group.length;
    for (let i = 0; i < group.length; i++) {
      const p = group[i]!;
      const o = outcomes[i]!;
      if (!o.ok) { p.reject(o.err); continue; }
      try { p.after(o.value); } catch (err) { console.error('[store] change listener failed:', err); }
      p.resolve(o.value);
    }
  }

  /** One IMMEDIATE transaction over the group, each write in a savepoint: what each write returned or threw. */
  private commit(group: Pending<any>[]): Outcome[] {
    const { tx } = this;
    const outcomes: Outcome[] = [];
    tx.begin.run();
    try {
      for (const p of group) {
        // A write that throws is rolled back to its savepoint: it leaves nothing behind, the others stay.
        tx.savepoint.run();
        try {
          outcomes.push({ ok: true, value: p.write() });
          tx.release.run();
        } catch (err) {
          if (failsGroup(err)) throw err;
          tx.undo.run();
          tx.release.run();
          outcomes.push({ ok: false, err });
        }
      }
      tx.commit.run();
    } catch (err) {
      if (this.db.inTransaction) tx.rollback.run();
      throw err;
    }
    return outcomes;
  }
}
