// The runner's own I/O under a deadline (RUNNER_START_TIMEOUT_MS): what it needs before the task can run (the KV
// cache's first list, internal storage, the log store, the attempt input) and the write of its result. Transient
// failures (operator/faults.ts) are retried with capped backoff until the deadline, a permanent one fails at once;
// either way the error is a RunnerFailure naming what failed. The deadline's timer is ref'd: the process stays up
// while it waits, whatever the clients it waits on do with their own timers.
import { LIMIT_SETTINGS } from '../operator/core/limits.js';
import { backoff, isTransient, reasonOf, sleep } from '../operator/faults.js';

/** The runner itself failed (not the task): it exits with RUNNER_FAILURE_EXIT_CODE and the operator makes a new attempt. */
export class RunnerFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RunnerFailure';
  }
}

/** SIGTERM (or SIGINT) arrived while the runner waited: the attempt was killed before it ran. */
export class RunnerKilled extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunnerKilled';
  }
}

const SETTING = LIMIT_SETTINGS.runnerStartTimeoutMs.env;

/** Rejects when `signal` aborts (never otherwise); handled, so an unused one is no unhandled rejection. */
function aborted(signal: AbortSignal): Promise<never> {
  const p = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  p.catch(() => {});
  return p;
}

export class Deadline {
  private readonly ac = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly started = Date.now();

  /**
   * @param ms how long the I/O may keep failing (RUNNER_START_TIMEOUT_MS)
   * @param log where retries are reported (the Pod's log): never retry silently
   * @param kill aborts the wait at once (SIGTERM)
   */
  constructor(readonly ms: number, private readonly log: (line: string) => void, private readonly kill?: AbortSignal) {
    this.timer = setTimeout(() => this.ac.abort(new Error('deadline')), ms); // ref'd on purpose (see the file's head)
    if (kill) {
      if (kill.aborted) this.ac.abort(kill.reason);
      else kill.addEventListener('abort', () => this.ac.abort(kill.reason), { once: true });
    }
  }

  get signal(): AbortSignal { return this.ac.signal; }

  /** Releases the timer (call when the guarded I/O is done). */
  done(): void { clearTimeout(this.timer); }

  /** Runs `fn` until it succeeds, retrying transient failures with capped backoff until the deadline. */
  async retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let last: unknown;
    for (let i = 0; ; i++) {
      let err: unknown;
      try {
        return await Promise.race([fn(), aborted(this.ac.signal)]);
      } catch (e) {
        err = e;
      }
      if (this.ac.signal.aborted) throw this.ended(what, err === this.ac.signal.reason ? last : err);
      if (!isTransient(err)) throw new RunnerFailure(`${what} failed: ${reasonOf(err)}`, { cause: err });
      last = err;
      const delay = backoff(i, { baseMs: 250, maxMs: 10_000 });
      this.log(`${what} failed (${reasonOf(err)}); retrying in ${delay} ms (until ${SETTING} = ${this.ms} ms have passed)`);
      if (!(await sleep(delay, this.ac.signal))) throw this.ended(what, err);
    }
  }

  /**
   * Waits for `ready` (a cache's first list) until the deadline. `failures` rejects with a permanent failure seen
   * meanwhile (it ends the wait at once); `lastError` gives the last transient one, for the reason.
   */
  async wait<T>(what: string, ready: Promise<T>, failures: Promise<never>, lastError: () => unknown): Promise<T> {
    try {
      return await Promise.race([ready, failures, aborted(this.ac.signal)]);
    } catch (err) {
      if (this.ac.signal.aborted) throw this.ended(what, lastError());
      throw new RunnerFailure(`${what} failed: ${reasonOf(err)}`, { cause: err });
    }
  }

  private ended(what: string, last: unknown): Error {
    if (this.kill?.aborted) return new RunnerKilled(`${reasonOf(this.kill.reason)} while ${what}`);
    const why = last === undefined ? 'no answer' : reasonOf(last);
    return new RunnerFailure(`${what}: still failing after ${Date.now() - this.started} ms (${SETTING} = ${this.ms}): ${why}`, { cause: last });
  }
}
