// Reconnect delays of realtime listeners (exponential, capped, jittered) and an abortable sleep; re-exported by
// ./runtime.ts. Separate so the sources can use them without importing the runtime (which imports the sources).
export interface BackoffOptions { baseMs?: number; maxMs?: number; random?: () => number }

/**
 * Delay before reconnect attempt `attempt` (0-based): exponential from `baseMs` (500 ms), capped at `maxMs` (30 s),
 * with "equal jitter" (half fixed, half random) so listeners of a restarted service do not reconnect in lockstep.
 */
export function backoff(attempt: number, opts: BackoffOptions = {}): number {
  const base = opts.baseMs ?? 500;
  const cap = Math.min(opts.maxMs ?? 30_000, base * 2 ** Math.min(Math.max(attempt, 0), 30));
  return Math.round(cap / 2 + (opts.random ?? Math.random)() * (cap / 2));
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
