// Restarting client-node informers after their watch ends: a watch the server (or a proxy in front of it) closes at
// its timeout reaches the informer as an error ("Premature close" from node-fetch), every few minutes, on every
// informer. That end is routine: the watch restarts at once from its last resourceVersion and nothing is logged. Real
// failures (connection refused, 403, 5xx...) restart with a capped backoff and are reported once per failure streak.
import { backoff } from '../faults.js';

/** Is `err` the end of a watch stream rather than a failure (node-fetch's "Premature close" of a closed chunked stream)? */
export function isWatchEnd(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
    if (typeof message === 'string' && /premature close/i.test(message)) return true;
  }
  return false;
}

/** Watch ends closer together than this are not routine (a server or proxy dropping every watch at once): they back off. */
export const MIN_ROUTINE_GAP_MS = 1000;

/**
 * Decides, for one informer, what an error means: `routine` (restart now, say nothing), or a failure (restart after
 * `delayMs`; `report` is true for the first failure of a streak). A routine end or `ok()` ends a failure streak.
 */
export class WatchRestarts {
  private failures = 0;
  private lastEnd = -Infinity;

  constructor(private readonly baseMs = 250, private readonly now: () => number = Date.now, private readonly minGapMs = MIN_ROUTINE_GAP_MS) {}

  next(err: unknown): { routine: true } | { routine: false; report: boolean; delayMs: number } {
    const t = this.now();
    if (isWatchEnd(err) && t - this.lastEnd >= this.minGapMs) {
      this.lastEnd = t;
      this.failures = 0;
      return { routine: true };
    }
    this.failures++;
    return { routine: false, report: this.failures === 1, delayMs: backoff(this.failures - 1, { baseMs: this.baseMs, maxMs: 30_000 }) };
  }

  /** Something arrived (an event, a successful list): the current failure streak is over. */
  ok(): void { this.failures = 0; }

  get failing(): number { return this.failures; }
}

interface Restartable {
  start(): Promise<void>;
  on(verb: 'error', cb: (err: unknown) => void): void;
  on(verb: 'add' | 'update' | 'delete', cb: (obj: never) => void): void;
}

/**
 * Installs the error handler of an informer: routine watch ends restart it at once, failures restart it with backoff
 * (first delay `baseMs`) and `report` the first of each streak. Timers are unref'd and added to `timers` (cleared by the
 * caller on stop).
 */
export function restartOnWatchError(
  inf: Restartable, o: { report: (err: unknown) => void; stopped: () => boolean; timers?: Set<NodeJS.Timeout> }, baseMs = 250,
): WatchRestarts {
  const restarts = new WatchRestarts(baseMs);
  const ok = (): void => restarts.ok();
  inf.on('add', ok);
  inf.on('update', ok);
  inf.on('delete', ok);
  const onError = (err: unknown): void => {
    if (o.stopped()) return;
    const d = restarts.next(err);
    if (d.routine) { inf.start().catch(onError); return; }
    if (d.report) o.report(err);
    const t = setTimeout(() => { o.timers?.delete(t); if (!o.stopped()) inf.start().catch(onError); }, d.delayMs);
    t.unref();
    o.timers?.add(t);
  };
  inf.on('error', onError);
  return restarts;
}
