// MultipleCondition: fires once every named condition has been met inside the current time window, then starts
// over. The window (start, end, which names were met) is durable in the TriggerStateStore, one record per
// (flow, trigger, condition id) with the trigger id `<triggerId>/<conditionId>` (a `/` never appears in a trigger
// id), and updated by compare-and-set so two concurrent evaluations cannot both fire.
import { DateTime, Duration } from 'luxon';
import { dictFrom } from '../../core/keyed.js';
import { isDuration, parseDuration } from '../../model/duration.js';
import { ConflictError, type TriggerStateStore } from '../../store/types.js';
import { ConditionError } from './dates.js';

export interface WindowSpec {
  /** ISO 8601 duration, default P1D. */
  window: string;
  /** ISO 8601 duration, default PT0S. */
  windowAdvance: string;
  /** Start over after firing (default true). Without it, every matching event fires while all are met. */
  resetOnSuccess: boolean;
}

export interface WindowState { start: string; end: string; results: Record<string, true>; spec: string }

function millis(iso: string, what: string): number {
  if (!isDuration(iso)) throw new ConditionError(`\`${String(iso)}\` is not an ISO 8601 duration (${what})`);
  return parseDuration(iso);
}

/**
 * The window containing `now`, aligned as Kestra aligns it: a window of a day or more starts at midnight, of an hour
 * or more at the top of the hour, otherwise at a multiple of its minutes; then shifted by `windowAdvance`. When the
 * advance puts the start after `now`, the previous window (one length earlier) is the one containing `now`.
 */
export function windowAt(now: Date, spec: Pick<WindowSpec, 'window' | 'windowAdvance'>, zone = 'UTC'): { start: Date; end: Date } {
  const length = millis(spec.window, 'window');
  if (length <= 0) throw new ConditionError('MultipleCondition `window` must be positive');
  const advance = millis(spec.windowAdvance, 'windowAdvance');
  const minutes = Math.floor(length / 60_000);
  let t = DateTime.fromJSDate(now, { zone }).set({ millisecond: 0 });
  if (length >= 86_400_000) t = t.startOf('day');
  else if (length >= 3_600_000) t = t.startOf('hour');
  else if (minutes > 0) t = t.set({ second: 0, minute: minutes * Math.floor(t.minute / minutes) });
  let start = t.plus(Duration.fromMillis(advance));
  while (start.toMillis() > now.getTime()) start = start.minus(Duration.fromMillis(length));
  while (start.toMillis() + length <= now.getTime()) start = start.plus(Duration.fromMillis(length));
  return { start: start.toJSDate(), end: new Date(start.toMillis() + length) };
}

const specKey = (spec: WindowSpec): string => `${spec.window}|${spec.windowAdvance}`;

/**
 * Pure step: the stored window (if still current and of the same spec) merged with the names met now.
 * Returns whether it fires and the state to store (undefined: nothing to write).
 */
export function stepWindow(
  stored: WindowState | undefined, met: string[], names: string[], spec: WindowSpec, now: Date, zone = 'UTC',
): { fires: boolean; next?: WindowState } {
  const t = now.getTime();
  const current = stored && stored.spec === specKey(spec) && Date.parse(stored.start) <= t && t < Date.parse(stored.end)
    ? stored : undefined;
  const base: WindowState = current ?? (() => {
    const w = windowAt(now, spec, zone);
    return { start: w.start.toISOString(), end: w.end.toISOString(), results: {}, spec: specKey(spec) };
  })();
  const fresh = met.filter((n) => !Object.hasOwn(base.results, n));
  if (met.length === 0) return { fires: false };
  // Keyed by condition names the flow author chose: prototype-free, own keys only.
  const results = dictFrom<true>(Object.entries(base.results));
  for (const n of met) results[n] = true;
  const fires = names.every((n) => Object.hasOwn(results, n));
  if (fires && spec.resetOnSuccess) return { fires, next: { ...base, results: {} } };
  if (fresh.length === 0 && current) return { fires };
  return { fires, next: { ...base, results } };
}

export interface MultipleKey { namespace: string; flowId: string; triggerId: string; conditionId: string }

export const multipleStateId = (k: MultipleKey): string => `${k.triggerId}/${k.conditionId}`;

/** Applies `met` to the durable window with compare-and-set (retried on conflict); true when it fires. */
export async function recordMultiple(
  store: TriggerStateStore, key: MultipleKey, met: string[], names: string[], spec: WindowSpec, clock: () => Date, zone = 'UTC',
): Promise<boolean> {
  const triggerId = multipleStateId(key);
  for (let attempt = 0; attempt < 20; attempt++) {
    const rec = await store.get(key.namespace, key.flowId, triggerId);
    const stored = rec?.state.window as WindowState | undefined;
    const { fires, next } = stepWindow(stored, met, names, spec, clock(), zone);
    if (!next) return fires;
    try {
      await store.put({ namespace: key.namespace, flowId: key.flowId, triggerId, state: { window: next } }, rec?.version ?? 0);
      return fires;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  throw new Error(`MultipleCondition ${triggerId}: too many concurrent updates`);
}
