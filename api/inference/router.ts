// HTTP routes of the batch inference API: POST /v1/completions (Bearer token), GET /get_result/:task_id
// (no credentials needed; the task id is an unguessable random id; the owner's token adds result_key), the owner's
// cancel (DELETE /get_result/:task_id, POST /v1/batches/:id/cancel) and list (GET /v1/batches), GET /v1/models with
// each model's backend, and an OpenAI-compatible POST /v1/chat/completions.
import Router from '@koa/router';
import type { Context } from 'koa';
import { bearerToken } from '../../operator/inference/auth.js';
import {
  AuthError, IdempotencyConflictError, listLimit, NotFoundError, RequestError, SchemaMismatchError,
  type InferenceService, type JobResultView,
} from '../../operator/inference/index.js';

const MAX_BODY = 16 * 1024 * 1024;

/** Reads a JSON body unless a body parser already did (ctx.request.body). */
async function jsonBody(ctx: Context): Promise<unknown> {
  const parsed = (ctx.request as unknown as { body?: unknown }).body;
  if (parsed !== undefined || ctx.req.readableEnded) return parsed;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new RequestError('body', `larger than ${MAX_BODY} bytes`);
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) throw new RequestError('body', 'a JSON object is required');
  try { return JSON.parse(text); } catch (e) { throw new RequestError('body', `invalid JSON: ${(e as Error).message}`); }
}

function sendError(ctx: Context, e: unknown): void {
  if (e instanceof AuthError) {
    ctx.status = 401;
    ctx.set('WWW-Authenticate', 'Bearer');
    ctx.body = { error: e.message };
  } else if (e instanceof RequestError) {
    ctx.status = 400;
    ctx.body = { error: e.message, field: e.field };
  } else if (e instanceof NotFoundError) {
    ctx.status = 404;
    ctx.body = { error: e.message };
  } else if (e instanceof SchemaMismatchError) {
    // The raw answer with the reason, as OpenAI-style clients read a chat completion, plus `error`.
    ctx.status = 422;
    ctx.body = { ...e.completion, error: { message: e.message, type: 'schema_mismatch' } };
  } else if (e instanceof IdempotencyConflictError) {
    ctx.status = 409;
    ctx.body = { error: e.message, task_id: e.taskId };
  } else {
    ctx.status = 500;
    ctx.body = { error: (e as Error).message };
  }
}

/** What the routes need of the service: the one InferenceService of both homes (SQLite or InferenceJob resources behind it). */
export type InferenceApi = Pick<InferenceService, 'submit' | 'getResult' | 'cancel' | 'list' | 'chatCompletion' | 'models' | 'modelDetails'>;

export function createInferenceRouter(svc: InferenceApi): Router {
  const router = new Router();

  router.post('/v1/completions', async (ctx) => {
    try {
      const token = bearerToken(ctx.get('authorization'));
      // Authenticate before reading the body: a bad token starts nothing and costs nothing.
      if (!token) throw new AuthError();
      const body = await jsonBody(ctx);
      const r = await svc.submit(token, body, ctx.get('idempotency-key') || undefined);
      ctx.status = r.created ? 202 : 200;
      ctx.body = { task_id: r.task_id };
    } catch (e) { sendError(ctx, e); }
  });

  router.get('/get_result/:task_id', async (ctx) => {
    let view: JobResultView | undefined;
    try { view = await svc.getResult(ctx.params.task_id, bearerToken(ctx.get('authorization'))); } catch (e) { sendError(ctx, e); return; }
    if (!view) { ctx.status = 404; ctx.body = { error: 'no such task_id' }; return; }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = view;
  });

  const cancel = async (ctx: Context, id: string): Promise<void> => {
    try {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await svc.cancel(bearerToken(ctx.get('authorization')), id);
    } catch (e) { sendError(ctx, e); }
  };
  router.delete('/get_result/:task_id', (ctx) => cancel(ctx, ctx.params.task_id));
  router.post('/v1/batches/:id/cancel', (ctx) => cancel(ctx, ctx.params.id));

  router.get('/v1/batches', async (ctx) => {
    try {
      const after = typeof ctx.query.after === 'string' && ctx.query.after ? ctx.query.after : undefined;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await svc.list(bearerToken(ctx.get('authorization')), listLimit(ctx.query.limit), after);
    } catch (e) { sendError(ctx, e); }
  });

  router.post('/v1/chat/completions', async (ctx) => {
    try {
      const token = bearerToken(ctx.get('authorization'));
      if (!token) throw new AuthError();
      ctx.body = await svc.chatCompletion(token, await jsonBody(ctx));
    } catch (e) { sendError(ctx, e); }
  });

  router.get('/v1/models', (ctx) => {
    ctx.body = { object: 'list', data: svc.models().map((id) => ({ id, object: 'model', owned_by: 'flowpilot', ...svc.modelDetails(id) })) };
  });

  return router;
}
