// Timers of the controller: one per distinct (execution, event), re-armed from the execution record at every step and
// at recovery and resync, so no timer is lost in a crash; firing pushes the event to the execution's queue.
export class Timers {
  private timers = new Map<string, { at: number; handle: NodeJS.Timeout }>();

  constructor(private readonly fire: (executionId: string, event: unknown) => void, private readonly clock: () => Date) {}

  arm(executionId: string, at: string, event: unknown): void {
    const key = `${executionId}|${JSON.stringify(event)}`;
    const when = Date.parse(at);
    const existing = this.timers.get(key);
    if (existing && existing.at === when) return;
    if (existing) clearTimeout(existing.handle);
    const delay = Math.max(0, when - this.clock().getTime());
    const handle = setTimeout(() => {
      this.timers.delete(key);
      try { this.fire(executionId, event); } catch (err) { console.error(`[timers] ${executionId}: firing failed:`, err); }
    }, Math.min(delay, 2 ** 31 - 1));
    handle.unref?.();
    this.timers.set(key, { at: when, handle });
  }

  clear(executionId: string): void {
    for (const [key, t] of this.timers) if (key.startsWith(`${executionId}|`)) { clearTimeout(t.handle); this.timers.delete(key); }
  }

  stop(): void { for (const t of this.timers.values()) clearTimeout(t.handle); this.timers.clear(); }
}
