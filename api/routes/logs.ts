// /api/v1/logs: the log lines of one execution (JSON, paged and bounded by LOGS_MAX_LINES, a streamed plain-text
// download, or followed as server-sent events until the execution ends) and full-text search across logs.
import { Readable } from 'node:stream';
import type { Router, RouterContext } from '@koa/router';
import { isTerminal, LogLevels } from '../../operator/core/types.js';
import type { LogLevel, LogLine } from '../../operator/core/types.js';
import type { ExecutionLogFilter, LogCursor } from '../../operator/store/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';
import { legacyFilters, searchFilters } from '../filters.js';
import { paging, queryInt, queryOne } from '../query.js';
import { openSse, sseEvent } from './execution-stream.js';
import { getExecution } from './executions.js';

function levelParam(ctx: RouterContext, ...names: string[]): LogLevel | undefined {
  for (const name of names) {
    const v = queryOne(ctx, name)?.toUpperCase();
    if (v === undefined) continue;
    if (!(LogLevels as readonly string[]).includes(v)) {
      throw badRequest(`Invalid '${name}' '${v}': expected one of ${LogLevels.join(', ')}`, name);
    }
    return v as LogLevel;
  }
  return undefined;
}

export const logLineText = (l: LogLine): string => `${l.timestamp} ${l.level} ${l.taskId ?? ''} ${l.message}`;

/** A malformed full-text query is the caller's mistake (400), not a server error. */
function isQuerySyntaxError(err: unknown): boolean {
  const e = err as { name?: string; code?: string; message?: string };
  return e?.name === 'SqliteError' || /fts5|syntax error|no such column/i.test(e?.message ?? '');
}

/** Kestra's filters of one execution's lines: `minLevel` (or `level`), `taskRunId`, `taskId`, `attempt`. */
function executionFilter(ctx: RouterContext): ExecutionLogFilter {
  const filter: ExecutionLogFilter = {};
  const minLevel = levelParam(ctx, 'minLevel', 'level');
  if (minLevel) filter.minLevel = minLevel;
  const taskRunId = queryOne(ctx, 'taskRunId');
  if (taskRunId !== undefined) filter.taskRunId = taskRunId;
  const taskId = queryOne(ctx, 'taskId');
  if (taskId !== undefined) filter.taskId = taskId;
  const attempt = queryInt(ctx, 'attempt', 0);
  if (attempt !== undefined) filter.attempt = attempt;
  return filter;
}

/** The lines asked for: a page when `page` or `size` is given (size at most LOGS_MAX_LINES), else the first LOGS_MAX_LINES. */
function linePage(ctx: RouterContext, maxLines: number): { limit: number; offset: number; paged: boolean } {
  if (queryOne(ctx, 'page') === undefined && queryOne(ctx, 'size') === undefined) return { limit: maxLines, offset: 0, paged: false };
  const { limit, offset } = paging(ctx, maxLines);
  return { limit, offset, paged: true };
}

/** Adds the log routes to `r` (mounted under /api/v1). */
export function registerLogRoutes(r: Router, deps: ApiDeps): void {
  const { logs } = deps.stores;

  r.get('/logs/search', async (ctx) => {
    const p = paging(ctx);
    const q = queryOne(ctx, 'q');
    const filters = searchFilters(ctx, 'logs', deps.limits);
    const fullText = [q, ...filters.flatMap((f) => (f.kind === 'q' ? [f.value] : []))].filter((v) => v !== undefined);
    await logs.flush();
    try {
      const page = await logs.search({
        q, namespace: queryOne(ctx, 'namespace'), flowId: queryOne(ctx, 'flowId'),
        executionId: queryOne(ctx, 'executionId'), minLevel: levelParam(ctx, 'minLevel', 'level'),
        filters: [...legacyFilters(ctx, ['scope', 'startDate', 'endDate', 'triggerId', 'timeRange'], deps.limits), ...filters],
        limit: p.limit, offset: p.offset,
      });
      ctx.body = { results: page.results, total: page.total };
    } catch (err) {
      if (fullText.length > 0 && isQuerySyntaxError(err)) throw badRequest(`Invalid search query '${fullText.join("', '")}'`, 'q');
      throw err;
    }
  });

  // A JSON array of one page (Kestra's answer, `[]` for an unknown execution); the matching total in X-Total-Count,
  // and X-Truncated: true when an answer without page or size stopped at LOGS_MAX_LINES.
  r.get('/logs/:executionId', async (ctx) => {
    const id = ctx.params.executionId!;
    const filter = executionFilter(ctx);
    const page = linePage(ctx, deps.limits.logsMaxLines);
    await logs.flush();
    const total = await logs.countForExecution(id, filter);
    const lines = await logs.forExecution(id, { ...filter, limit: page.limit, offset: page.offset });
    ctx.set('X-Total-Count', String(total));
    if (!page.paged && total > lines.length) ctx.set('X-Truncated', 'true');
    ctx.body = lines;
  });

  r.get('/logs/:executionId/follow', (ctx) => followLogs(ctx, deps));

  r.delete('/logs/:executionId', async (ctx) => {
    await logs.flush();
    await logs.deleteExecution(ctx.params.executionId!);
    ctx.status = 204;
  });

  // Every matching line as text, read from the store page by page while the client takes them (never all in memory).
  r.get('/logs/:executionId/download', async (ctx) => {
    const id = ctx.params.executionId!;
    const filter = executionFilter(ctx);
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.log"`);
    // The first page is read before answering, so a store failure is still an error status, not a cut-off 200.
    const pages = logs.pagesForExecution(id, filter)[Symbol.asyncIterator]();
    const first = await pages.next();
    ctx.body = Readable.from(downloadText(first, pages));
  });
}

