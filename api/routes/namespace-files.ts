// /api/v1/namespaces/{namespace}/files: Kestra's namespace files (NamespaceFileController): upload (multipart
// `fileContent`; a `.zip` is imported), read, stats, directory listing and creation, search, move, delete and zip
// export, over the internal storage of either home (operator/storage/namespace-files.ts holds the rules and limits).
import type { Router, RouterContext } from '@koa/router';
import { LimitError } from '../../operator/core/limits.js';
import { NamespaceFileError, NamespaceFiles, parseNamespaceFilePath } from '../../operator/storage/namespace-files.js';
import { isMultipart, readMultipart } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, HttpError } from '../errors.js';
import { queryOne } from '../query.js';
import { contentDisposition } from './execution-stream.js';
import { namespaceParam } from './kv.js';

/** Refusals of the namespace-file rules as HTTP errors naming their field; limits as 413 naming the setting. */
function asHttp(err: unknown): unknown {
  if (err instanceof NamespaceFileError) return new HttpError(err.status, err.message, err.field ? [{ path: err.field, message: err.message }] : undefined);
  if (err instanceof LimitError) return new HttpError(413, err.message);
  return err;
}

type Handler = (ctx: RouterContext, ns: string) => Promise<void>;

/** `revision` is Kestra's: no revisions of namespace files are kept here, so asking for one is refused, not ignored. */
function noRevision(ctx: RouterContext): void {
  if (queryOne(ctx, 'revision') !== undefined) throw badRequest('Revisions of namespace files are not kept: the latest content is the only one', 'revision');
}

/** Adds the namespace file routes to `r` (mounted under /api/v1). */
export function registerNamespaceFileRoutes(r: Router, deps: ApiDeps): void {
  const files = new NamespaceFiles(deps.stores.storage, deps.limits);
  const route = (h: Handler) => async (ctx: RouterContext) => {
    try {
      await h(ctx, namespaceParam(ctx));
    } catch (err) {
      throw asHttp(err);
    }
  };
  const path = (ctx: RouterContext, field = 'path') => parseNamespaceFilePath(queryOne(ctx, field), field);
  const pathOrRoot = (ctx: RouterContext) => parseNamespaceFilePath(queryOne(ctx, 'path'), 'path', { root: true });

  r.get('/namespaces/:namespace/files/search', route(async (ctx, ns) => {
    const q = queryOne(ctx, 'q');
    if (q === undefined) throw badRequest("The query parameter 'q' is required", 'q');
    ctx.body = await files.search(ns, q);
  }));

  r.get('/namespaces/:namespace/files', route(async (ctx, ns) => {
    noRevision(ctx);
    const { stream, size } = await files.read(ns, path(ctx));
    ctx.type = 'application/octet-stream';
    ctx.set('Cache-Control', 'no-cache');
    ctx.length = size;
    ctx.body = stream;
  }));

  r.get('/namespaces/:namespace/files/stats', route(async (ctx, ns) => { ctx.body = await files.stat(ns, pathOrRoot(ctx)); }));

  r.get('/namespaces/:namespace/files/directory', route(async (ctx, ns) => { ctx.body = await files.list(ns, pathOrRoot(ctx)); }));

  r.post('/namespaces/:namespace/files/directory', route(async (ctx, ns) => {
    const segments = pathOrRoot(ctx);
    if (segments.length === 0) await files.stat(ns, []); // the root: made when absent
    else await files.mkdir(ns, segments);
    ctx.status = 204;
  }));

  r.post('/namespaces/:namespace/files', route(async (ctx, ns) => {
    const segments = path(ctx);
    if (!isMultipart(ctx)) throw badRequest('The body must be multipart/form-data with the file in a `fileContent` part', 'fileContent');
    const staged = files.stagingPath();
    let parts = 0;
    let filename = '';
    const body = await readMultipart(ctx, {
      storage: deps.stores.storage, maxFileBytes: deps.maxFileBytes, maxFieldBytes: deps.maxBodyBytes,
      pathFor: (field, name) => {
        if (field !== 'fileContent') return undefined;
        parts++;
        if (parts > 1) return undefined;
        filename = name;
        return staged;
      },
    }).catch(async (err: unknown) => { await files.discard(staged); throw err; });
    const unexpected = [...Object.keys(body.fields).filter((f) => f !== 'fileContent'), ...(parts > 1 ? ['fileContent'] : [])];
    if (body.files.length === 0 || unexpected.length > 0) {
      await files.discard(staged);
      if (body.files.length === 0) throw badRequest('The file to upload is missing: send it as the `fileContent` part', 'fileContent');
      throw badRequest(`Only one \`fileContent\` file part is accepted (unexpected: ${unexpected.join(', ')})`, unexpected[0]);
    }
    if (filename.toLowerCase().endsWith('.zip')) await files.importZip(ns, staged);
    else await files.commit(ns, segments, staged);
    ctx.status = 204;
  }));

  r.get('/namespaces/:namespace/files/export', route(async (ctx, ns) => {
    const zip = await files.exportZip(ns);
    ctx.set('Content-Disposition', contentDisposition(`${ns}_files.zip`));
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/octet-stream';
    ctx.body = zip;
  }));

  r.put('/namespaces/:namespace/files', route(async (ctx, ns) => {
    await files.move(ns, path(ctx, 'from'), path(ctx, 'to'));
    ctx.status = 204;
  }));

  r.delete('/namespaces/:namespace/files', route(async (ctx, ns) => {
    await files.delete(ns, path(ctx));
    ctx.status = 204;
  }));
}
