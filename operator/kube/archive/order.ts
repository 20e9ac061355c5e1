// The one order of execution searches in cluster mode (start date newest first, then id descending; the archive's SQL
// ORDER BY matches it) and the merge of one page of live executions with one window of archived ones. Pure.
import type { Execution } from '../../core/types.js';

/** Start date in ms; an unreadable date sorts last (-Infinity), like NULLS LAST in the archive. */
export function startMs(e: Execution): number {
  const ms = Date.parse(e.state.startDate);
  return Number.isFinite(ms) ? ms : -Infinity;
}

/** Newest start first, then id descending by code unit (the archive orders ids with COLLATE "C"). */
export function newestFirst(a: Execution, b: Execution): number {
  const sa = startMs(a), sb = startMs(b);
  if (sa !== sb) return sa > sb ? -1 : 1;
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1;
}

/**
 * Where to read the archive for merged rows [offset, offset+limit): with `live` matches beside it, archived row i
 * lands at i + (live rows before it) ≥ i, and at most `live` rows precede it, so rows before
 * `offset - live` cannot reach the page and `limit + live` rows from there cover it.
 */
export function archiveWindow(offset: number, limit: number | undefined, live: number): { offset: number; limit: number | undefined } {
  const from = Math.max(0, offset - live);
  return { offset: from, limit: limit === undefined ? undefined : limit + (offset - from) };
}

/**
 * Rows [offset, offset+limit) of the merge of `live` (every live match, sorted by newestFirst) and the archive, given
 * `window`: the archived matches from position `windowOffset` on, as read with archiveWindow (sorted the same way).
 * Each row's merged position is exact: an archived row's is its archive position plus the live rows before it; a live
 * row's is its live position plus the archived rows before it (those before the window are all of them when it
 * precedes the window's first row, which archiveWindow shows to lie before the page).
 */
export function mergePage(live: readonly Execution[], window: readonly Execution[], windowOffset: number, offset: number, limit: number | undefined): Execution[] {
  const end = limit === undefined ? Infinity : offset + limit;
  const placed: { at: number; e: Execution }[] = [];
  let j = 0;
  window.forEach((a, i) => {
    while (j < live.length && newestFirst(live[j]!, a) < 0) j++;
    placed.push({ at: windowOffset + i + j, e: a });
  });
  let i = 0;
  live.forEach((l, k) => {
    while (i < window.length && newestFirst(window[i]!, l) < 0) i++;
    placed.push({ at: windowOffset + i + k, e: l });
  });
  return placed.filter((p) => p.at >= offset && p.at < end).sort((a, b) => a.at - b.at).map((p) => p.e);
}
