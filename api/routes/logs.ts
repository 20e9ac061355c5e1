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
    await logs.flush();
    ctx.body = await logs.forExecution(ctx.params.executionId!, {
      minLevel: levelParam(ctx, 'minLevel', 'level'), taskRunId: queryOne(ctx, 'taskRunId'),
    });
  });

  r.get('/logs/:executionId/download', async (ctx) => {
    await logs.flush();
    const id = ctx.params.executionId!;
    const lines = await logs.forExecution(id, {
      minLevel: levelParam(ctx, 'minLevel', 'level'), taskRunId: queryOne(ctx, 'taskRunId'),
    });
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.log"`);
    ctx.body = lines.map((l) => `${logLineText(l)}\n`).join('');
  });
}
