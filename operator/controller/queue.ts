// Keyed serial queue: work for one key (an execution, a flow) runs one batch at a time, in arrival order; events that
// pile up while a batch runs are handed over together so the handler can apply them and write once.
export class KeyedQueue<E> {
  private pending = new Map<string, E[]>();
  private running = new Set<string>();
  private idle: (() => void)[] = [];

  constructor(private readonly handler: (key: string, events: E[]) => Promise<void>, private readonly onError: (key: string, err: unknown) => void) {}

  push(key: string, event: E): void {
    const list = this.pending.get(key);
    if (list) list.push(event); else this.pending.set(key, [event]);
    if (!this.running.has(key)) void this.drain(key);
  }

  private async drain(key: string): Promise<void> {
    this.running.add(key);
    try {
      for (;;) {
        const events = this.pending.get(key);
        if (!events?.length) break;
        this.pending.delete(key);
        try { await this.handler(key, events); } catch (err) { this.onError(key, err); }
      }
    } finally {
      this.running.delete(key);
      if (this.running.size === 0) for (const f of this.idle.splice(0)) f();
    }
  }

  get size(): number { return this.running.size + this.pending.size; }

  /** Resolves when no key has work (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.running.size === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }
}
