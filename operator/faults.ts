// The two kinds of error, defined once (as controller-runtime and kopf do): transient ones (a busy or locked store, a
// network failure, HTTP 429 / 5xx, a write conflict) are retried with a capped, jittered backoff and lose nothing;
// everything else is permanent and ends the work that hit it with the reason. Also backoff (the formula of
// core/backoff.ts, with defaults) and sleep.
import { backoffDelay } from './core/backoff.js';
import { ConflictError } from './store/types.js';

/** Worth retrying as is: the same call may succeed later. */
export class TransientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

/** Retrying cannot help: the work that hit it ends with this reason. */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** Node / undici / node-fetch error codes of a connection that failed or broke (DNS included: EAI_AGAIN). */
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'ESOCKETTIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENETUNREACH',
  'ENETDOWN', 'EHOSTUNREACH', 'EHOSTDOWN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

/** S3 error codes (minio's S3Error) that mean "try again". */
const S3_CODES = new Set(['SlowDown', 'InternalError', 'ServiceUnavailable', 'RequestTimeout', 'Throttling', 'ThrottlingException']);

/** HTTP status carried by an error: client-node's ApiException (`code`), `statusCode`, `status`, AWS `$metadata`. */
function httpStatus(err: Record<string, unknown>): number | undefined {
  const meta = err.$metadata as { httpStatusCode?: unknown } | undefined;
  for (const v of [err.code, err.statusCode, err.status, meta?.httpStatusCode]) {
    if (typeof v === 'number' && v >= 100 && v < 600) return v;
  }
  return undefined;
}

function transientItself(err: unknown): boolean | undefined {
  if (err instanceof PermanentError) return false;
  if (err instanceof TransientError || err instanceof ConflictError) return true;
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) return true;
  if (code && (NETWORK_CODES.has(code) || S3_CODES.has(code))) return true;
  if (e.type === 'system' || e.type === 'request-timeout') return true; // node-fetch FetchError (client-node)
  const status = httpStatus(e);
  if (status !== undefined) return status === 429 || status === 408 || status >= 500;
  return undefined;
}

/**
 * Whether `err` is transient: SQLite busy/locked, a store conflict, a network failure, HTTP 408/429/5xx (Kubernetes
 * API, S3), a TransientError; looked up along `cause` (fetch's "fetch failed" carries the socket error there).
 * Anything else, non-Error throws included, is permanent.
 */
export function isTransient(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const verdict = transientItself(current);
    if (verdict !== undefined) return verdict;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Longest reason kept (an execution's `error`, a log line): a thrown value may be arbitrarily large. */
const MAX_REASON = 4000;

/** The reason to record for any thrown value (a non-Error, even one whose toString throws, included), bounded. */
export function reasonOf(err: unknown): string {
  let reason: string;
  try {
    if (err instanceof Error) reason = err.message || err.name || 'Error';
    else if (typeof err === 'string') reason = err;
    else {
      const json = JSON.stringify(err);
      reason = `Non-error thrown: ${json === undefined ? String(err) : json}`;
    }
  } catch {
    reason = 'Non-error thrown (not printable)';
  }
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason;
}

export interface BackoffOptions { baseMs?: number; maxMs?: number; random?: () => number }

/**
 * Delay before retry `attempt` (0-based): exponential from `baseMs` (500 ms), capped at `maxMs` (30 s), with "equal
 * jitter" (half fixed, half random) so clients of a restarted service do not retry in lockstep.
 */
export function backoff(attempt: number, opts: BackoffOptions = {}): number {
  return backoffDelay(attempt, opts.baseMs ?? 500, opts.maxMs ?? 30_000, (opts.random ?? Math.random)());
}

/**
 * `AbortSignal.timeout(ms)`, held by its own timer. Node 20's `AbortSignal.any` holds its sources weakly, and the timer
 * of `AbortSignal.timeout` holds its signal weakly too: a timeout signal reachable only through `AbortSignal.any` can be
 * collected before it fires, and the request it guards then waits for ever (a held fetch under gc(): every time,
 * faults-timeout.test.ts). Aborts with a TimeoutError, as `AbortSignal.timeout`; the timer is unref'd, as its is.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const c = new AbortController();
  setTimeout(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
  return c.signal;
}

/** Waits `ms`; resolves false at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => { clearTimeout(t); resolve(false); };
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(true); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `fn` until it succeeds, retrying transient errors after `backoff(attempt, opts)`; a permanent error, or any
 * error once `signal` aborts, is thrown. `onRetry` sees each transient failure (log it: never retry silently).
 */
export async function retryTransient<T>(
  fn: () => Promise<T>,
  opts: BackoffOptions & { signal?: AbortSignal; onRetry?: (err: unknown, attempt: number) => void } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || opts.signal?.aborted) throw err;
      opts.onRetry?.(err, attempt);
      if (!(await sleep(backoff(attempt, opts), opts.signal))) throw err;
    }
  }
}
