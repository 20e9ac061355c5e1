// A map bounded by the weight of its values together (and optionally by its number of entries), least recently set
// first out. What keeps the records of active executions within EXECUTION_CACHE_MAX_TASK_RUNS (core/limits.ts), a
// record weighing its task runs: the controller's records between batches and the SQLite store's last written runs.
// The value just set is never the one let go, so one heavier than the bound is still kept (until the next set).

export class WeightedLru<V> {
  private readonly entries = new Map<string, V>();
  private total = 0;

  constructor(private readonly weigh: (value: V) => number, private readonly bound: { maxWeight: number; maxEntries?: number }) {}

  get(key: string): V | undefined { return this.entries.get(key); }

  has(key: string): boolean { return this.entries.has(key); }

  /** Keeps `value` as the most recent, then lets the least recent others go while over a bound; returns their keys. */
  set(key: string, value: V): string[] {
    this.delete(key);
    this.entries.set(key, value);
    this.total += this.weigh(value);
    const { maxWeight, maxEntries = Infinity } = this.bound;
    const letGo: string[] = [];
    for (const other of this.entries.keys()) {
      if (this.total <= maxWeight && this.entries.size <= maxEntries) break;
      if (other === key) continue;
      this.delete(other);
      letGo.push(other);
    }
    return letGo;
  }

  delete(key: string): void {
    if (!this.entries.has(key)) return;
    this.total -= this.weigh(this.entries.get(key)!);
    this.entries.delete(key);
  }

  /** Weight of the values kept, together. */
  get weight(): number { return this.total; }

  get size(): number { return this.entries.size; }
}
