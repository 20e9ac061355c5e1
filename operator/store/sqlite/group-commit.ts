// Group commit for the embedded store: writes asked for in the same turn of the event loop (many executions created by
// concurrent API calls, many executions' steps written by the controller) are committed in ONE SQLite transaction on
// the next turn, each in its own savepoint. The cost of a commit (the WAL append, the lock) is shared by the group.
// Each caller's promise settles only after the commit: a write is durable before anyone hears of it, as before. A
// write that fails on its own (a stale resourceVersion, a missing record) is rolled back alone and rejects alone;
// a failure of the transaction itself (another process holds the lock: SQLITE_BUSY) rejects the whole group, whose
// callers retry (transient) as they did one write at a time.
import type { Db } from './db.js';

interface Pending<T> {
  write: () => T;
  after: (value: T) => void;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

/** SQLite's own failures (other than a constraint of one write): the transaction as a whole cannot go on. */
const failsGroup = (err: unknown): boolean => {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') && !code.startsWith('SQLITE_CONSTRAINT');
};

export class GroupCommit {
  private pending: Pending<any>[] = [];
  private scheduled = false;
  /** Transactions committed and writes in them (tests, metrics). */
  readonly stats = { commits: 0, writes: 0 };

  constructor(private readonly db: Db) {}

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
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      this.db.transaction(() => {
        for (const p of group) {
          try {
            // A nested transaction is a savepoint: a write that throws leaves nothing behind, the others stay.
            outcomes.push({ ok: true, value: this.db.transaction(p.write)() });
          } catch (err) {
            if (failsGroup(err)) throw err;
            outcomes.push({ ok: false, err });
          }
        }
      }).immediate();
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    this.stats.commits++;
    this.stats.writes += group.length;
    group.forEach((p, i) => {
      const o = outcomes[i]!;
      if (!o.ok) { p.reject(o.err); return; }
      try { p.after(o.value); } catch (err) { console.error('[store] change listener failed:', err); }
      p.resolve(o.value);
    });
  }
}
