// /api/v1/metrics/{executionId}: the metrics of one execution as Kestra's MetricEntry list (`{results, total}`),
// read from where they are recorded here: each task run attempt of the execution record (no separate metric store).
// `taskId` and `taskRunId` both filter when both are given (Kestra uses `taskId` alone then).
import type { Router, RouterContext } from '@koa/router';
import type { Execution } from '../../operator/core/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';
import { paging, queryOne } from '../query.js';

/** Kestra's MetricEntry. */
export interface MetricEntry {
  namespace: string;
  flowId: string;
  taskId: string;
  executionId: string;
  taskRunId: string;
  type: 'counter' | 'timer';
  name: string;
  /** A counter's value; a timer's duration in milliseconds (recorded in seconds, as scripts report them). */
  value: number;
  timestamp: string;
  tags: Record<string, string>;
  deleted: false;
}

/** Every metric of every attempt, in task-run then attempt order; an attempt's time is when it ended (or last changed). */
export function metricEntries(e: Execution): MetricEntry[] {
  return e.taskRunList.flatMap((run) => run.attempts.flatMap((attempt) => {
    const timestamp = attempt.state.endDate ?? attempt.state.histories.at(-1)?.date ?? attempt.state.startDate;
    return (attempt.metrics ?? []).map((m) => ({
      namespace: e.namespace, flowId: e.flowId, taskId: run.taskId, executionId: e.id, taskRunId: run.id,
      type: m.type, name: m.name, value: m.type === 'timer' ? m.value * 1000 : m.value,
      timestamp, tags: { ...(m.tags ?? {}) }, deleted: false as const,
    }));
  }));
}

const SORTABLE = ['name', 'type', 'value', 'timestamp', 'taskId'] as const;
type SortField = (typeof SORTABLE)[number];

/** Kestra's `sort=field:asc|desc` (repeatable; the first one is used here, later ones break ties in order). */
function sorter(ctx: RouterContext): ((a: MetricEntry, b: MetricEntry) => number) | undefined {
  const raw = ctx.query.sort;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) return undefined;
  const keys = list.map((s) => {
    const [field, dir = 'asc'] = s.split(':');
    if (!(SORTABLE as readonly string[]).includes(field!) || (dir !== 'asc' && dir !== 'desc')) {
      throw badRequest(`Invalid 'sort' '${s}': expected <field>:asc|desc with field one of ${SORTABLE.join(', ')}`, 'sort');
    }
    return { field: field as SortField, sign: dir === 'asc' ? 1 : -1 };
  });
  return (a, b) => {
    for (const { field, sign } of keys) {
      const x = a[field];
      const y = b[field];
      if (x !== y) return (x < y ? -1 : 1) * sign;
    }
    return 0;
  };
}

/** Adds `/metrics/{executionId}` to `r` (mounted under /api/v1). */
export function registerMetricRoutes(r: Router, deps: ApiDeps): void {
  // Kestra answers an empty page for an unknown execution (its metrics are a separate table).
  r.get('/metrics/:executionId', async (ctx) => {
    const p = paging(ctx);
    const taskRunId = queryOne(ctx, 'taskRunId');
    const taskId = queryOne(ctx, 'taskId');
    const sort = sorter(ctx);
    const stored = await deps.stores.executions.get(ctx.params.executionId!);
    let entries = stored ? metricEntries(stored.execution) : [];
    if (taskId !== undefined) entries = entries.filter((m) => m.taskId === taskId);
    if (taskRunId !== undefined) entries = entries.filter((m) => m.taskRunId === taskRunId);
    if (sort) entries.sort(sort);
    ctx.body = { results: entries.slice(p.offset, p.offset + p.limit), total: entries.length };
  });
}
