// The periodic resync: every interval, the store's active executions not processed within it are handed back to the
// controller to re-derive their work from the record (timers, running attempts, child executions), and commands left
// pending that long are delivered again; so a lost wake-up only delays. Recovery after a restart is one resync of all.
import { backoff, reasonOf } from '../faults.js';
import type { ExecutionSummary, PendingCommand, Stores } from '../store/types.js';

export interface ResyncHooks {
  /** Whether the execution has work queued or running already (it needs no resync). */
  busy(executionId: string): boolean;
  /**
   * Hands the execution over to re-derive its work (or, when owned elsewhere, to decide its start): its summary, the
   * record is loaded by whoever processes it (a pass reads no task run: a 100,000-run record took ~0.7 s to read).
   */
  resync(execution: ExecutionSummary): void;
  /** Delivers a pending command again. */
  command(c: PendingCommand): void;
}

export class Resync {
  /** When each execution was last processed (ms): it is skipped until the interval has passed. */
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly stores: Stores, readonly intervalMs: number, private readonly hooks: ResyncHooks) {}

  processed(executionId: string): void { this.seen.set(executionId, Date.now()); }

  /** Executions remembered as processed within the interval (tests: the memory is bounded by it). */
  get remembered(): number { return this.seen.size; }

  forget(executionId: string): void { this.seen.delete(executionId); }

  /** Recovers everything, then resyncs every interval (sooner, with a backoff, while the store cannot be listed). */
  async start(): Promise<void> {
    this.schedule(await this.run(true) ? 0 : 1);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One pass; `all` (recovery) ignores recency; `only` limits it to some executions. False when the store could not be listed. */
  async run(all = false, only: (executionId: string) => boolean = () => true): Promise<boolean> {
    const cutoff = Date.now() - this.intervalMs;
    // An entry older than the interval decides nothing an absent one would not: dropped, so executions that ended
    // without being forgotten (or were never listed again) do not grow the map.
    for (const [id, at] of this.seen) if (at <= cutoff) this.seen.delete(id);
    try {
      for (const summary of await this.stores.executions.listActiveSummaries()) {
        const id = summary.id;
        if (this.stopped) return true;
        if (!only(id) || this.hooks.busy(id) || (!all && (this.seen.get(id) ?? 0) > cutoff)) continue;
        this.hooks.resync(summary);
      }
      for (const c of await this.stores.executions.pendingCommands()) {
        if (!only(c.executionId)) continue;
        if (all || (!this.hooks.busy(c.executionId) && Date.parse(c.created) < cutoff)) this.hooks.command(c);
      }
      return true;
    } catch (err) {
      if (!this.stopped) console.error(`[controller] resync: could not list active executions (retried): ${reasonOf(err)}`);
      return false;
    }
  }

  private schedule(failures: number): void {
    if (this.stopped) return;
    const wait = failures === 0 ? this.intervalMs : Math.min(this.intervalMs, backoff(failures - 1, { baseMs: 1000 }));
    this.timer = setTimeout(() => { void this.run().then((ok) => this.schedule(ok ? 0 : failures + 1)); }, wait);
    this.timer.unref();
  }
}
