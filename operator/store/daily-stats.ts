// Daily execution statistics computed in memory (cluster store over its cache) and the merge of partial results (live
// resources plus the history archive): one definition of a (UTC day, state) group shared by every store.
import type { Execution } from '../core/types.js';
import type { DailyStatsQuery, DailyStatsRow } from './types.js';

/** The UTC day (YYYY-MM-DD) of an ISO date, or undefined when it does not parse. */
export function utcDay(iso: string | undefined): string | undefined {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : undefined;
}

/** Whether an execution's start date falls in the query's [startDate, endDate]. */
export function startsWithin(e: Execution, q: DailyStatsQuery): boolean {
  const start = Date.parse(e.state.startDate);
  return start >= Date.parse(q.startDate) && start <= Date.parse(q.endDate);
}

/** Groups by (day, state), adding one execution or a partial row; `rows()` gives them by day then state. */
export class DailyStatsAccumulator {
  private readonly groups = new Map<string, DailyStatsRow>();

  addExecution(e: Execution): void {
    const day = utcDay(e.state.startDate);
    if (!day) return;
    const end = e.state.endDate ? Date.parse(e.state.endDate) : NaN;
    const ms = Number.isFinite(end) ? Math.max(0, end - Date.parse(e.state.startDate)) : undefined;
    this.addRow(ms === undefined
      ? { day, state: e.state.current, count: 1, ended: 0, durationMinMs: 0, durationMaxMs: 0, durationSumMs: 0 }
      : { day, state: e.state.current, count: 1, ended: 1, durationMinMs: ms, durationMaxMs: ms, durationSumMs: ms });
  }

  addRow(r: DailyStatsRow): void {
    const key = `${r.day} ${r.state}`;
    const g = this.groups.get(key);
    if (!g) { this.groups.set(key, { ...r }); return; }
    if (r.ended > 0) {
      g.durationMinMs = g.ended > 0 ? Math.min(g.durationMinMs, r.durationMinMs) : r.durationMinMs;
      g.durationMaxMs = g.ended > 0 ? Math.max(g.durationMaxMs, r.durationMaxMs) : r.durationMaxMs;
      g.durationSumMs += r.durationSumMs;
      g.ended += r.ended;
    }
    g.count += r.count;
  }

  rows(): DailyStatsRow[] {
    return [...this.groups.values()].sort((a, b) => a.day.localeCompare(b.day) || a.state.localeCompare(b.state));
  }
}
