// The runner's deadline for its own I/O, in process: transient failures retried (and logged) until success or the
// deadline, permanent ones failing at once, a kill signal ending the wait, waits on a promise that a permanent failure
// ends early. Real timers with short deadlines; outcomes asserted, not durations.
import { describe, expect, it } from 'vitest';
import { PermanentError, TransientError } from '../operator/faults.js';
import { Deadline, RunnerFailure, RunnerKilled } from './deadline.js';

const never = new Promise<never>(() => {});

describe('Deadline', () => {
  it('retries transient failures until the call succeeds, logging each', async () => {
    const lines: string[] = [];
    const d = new Deadline(60_000, (l) => lines.push(l));
    let calls = 0;
    const value = await d.retry('reading x', async () => { if (++calls < 3) throw new TransientError('503 busy'); return 'ok'; });
    d.done();
    expect(value).toBe('ok');
    expect(calls).toBe(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^reading x failed \(503 busy\); retrying in \d+ ms \(until RUNNER_START_TIMEOUT_MS = 60000 ms have passed\)$/);
  });

  it('a permanent failure ends at once as a RunnerFailure naming what failed', async () => {
    const d = new Deadline(60_000, () => {});
    let calls = 0;
    const err = await d.retry('reading x', async () => { calls++; throw new PermanentError('no such input'); }).catch((e: unknown) => e);
    d.done();
    expect(err).toBeInstanceOf(RunnerFailure);
    expect((err as Error).message).toBe('reading x failed: no such input');
    expect(calls).toBe(1);
  });

  it('past the deadline: a RunnerFailure with the setting and the last transient error', async () => {
    const d = new Deadline(300, () => {});
    const err = await d.retry('reading x', async () => { throw new TransientError('connection refused'); }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunnerFailure);
    expect((err as Error).message).toMatch(/^reading x: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 300\): connection refused$/);
  });

  it('a call that never answers is cut at the deadline', async () => {
    const d = new Deadline(200, () => {});
    const err = await d.retry('reading x', () => never).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^reading x: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 200\): no answer$/);
  });

  it('the kill signal ends a wait as RunnerKilled', async () => {
    const kill = new AbortController();
    const d = new Deadline(60_000, () => {}, kill.signal);
    const waiting = d.wait('listing KV pairs', never, never, () => undefined).catch((e: unknown) => e);
    kill.abort(new Error('Task killed (SIGTERM)'));
    const err = await waiting;
    d.done();
    expect(err).toBeInstanceOf(RunnerKilled);
    expect((err as Error).message).toBe('Task killed (SIGTERM) while listing KV pairs');
  });

  it('wait: resolves with the promise, fails at once on a permanent failure, names the last error at the deadline', async () => {
    const d = new Deadline(60_000, () => {});
    expect(await d.wait('listing KV pairs', Promise.resolve(7), never, () => undefined)).toBe(7);
    const refused = await d.wait('listing KV pairs', never, Promise.reject(new Error('403: forbidden')), () => undefined).catch((e: unknown) => e);
    d.done();
    expect((refused as Error).message).toBe('listing KV pairs failed: 403: forbidden');
    const short = new Deadline(200, () => {});
    const late = await short.wait('listing KV pairs', never, never, () => new Error('503: unavailable')).catch((e: unknown) => e);
    expect((late as Error).message).toMatch(/^listing KV pairs: still failing after \d+ ms \(RUNNER_START_TIMEOUT_MS = 200\): 503: unavailable$/);
  });
});
