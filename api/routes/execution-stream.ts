// Streaming reads of one execution: `/follow` (server-sent events on every change until terminal) and `/file`
// (download of a storage file that belongs to the execution, never anything outside its storage prefix).
import type { Router, RouterContext } from '@koa/router';
import { PassThrough } from 'node:stream';
import type { Execution } from '../../operator/core/types.js';
import { isTerminal } from '../../operator/core/types.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import { queryOne } from '../query.js';
import { executionJson } from '../execution-json.js';
import { getExecution } from './executions.js';
import { executionStoragePath } from '../../operator/storage/paths.js';

/**
 * Storage prefixes an execution may read: its own, and its parent's (subflows). Uploads of earlier versions were
 * stored under the dotted namespace, so that prefix stays readable for existing data directories.
 */
export function allowedPrefixes(e: Execution): string[] {
  const refs = [{ namespace: e.namespace, flowId: e.flowId, id: e.id }];
  if (e.parent) refs.push({ namespace: e.parent.namespace, flowId: e.parent.flowId, id: e.parent.executionId });
  return refs.flatMap((r) => {
    const current = `kestra:///${executionStoragePath(r)}/`;
    const legacy = `kestra:///${r.namespace}/${r.flowId}/executions/${r.id}/`;
    return current === legacy ? [current] : [current, legacy];
  });
}

/** True when `uri` is inside one of the prefixes and has no `..`/`.` segment (raw or percent-encoded). */
export function uriAllowed(uri: string, prefixes: string[]): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(uri);
  } catch {
    return false;
  }
  if (decoded.split('/').some((seg) => seg === '..' || seg === '.') || decoded.includes('\\')) return false;
  return prefixes.some((p) => uri.startsWith(p) || decoded.startsWith(p));
}

/** `attachment` with an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The `path` query parameter, checked to be an existing file of the execution's storage. */
async function executionFile(ctx: RouterContext, deps: ApiDeps): Promise<string> {
  const { execution } = await getExecution(deps, ctx.params.id!);
  const uri = queryOne(ctx, 'path');
  if (!uri) throw badRequest("Missing query parameter 'path'", 'path');
  if (!uriAllowed(uri, allowedPrefixes(execution))) {
    throw new HttpError(422, `File '${uri}' does not belong to execution '${execution.id}'`, [
      { path: 'path', message: 'not in the storage of this execution' },
    ]);
  }
  if (!(await deps.stores.storage.exists(uri))) throw notFound(`File '${uri}' not found`);
  return uri;
}

async function downloadFile(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const uri = await executionFile(ctx, deps);
  const { storage } = deps.stores;
  const name = decodeURIComponent(uri.split('/').pop() ?? 'file') || 'file';
  ctx.set('Content-Disposition', contentDisposition(name));
  ctx.type = 'application/octet-stream';
  ctx.length = await storage.size(uri);
  ctx.body = await storage.stream(uri);
}

/** SSE comment lines keep idle proxies from closing a long follow. */
const HEARTBEAT_MS = 15_000;

/** One server-sent event with Kestra's event id (`start`, `progress`, `end`). */
export const sseEvent = (id: 'start' | 'progress' | 'end', data: unknown): string => `id: ${id}\ndata: ${JSON.stringify(data)}\n\n`;

export interface SseStream {
  out: PassThrough;
  readonly closed: boolean;
  /** Ends the stream once (also when the client leaves), running the `onEnd` given at the opening first. */
  end(): void;
}

/** Answers `ctx` with a server-sent-event stream kept alive by comment lines until it ends. */
export function openSse(ctx: RouterContext, onEnd: () => void): SseStream {
  const out = new PassThrough();
  let closed = false;
  const heartbeat = setInterval(() => { if (!closed && !out.writableNeedDrain) out.write(': keep-alive\n\n'); }, HEARTBEAT_MS);
  heartbeat.unref();
  const stream: SseStream = {
    out,
    get closed() { return closed; },
    end() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      onEnd();
      out.end();
    },
  };
  ctx.res.on('close', () => stream.end());
  ctx.req.socket.setTimeout(0);
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  ctx.body = out;
  return stream;
}

/**
 * Server-sent events as Kestra sends them: `start` (`{id}`), then the current execution and every change as
 * `progress`, and the terminal state as `end`, after which the stream closes. A client that reads slower than the
 * execution changes gets the latest state when it catches up: while the stream waits for it to drain, a newer snapshot
 * replaces the one not yet written (each event is the whole execution), so a client that stops reading holds at most
 * one snapshot beyond the socket's buffers, never one per change.
 */
async function follow(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const id = ctx.params.id!;
  await getExecution(deps, id);
  let lastVersion = -1;
  let unsubscribe = (): void => {};
  const sse = openSse(ctx, () => unsubscribe());
  let pending: Execution | undefined;
  let draining = false;
  const flush = (): void => {
    while (pending && !sse.closed) {
      const e = pending;
      pending = undefined;
      const terminal = isTerminal(e.state.current);
      const drained = sse.out.write(sseEvent(terminal ? 'end' : 'progress', executionJson(e)));
      if (terminal) { sse.end(); return; }
      if (!drained) {
        draining = true;
        sse.out.once('drain', () => { draining = false; flush(); });
        return;
      }
    }
  };
  const send = (e: Execution, version: number): void => {
    if (sse.closed || version <= lastVersion) return;
    lastVersion = version;
    pending = e;
    if (!draining) flush();
  };
  unsubscribe = deps.stores.executions.watch((ev) => {
    if (ev.execution.id === id) send(ev.execution, ev.resourceVersion);
  });
  sse.out.write(sseEvent('start', { id }));
  const current = await deps.stores.executions.get(id);
  if (current) send(current.execution, current.resourceVersion);
}

/** Adds `/executions/{id}/follow`, `/executions/{id}/file` and `/file/metas` to `r` (mounted under /api/v1). */
export function registerExecutionStreamRoutes(r: Router, deps: ApiDeps): void {
  r.get('/executions/:id/follow', (ctx) => follow(ctx, deps));
  r.get('/executions/:id/file', (ctx) => downloadFile(ctx, deps));
  r.get('/executions/:id/file/metas', async (ctx) => {
    const uri = await executionFile(ctx, deps);
    ctx.body = { size: await deps.stores.storage.size(uri) };
  });
}
