// HTTP error type and the middleware that maps every thrown error to a JSON `{message, errors?}` response.
// Bad input never yields a 500: only unexpected errors do, and those are logged to stderr; a transient store error is a
// 503. Answers and logged errors go through the secret layer's masker: an error quoting a secret value (a render error,
// a JSON parse error) shows `******`.
import type { Context, Middleware, Next } from 'koa';
import { isTransient } from '../operator/faults.js';
import { ConflictError } from '../operator/store/types.js';

export interface FieldError { path: string; message: string }

/** An error with its HTTP status, thrown by routes and body readers. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly errors?: FieldError[]) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, path?: string): HttpError =>
  new HttpError(400, message, path ? [{ path, message }] : undefined);
export const notFound = (message: string): HttpError => new HttpError(404, message);
export const conflict = (message: string): HttpError => new HttpError(409, message);

interface ValidationLike { name: string; message: string; errors?: unknown }

function fieldErrors(raw: unknown, prefix = ''): FieldError[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw.map((e: { path?: unknown; message?: unknown }) => {
    const path = String(e?.path ?? '');
    return { path: prefix && !path.startsWith(prefix) ? `${prefix}${path}` : path, message: String(e?.message ?? '') };
  });
}

/** Maps known error kinds (by class name, so modules stay decoupled) to a status and body. */
export function toResponse(err: unknown): { status: number; body: { message: string; errors?: FieldError[] } } | undefined {
  if (err instanceof HttpError) return { status: err.status, body: { message: err.message, errors: err.errors } };
  if (err instanceof ConflictError) return { status: 409, body: { message: err.message } };
  // A busy store or an unreachable backend: the same request may succeed later (operator/faults.ts).
  if (isTransient(err)) return { status: 503, body: { message: 'Service temporarily unavailable (the store is busy or unreachable); retry later' } };
  // PostgreSQL refusing a REGEX search filter RE2 accepted (a syntax only RE2 has, such as `(?P<name>...)`).
  if ((err as { code?: unknown })?.code === '2201B') {
    return { status: 400, body: { message: `Invalid regular expression in a REGEX filter: ${(err as Error).message}` } };
  }
  const e = err as ValidationLike;
  if (e?.name === 'FlowValidationError') return { status: 422, body: { message: e.message, errors: fieldErrors(e.errors) } };
  if (e?.name === 'InputValidationError') {
    return { status: 422, body: { message: e.message, errors: fieldErrors(e.errors, 'inputs.') } };
  }
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: { message: (err as Error).message || 'Bad request' } };
  }
  return undefined;
}

/** Outermost middleware: JSON errors (every text through `mask`), JSON 404/405 for unknown routes. */
export function errorHandler(mask: (text: string) => string = (t) => t): Middleware {
  return (ctx, next) => handleErrors(ctx, next, mask);
}

/** The error middleware without secrets to mask (the admission webhook renders nothing). */
export const errorMiddleware: Middleware = errorHandler();

async function handleErrors(ctx: Context, next: Next, mask: (text: string) => string): Promise<void> {
  try {
    await next();
    if ((ctx.status === 404 || ctx.status === 405) && ctx.body == null) {
      const what = ctx.status === 404 ? 'Not found' : 'Method not allowed';
      ctx.status = ctx.status; // make it explicit, else setting the body turns it into 200
      ctx.body = { message: `${what}: ${ctx.method} ${ctx.path}` };
    }
  } catch (err) {
    const logged = mask(String((err as Error)?.stack ?? err));
    if (ctx.headerSent) {
      console.error(`[api] ${ctx.method} ${ctx.path} failed after the response started: ${logged}`);
      return;
    }
    const mapped = toResponse(err);
    if (mapped) {
      ctx.status = mapped.status;
      const message = mask(mapped.body.message);
      ctx.body = mapped.body.errors ? { message, errors: mapped.body.errors.map((e) => ({ path: mask(e.path), message: mask(e.message) })) } : { message };
      return;
    }
    console.error(`[api] ${ctx.method} ${ctx.path} failed: ${logged}`);
    ctx.status = 500;
    ctx.body = { message: 'Internal server error' };
  }
}
