// /api/v1/stats: Kestra's daily execution statistics (POST /stats/executions/daily): per UTC day of the range, the
// executions started that day by state and the durations of the ended ones, aggregated by the store (no record read).
import type { Router } from '@koa/router';
import { ExecutionStates } from '../../operator/core/types.js';
import { type Limits, limitError } from '../../operator/core/limits.js';
import { isoDuration } from '../../operator/core/state.js';
import { DailyStatsAccumulator } from '../../operator/store/daily-stats.js';
import type { DailyStatsQuery, DailyStatsRow } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';

const DAY_MS = 86_400_000;
/** Kestra's default range: the last 30 days. */
const DEFAULT_DAYS = 30;
const FIELDS = ['q', 'namespace', 'flowId', 'startDate', 'endDate'] as const;

/** Kestra's DailyExecutionStatistics. */
export interface DailyExecutionStatistics {
  startDate: string;
  groupBy: 'day';
  duration: { min: string; avg: string; max: string; sum: string; count: number };
  executionCounts: Record<string, number>;
}

/** The body `{q?, namespace?, flowId?, startDate?, endDate?}` checked (400 naming the field) into a store query. */
export function dailyStatsQuery(body: unknown, limits: Limits, now = Date.now()): DailyStatsQuery {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b)) throw badRequest('The body must be an object {q, namespace, flowId, startDate, endDate}', 'body');
  for (const k of Object.keys(b)) {
    if (!(FIELDS as readonly string[]).includes(k)) throw badRequest(`Unknown field '${k}': expected ${FIELDS.join(', ')}`, k);
  }
  const text = (k: (typeof FIELDS)[number]): string | undefined => {
    const v = b[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw badRequest(`Invalid '${k}': expected a string`, k);
    return v;
  };
  const date = (k: 'startDate' | 'endDate', fallback: number): number => {
    const v = text(k);
    if (v === undefined) return fallback;
    const ms = Date.parse(v);
    if (Number.isNaN(ms)) throw badRequest(`Invalid '${k}' '${v}': expected an ISO date-time`, k);
    return ms;
  };
  const end = date('endDate', now);
  const start = date('startDate', end - DEFAULT_DAYS * DAY_MS);
  if (start > end) throw badRequest("'startDate' is after 'endDate'", 'startDate');
  const days = dayList(start, end).length;
  if (days > limits.statsMaxDays) throw badRequest(limitError('statsMaxDays', `A range of ${days} days`, limits).message, 'startDate');
  const q = text('q');
  return {
    namespace: text('namespace'), flowId: text('flowId'),
    ...(q !== undefined ? { filters: [{ kind: 'q' as const, op: 'EQUALS' as const, value: q }] } : {}),
    startDate: new Date(start).toISOString(), endDate: new Date(end).toISOString(),
  };
}

/** Every UTC day (YYYY-MM-DD) from the day of `start` to the day of `end`. */
function dayList(start: number, end: number): string[] {
  const days: string[] = [];
  for (let d = Math.floor(start / DAY_MS) * DAY_MS; d <= end; d += DAY_MS) days.push(new Date(d).toISOString().slice(0, 10));
  return days;
}

/** One entry per day of the range (days without executions too), every state counted (0 when none). */
export function dailyStatistics(rows: DailyStatsRow[], q: DailyStatsQuery): DailyExecutionStatistics[] {
  const byDay = new Map<string, DailyStatsRow[]>();
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r]);
  return dayList(Date.parse(q.startDate), Date.parse(q.endDate)).map((day) => {
    const acc = new DailyStatsAccumulator();
    const counts: Record<string, number> = Object.fromEntries(ExecutionStates.map((s) => [s, 0]));
    for (const r of byDay.get(day) ?? []) {
      counts[r.state] = (counts[r.state] ?? 0) + r.count;
      acc.addRow({ ...r, state: 'SUCCESS' }); // one group per day: durations over every state
    }
    const all = acc.rows()[0];
    const ended = all?.ended ?? 0;
    return {
      startDate: `${day}T00:00:00Z`,
      groupBy: 'day',
      duration: {
        min: isoDuration(all?.durationMinMs ?? 0), max: isoDuration(all?.durationMaxMs ?? 0),
        sum: isoDuration(all?.durationSumMs ?? 0), avg: isoDuration(ended ? all!.durationSumMs / ended : 0), count: ended,
      },
      executionCounts: counts,
    };
  });
}

/** Adds the statistics routes to `r` (mounted under /api/v1). */
export function registerStatsRoutes(r: Router, deps: ApiDeps): void {
  r.post('/stats/executions/daily', async (ctx) => {
    const query = dailyStatsQuery(await readJson(ctx, deps.maxBodyBytes), deps.limits);
    ctx.body = dailyStatistics(await deps.stores.executions.dailyStats(query), query);
  });
}
