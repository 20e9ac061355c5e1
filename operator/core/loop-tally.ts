// Counts of a one-task loop's children kept with the run index (run-index.ts), so that resolving a 100,000-child loop
// costs the children a step replaced or created, not a walk of all of them: how many run, the worst end, which
// iterations have their run. The index marks a child to count again when it puts a copy in its place; a child that can
// still change (not frozen) is counted again at every resolution until it is frozen. Forked with the index, copied on
// first change. `loopTally` answers undefined when the children do not fit (a branch run, an iteration twice or out of
// range): the resolver walks them then.
import type { RunIndex } from './run-index.js';
import type { TaskRun } from './types.js';
import { isTerminal } from './types.js';

/** 0: not counted; 1: running; 2: ended otherwise (SUCCESS...); 3: WARNING; 4: FAILED; 5: KILLED. */
const CODE: Record<string, number> = { WARNING: 3, FAILED: 4, KILLED: 5 };
const codeOf = (run: TaskRun): number => (isTerminal(run.state.current) ? CODE[run.state.current] ?? 2 : 1);
const FINAL = ['SUCCESS', 'SUCCESS', 'SUCCESS', 'WARNING', 'FAILED', 'KILLED'] as const;

export interface LoopCounts {
  /** Children still going. */
  running: number;
  /** The worst end among the ended children (SUCCESS when none). */
  worst: 'SUCCESS' | 'WARNING' | 'FAILED' | 'KILLED';
  /** Iterations 0..started-1 have their run, the others none. */
  started: number;
}

interface Tally {
  count: number;
  codes: Uint8Array;
  /** Children counted so far (positions below it). */
  seen: number;
  counts: number[];
  /** Iterations with a run: every one below `started` (children came in iteration order, else the tally is not valid). */
  started: number;
  maxIteration: number;
  /** Positions to count again (replaced, or not frozen when last counted). */
  dirty: Set<number>;
  valid: boolean;
  /** Shared with the index this one was forked from: copied before any change. */
  shared: boolean;
}

const tallies = new WeakMap<RunIndex, Map<string, Tally>>();

/** The tallies of a fork: the same objects, each copied on its first change in the fork. */
export function forkTallies(from: RunIndex, to: RunIndex): void {
  const own = tallies.get(from);
  if (!own) return;
  for (const t of own.values()) t.shared = true;
  tallies.set(to, new Map(own));
}

/** The index put a copy of the child at `sibling` of `parentKey` in place: counted again at the next resolution. */
export function markReplaced(index: RunIndex, parentKey: string, sibling: number): void {
  const t = tallies.get(index)?.get(parentKey);
  if (t && sibling < t.seen) mine(index, parentKey, t).dirty.add(sibling);
}

function mine(index: RunIndex, key: string, t: Tally): Tally {
  if (!t.shared) return t;
  const copy: Tally = { ...t, codes: t.codes.slice(), counts: t.counts.slice(), dirty: new Set(t.dirty), shared: false };
  tallies.get(index)!.set(key, copy);
  return copy;
}

/** The counts of the main-branch children `children` (those of `parentId` in `index`) of a loop of `count` values. */
export function loopTally(index: RunIndex, parentId: string, children: readonly TaskRun[], count: number): LoopCounts | undefined {
  let map = tallies.get(index);
  if (!map) tallies.set(index, map = new Map());
  let t = map.get(parentId);
  if (t && t.count !== count) t = undefined;
  if (!t) {
    t = { count, codes: new Uint8Array(Math.max(16, children.length)), seen: 0, counts: [0, 0, 0, 0, 0, 0], started: 0, maxIteration: -1, dirty: new Set(), valid: true, shared: false };
    map.set(parentId, t);
  }
  if (!t.valid) return undefined;
  if (t.dirty.size || t.seen < children.length) {
    t = mine(index, parentId, t);
    for (const at of [...t.dirty]) recount(t, children, at);
    if (t.codes.length < children.length) {
      const codes = new Uint8Array(Math.max(children.length, t.codes.length * 2));
      codes.set(t.codes);
      t.codes = codes;
    }
    for (; t.seen < children.length; t.seen++) {
      const run = children[t.seen]!;
      const i = run.iteration ?? -1;
      // Children are created in iteration order, one per iteration: anything else is left to the resolver's walk.
      if (run.branch || i !== t.maxIteration + 1 || i >= count) { t.valid = false; return undefined; }
      t.started++;
      t.maxIteration = Math.max(t.maxIteration, i);
      recount(t, children, t.seen);
    }
  }
  let worst = 2;
  for (let c = 5; c > 2; c--) if (t.counts[c]) { worst = c; break; }
  return { running: t.counts[1]!, worst: FINAL[worst]!, started: t.started };
}

function recount(t: Tally, children: readonly TaskRun[], at: number): void {
  const run = children[at]!;
  const code = codeOf(run);
  t.counts[t.codes[at]!]!--;
  t.codes[at] = code;
  t.counts[code]!++;
  if (Object.isFrozen(run)) t.dirty.delete(at); else t.dirty.add(at);
}
