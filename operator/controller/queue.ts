// Keyed serial queue: work for one key (an execution, a flow) runs one batch at a time, in arrival order; events that
// pile up while a batch runs are handed over together so the handler can apply them and write once. A key's work
// starts on the next turn of the event loop (setImmediate) and yields one turn between batches: every event that
// arrives meanwhile (task results of a fan-out, each from its own I/O or timer callback) joins the next batch, and
// other work (HTTP requests, other keys) runs in between instead of waiting for a whole chain of batches.
export class KeyedQueue<E> {
  private pending = new Map<string, E[]>();
  /** Keys whose drain is scheduled or running. */
  private active = new Set<string>();
  private idle: (() => void)[] = [];

  constructor(private readonly handler: (key: string, events: E[]) => Promise<void>, private readonly onError: (key: string, err: unknown) => void) {}

  push(key: string, event: E): void {
    const list = this.pending.get(key);
    if (list) list.push(event); else this.pending.set(key, [event]);
    if (this.active.has(key)) return;
    this.active.add(key);
    setImmediate(() => void this.drain(key));
  }

  private async drain(key: string): Promise<void> {
    try {
      for (;;) {
        const events = this.pending.get(key);
        if (!events?.length) break;
        this.pending.delete(key);
        try { await this.handler(key, events); } catch (err) { this.onError(key, err); }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.active.delete(key);
      if (this.active.size === 0) for (const f of this.idle.splice(0)) f();
    }
  }

  get size(): number { return this.active.size; }

  /** Resolves when no key has work (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.active.size === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }
}
