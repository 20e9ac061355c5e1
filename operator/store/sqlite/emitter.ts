// In-process change feed used by the stores: listeners run after a commit, in commit order, one event at a time.
// A listener that throws is logged and does not affect the store or the other listeners.

export class Emitter<E> {
  private readonly listeners = new Set<(event: E) => void>();
  private readonly queue: E[] = [];
  private draining = false;

  constructor(private readonly name: string) {}

  get size(): number { return this.listeners.size; }

  subscribe(listener: (event: E) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  /**
   * Delivers the event now; an event emitted from inside a listener is queued and delivered after the
   * current one has reached every listener, so all listeners see events in commit order.
   */
  emit(event: E): void {
    this.queue.push(event);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) this.deliver(next);
    } finally {
      this.draining = false;
    }
  }

  private deliver(event: E): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        console.error(`${this.name} listener failed:`, err);
      }
    }
  }
}