async function* downloadText(first: IteratorResult<LogLine[]>, rest: AsyncIterator<LogLine[]>): AsyncIterable<string> {
  const text = (lines: LogLine[]): string => lines.map((l) => `${logLineText(l)}\n`).join('');
  try {
    for (let page = first; !page.done; page = await rest.next()) yield text(page.value);
  } finally {
    await rest.return?.(); // the client went away: end the reads
  }
}

/** How often a follow looks for new lines between changes of the execution (lines do not wake it otherwise). */
const FOLLOW_POLL_MS = 1_000;
/** Lines read per store call while following (a slow client is waited for between pages: memory stays bounded). */
const FOLLOW_PAGE = 500;

/**
 * Kestra's log follow as server-sent events: `start` (an empty entry), then every line of the execution at or above
 * `minLevel` as `progress`, stored ones first, then new ones as they arrive; the stream ends once the execution has
 * ended and its last lines were sent (Kestra keeps it open until the client leaves).
 */
async function followLogs(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const id = ctx.params.executionId!;
  const filter: ExecutionLogFilter = {};
  const minLevel = levelParam(ctx, 'minLevel', 'level');
  if (minLevel) filter.minLevel = minLevel;
  await getExecution(deps, id);
  const { logs, executions } = deps.stores;
  let cursor: LogCursor = '';
  let ended = false;
  let pumping: Promise<void> = Promise.resolve();
  let unsubscribe = (): void => {};
  const poll = setInterval(() => pump(), FOLLOW_POLL_MS);
  poll.unref();
  const sse = openSse(ctx, () => { clearInterval(poll); unsubscribe(); });
  const { out } = sse;

  const writeAll = async (text: string): Promise<void> => {
    if (!out.write(text) && !sse.closed) await new Promise<void>((resolve) => { out.once('drain', resolve); out.once('close', resolve); });
  };
  // `final`: the read after the end takes every line visible, even one a store would still hold back (LogStore).
  const pumpOnce = async (final: boolean): Promise<void> => {
    for (;;) {
      if (sse.closed) return;
      const page = await logs.linesAfter(id, cursor, filter, FOLLOW_PAGE, { final });
      cursor = page.cursor;
      if (page.lines.length > 0) await writeAll(page.lines.map((l) => sseEvent('progress', l)).join(''));
      if (page.lines.length < FOLLOW_PAGE) return;
    }
  };
  // One read at a time; the last one after the end sends what the execution logged last, then closes.
  function pump(): void {
    pumping = pumping.then(async () => {
      if (sse.closed) return;
      const wasEnded = ended;
      await pumpOnce(wasEnded);
      if (wasEnded) sse.end();
    }).catch((err) => {
      console.error(`[api] log follow of ${id} failed: ${String((err as Error)?.message ?? err)}`);
      sse.end();
    });
  }
  unsubscribe = executions.watch((ev) => {
    if (ev.execution.id !== id) return;
    if (isTerminal(ev.execution.state.current)) ended = true;
    pump();
  });
  out.write(sseEvent('start', {}));
  const current = await executions.get(id);
  if (!current || isTerminal(current.execution.state.current)) ended = true;
  pump();
}
