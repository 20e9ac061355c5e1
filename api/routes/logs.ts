// /api/v1/logs: the log lines of one execution (JSON or plain-text download) and full-text search across logs.
import type { Router, RouterContext } from '@koa/router';
import { LogLevels } from '../../operator/core/types.js';
import type { LogLevel, LogLine } from '../../operator/core/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';
import { paging, queryOne } from '../query.js';

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

/** Lines of one execution, filtered by `minLevel` (or `level`), `taskRunId` and `taskId`. */
async function executionLines(ctx: RouterContext, deps: ApiDeps): Promise<LogLine[]> {
  const { logs } = deps.stores;
  await logs.flush();
  const lines = await logs.forExecution(ctx.params.executionId!, {
    minLevel: levelParam(ctx, 'minLevel', 'level'), taskRunId: queryOne(ctx, 'taskRunId'),
  });
  const taskId = queryOne(ctx, 'taskId');
  return taskId ? lines.filter((l) => l.taskId === taskId) : lines;
}

/** Adds the log routes to `r` (mounted under /api/v1). */
export function registerLogRoutes(r: Router, deps: ApiDeps): void {
  const { logs } = deps.stores;

  r.get('/logs/search', async (ctx) => {
    const p = paging(ctx);
    const q = queryOne(ctx, 'q');
    await logs.flush();
    try {
      const page = await logs.search({
        q, namespace: queryOne(ctx, 'namespace'), flowId: queryOne(ctx, 'flowId'),
        executionId: queryOne(ctx, 'executionId'), minLevel: levelParam(ctx, 'minLevel', 'level'),
        limit: p.limit, offset: p.offset,
      });
      ctx.body = { results: page.results, total: page.total };
    } catch (err) {
      if (q !== undefined && isQuerySyntaxError(err)) throw badRequest(`Invalid search query '${q}'`, 'q');
      throw err;
    }
  });

  r.get('/logs/:executionId', async (ctx) => {
    ctx.body = await executionLines(ctx, deps);
  });

  r.delete('/logs/:executionId', async (ctx) => {
    await logs.flush();
    await logs.deleteExecution(ctx.params.executionId!);
    ctx.status = 204;
  });

  r.get('/logs/:executionId/download', async (ctx) => {
    const id = ctx.params.executionId!;
    const lines = await executionLines(ctx, deps);
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.log"`);
    ctx.body = lines.map((l) => `${logLineText(l)}\n`).join('');
  });
}
