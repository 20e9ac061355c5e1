// The one capped, jittered backoff formula of the project, pure (randomness injected) so the engine core can use it
// too; operator/faults.ts `backoff` is this formula with its defaults.

/**
 * Delay before retry `attempt` (0-based): exponential from `baseMs`, capped at `maxMs`, with "equal jitter" (half
 * fixed, half `random` in [0, 1)), so clients of a restarted service do not retry in lockstep.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 30));
  return Math.round(cap / 2 + random * (cap / 2));
}
