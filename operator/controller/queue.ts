// Keyed serial queue: work for one key (an execution, a flow) runs one batch at a time, in arrival order; events that
// pile up while a batch runs are handed over together (up to `maxBatch`) so the handler can apply them and write once. A key's work
// starts on the next turn of the event loop (setImmediate) and yields one turn between batches: every event that
// arrives meanwhile (task results of a fan-out, each from its own I/O or timer callback) joins the next batch, and
// other work (HTTP requests, other keys) runs in between. A batch that fails with a transient error is kept and handed
// over again (with what arrived meanwhile) after a capped backoff that grows per key and resets on success; other errors
// go to `onError` with the batch. A transient failure other than a write conflict (a locked or unreachable store) holds
// every key until its backoff ends: the store is as unavailable to them, and each synchronous SQLite write that meets
// another process's lock blocks the event loop for its busy timeout, so only one write a backoff tries it.
import { backoff, isTransient, reasonOf } from '../faults.js';
import { ConflictError } from '../store/types.js';

export interface KeyedQueueOptions<E> {
  /** Which failures are retried (default: `isTransient`). */
  transient?: (err: unknown) => boolean;
  /** Delay before retry `n` (0-based) of a key (default: 50 ms doubling up to 10 s, jittered). */
  delay?: (n: number) => number;
  /** The batch to hand over again after a transient failure (default: the same events). */
  retryWith?: (key: string, events: E[]) => E[];
  /** Events handed over in one batch at most (default: all that piled up); the rest follow in the next batches. */
  maxBatch?: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class KeyedQueue<E> {
  private pending = new Map<string, E[]>();
  /** Keys whose drain is scheduled or running. */
  private active = new Set<string>();
  /** Keys waiting out a backoff after a transient failure, with the retry timer. */
  private parked = new Map<string, NodeJS.Timeout>();
  /** Failures in a row per key. */
  private failures = new Map<string, number>();
  /** Until when (epoch ms) every key waits after a store-wide transient failure. */
  private holdUntil = 0;
  private idle: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly handler: (key: string, events: E[]) => Promise<void>,
    private readonly onError: (key: string, err: unknown, events: E[]) => void,
    private readonly opts: KeyedQueueOptions<E> = {},
  ) {}

  push(key: string, event: E): void {
    if (this.closed) return;
    const list = this.pending.get(key);
    if (list) list.push(event); else this.pending.set(key, [event]);
    if (!this.parked.has(key)) this.schedule(key);
  }

  /** Whether the key has work queued, running or waiting for a retry. */
  has(key: string): boolean { return this.active.has(key) || this.pending.has(key) || this.parked.has(key); }

  /** Failures in a row of a key (0 after a success). */
  failuresOf(key: string): number { return this.failures.get(key) ?? 0; }

  private schedule(key: string): void {
    if (this.active.has(key)) return;
    this.active.add(key);
    setImmediate(() => void this.drain(key));
  }

  private async drain(key: string): Promise<void> {
    try {
      for (;;) {
        const events = this.pending.get(key);
        if (!events?.length || this.closed) break;
        const held = this.holdUntil - Date.now();
        if (held > 0) { this.park(key, held); break; }
        const max = this.opts.maxBatch ?? Infinity;
        if (events.length > max) this.pending.set(key, events.splice(max));
        else this.pending.delete(key);
        try {
          await this.handler(key, events);
          this.failures.delete(key);
        } catch (err) {
          if (!this.closed && (this.opts.transient ?? isTransient)(err)) { this.retryLater(key, events, err); break; }
          this.failures.delete(key);
          try { this.onError(key, err, events); } catch (e) { console.error(`[queue] ${key}: error handler failed:`, e); }
        }
        await nextTurn();
      }
    } finally {
      this.active.delete(key);
      this.notifyIdle();
    }
  }

  private retryLater(key: string, events: E[], err: unknown): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const again = this.opts.retryWith?.(key, events) ?? events;
    this.pending.set(key, [...again, ...(this.pending.get(key) ?? [])]);
    // A first conflict is replayed at once on the fresh record (as before this queue retried anything else).
    const wait = this.opts.delay?.(n) ?? (err instanceof ConflictError && n === 0 ? 0 : backoff(n, { baseMs: 50, maxMs: 10_000 }));
    // A write conflict is the store's optimistic concurrency at work (replayed at once, routine in cluster mode): worth
    // a line only when it keeps happening. Other transient failures are reported the first time and every tenth.
    const routine = err instanceof ConflictError && n < 3;
    if (!routine && (n === 0 || n === 3 || n % 10 === 0)) console.warn(`[queue] ${key}: transient failure ${n + 1}, retrying in ${wait} ms: ${reasonOf(err)}`);
    if (!(err instanceof ConflictError)) this.holdUntil = Math.max(this.holdUntil, Date.now() + wait);
    this.park(key, wait);
  }

  /** The key waits `ms`, then drains again. */
  private park(key: string, ms: number): void {
    if (this.parked.has(key)) return;
    this.parked.set(key, setTimeout(() => {
      this.parked.delete(key);
      this.schedule(key);
    }, ms));
  }

  /** Keys with work (queued, running or waiting for a retry). */
  get size(): number {
    let n = this.active.size;
    for (const key of this.pending.keys()) if (!this.active.has(key)) n++;
    return n;
  }

  /** Resolves when no key has work, retries waiting out their backoff included (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.active.size === 0 && this.parked.size === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }

  /** Stops taking and retrying work; resolves when the running batches are done. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.parked.values()) clearTimeout(t);
    this.parked.clear();
    this.pending.clear();
    this.notifyIdle();
    await this.whenIdle();
  }

  private notifyIdle(): void {
    if (this.active.size === 0 && this.parked.size === 0) for (const f of this.idle.splice(0)) f();
  }
}
