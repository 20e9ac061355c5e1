// Retry policy: whether a failed attempt gets another one, and after which delay (constant, exponential, random).
import { parseDuration } from '../model/index.js';
import type { RetryPolicy } from './types.js';

/**
 * @param failedAttempts attempts made so far (all failed), >= 1
 * @param elapsedMs time since the first attempt started
 * @param random a number in [0, 1) (injected so the engine stays deterministic)
 * @returns delay in ms before the next attempt, or undefined when no attempt remains
 */
export function nextRetryDelay(policy: RetryPolicy | undefined, failedAttempts: number, elapsedMs: number, random: number): number | undefined {
  if (!policy) return undefined;
  const maxAttempt = policy.maxAttempt;
  // Kestra counts maxAttempt as the total number of attempts.
  if (maxAttempt !== undefined && failedAttempts >= maxAttempt) return undefined;
  const delay = delayFor(policy, failedAttempts, random);
  if (policy.maxDuration !== undefined && elapsedMs + delay > parseDuration(policy.maxDuration)) return undefined;
  if (maxAttempt === undefined && policy.maxDuration === undefined) return undefined;
  return delay;
}

function delayFor(policy: RetryPolicy, failedAttempts: number, random: number): number {
  const d = (v: string | undefined, dflt = 0) => (v ? parseDuration(v) : dflt);
  switch (policy.type) {
    case 'constant':
      return d(policy.interval);
    case 'exponential': {
      const base = d(policy.interval, 1000);
      const factor = policy.delayFactor ?? 2;
      const raw = base * Math.pow(factor, failedAttempts - 1);
      return policy.maxInterval ? Math.min(raw, d(policy.maxInterval)) : raw;
    }
    case 'random': {
      const min = d(policy.minInterval);
      const max = d(policy.maxInterval, min);
      return Math.floor(min + random * Math.max(0, max - min));
    }
  }
}
