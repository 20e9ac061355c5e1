// Reads behind informer-cache misses: an object a caller names explicitly (a flow to run right after `kubectl apply`,
// an execution id, a KV key) may exist on the server before our watch delivers it, so a miss is checked against the
// API server before it becomes a 404. Hostile callers can ask for names that never exist, so those checks are bounded:
// per key at most one read runs and one waits (callers arriving meanwhile share the waiting one, which starts after
// the running one, so it sees every write that finished before they asked), and a confirmed miss is answered from
// memory for KUBE_READ_MISS_TTL_MS. Reads that cover many keys (a full list) are also spaced apart.

import { createHash } from 'node:crypto';

export const READ_MISS_TTL_ENV = 'KUBE_READ_MISS_TTL_MS';
export const DEFAULT_READ_MISS_TTL_MS = 1000;
/** Confirmed misses remembered at most (oldest forgotten first). */
const MAX_MISSES = 10_000;

/** KUBE_READ_MISS_TTL_MS from the environment (default 1000; 0 remembers no miss). */
export function readMissTtlMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[READ_MISS_TTL_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_READ_MISS_TTL_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 3_600_000) {
    throw new Error(`${READ_MISS_TTL_ENV} must be a whole number of milliseconds between 0 and 3600000, got '${raw}'`);
  }
  return n;
}

/** Keys come from callers (URL paths): long ones are kept as their hash, so 10,000 remembered misses stay small. */
const keyOf = (key: string): string => (key.length <= 128 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`);

interface Flight { promise: Promise<unknown>; startedAt: number }

export class MissReads {
  /** key → when the read that found nothing started. */
  private readonly misses = new Map<string, number>();
  private readonly running = new Map<string, Flight>();
  private readonly waiting = new Map<string, Promise<unknown>>();
  private readonly lastStart = new Map<string, number>();
  /** Direct reads started (tests, metrics). */
  reads = 0;

  constructor(readonly ttlMs: number = DEFAULT_READ_MISS_TTL_MS, private readonly now: () => number = Date.now) {}

  /** Was `key` confirmed missing by a read that started less than the TTL ago? */
  knownMissing(key: string): boolean {
    key = keyOf(key);
    const at = this.misses.get(key);
    if (at === undefined) return false;
    if (this.now() - at < this.ttlMs) return true;
    this.misses.delete(key);
    return false;
  }

  /** Remembers that a read started at `startedAt` did not find `key`. */
  remember(key: string, startedAt: number): void {
    if (this.ttlMs <= 0) return;
    key = keyOf(key);
    this.misses.delete(key);
    this.misses.set(key, startedAt);
    if (this.misses.size > MAX_MISSES) this.misses.delete(this.misses.keys().next().value!);
  }

  /** The cache saw the object: a remembered miss no longer holds. */
  forget(key: string): void { this.misses.delete(keyOf(key)); }

  /**
   * Runs `read` under `flight` (one running, one waiting; `minGapMs` between two starts) and resolves with its value
   * and the time it started. A caller never shares a read that started before it asked.
   */
  async coalesce<T>(flight: string, read: () => Promise<T>, minGapMs = 0): Promise<{ value: T; startedAt: number }> {
    flight = keyOf(flight);
    const wait = this.waiting.get(flight);
    if (wait) return wait as Promise<{ value: T; startedAt: number }>;
    const current = this.running.get(flight);
    const start = (): Promise<{ value: T; startedAt: number }> => {
      const run = (async () => {
        const gap = (this.lastStart.get(flight) ?? -Infinity) + minGapMs - this.now();
        if (gap > 0) await new Promise((r) => setTimeout(r, gap));
        const startedAt = this.now();
        this.lastStart.set(flight, startedAt);
        this.reads++;
        return { value: await read(), startedAt };
      })();
      const flightRec = { promise: run, startedAt: this.now() };
      this.running.set(flight, flightRec);
      const done = (): void => {
        if (this.running.get(flight) === flightRec) this.running.delete(flight);
        if (this.lastStart.size > MAX_MISSES) this.lastStart.clear();
      };
      run.then(done, done);
      return run;
    };
    if (!current) return start();
    const next = current.promise.catch(() => undefined).then(() => {
      this.waiting.delete(flight);
      return start();
    });
    this.waiting.set(flight, next);
    return next;
  }

  /**
   * The usual shape: answered from memory when `key` is a known miss, else `read` (coalesced per key); a result of
   * undefined is remembered as a miss.
   */
  async read<T>(key: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    if (this.knownMissing(key)) return undefined;
    const { value, startedAt } = await this.coalesce(key, read);
    if (value === undefined) this.remember(key, startedAt);
    return value;
  }
}
