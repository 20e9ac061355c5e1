// Loop and control flowables: the value loops (EachSequential, EachParallel, ForEach: one definition of an iteration
// over rendered values), LoopUntil (alias WaitFor) repeating its tasks until a condition holds, an interval apart (a
// timer, never a busy loop), and Exit, which ends the whole execution in a chosen state.
import { parseDuration } from '../model/index.js';
import type { StepContext } from './engine-types.js';
import { loopOverflow } from './budget.js';
import { countProperty, type ExitState, memo, type Resolution, tasksOf, withHandlers } from './flowable-kit.js';
import { type Final, parallelGroup, sequentialGroup } from './groups.js';
import { parseJsonSafe } from './keyed.js';
import { childrenOf, type ChildSpec, log, roomToCreate, variablesFor } from './runs.js';
import { type LoopCounts, loopTally } from './loop-tally.js';
import { isFailure, mergeStates, worseState } from './state.js';
import { truthy } from './truth.js';
import type { Task, TaskRun } from './types.js';
import { isTerminal } from './types.js';

type ValuesProperty = 'value' | 'values';

/**
 * The loop's values, rendered once: a list, or a JSON string / expression yielding one; objects become their JSON
 * text. As in Kestra, duplicates collapse into one iteration and a null value is refused.
 */
function loopValues(ctx: StepContext, run: TaskRun, task: Task, prop: ValuesProperty): string[] {
  return memo(run, 'values', () => {
    let v = ctx.deps.renderer.renderTyped(task[prop], variablesFor(ctx, run, task));
    if (typeof v === 'string') {
      try { v = parseJsonSafe(v); } catch { throw new Error(`${prop}: expected a list or a JSON array, got '${String(v).slice(0, 100)}'`); }
    }
    if (!Array.isArray(v)) throw new Error(`${prop}: expected a list, got ${v === null ? 'null' : typeof v}`);
    return distinctTexts(v, prop);
  });
}

/** A value's text as an iteration sees it: a string as is, a finite number or a boolean as JSON writes it, else its JSON. */
function valueText(x: unknown): string {
  if (typeof x === 'string') return x;
  if ((typeof x === 'number' && Number.isFinite(x)) || typeof x === 'boolean') return String(x);
  return JSON.stringify(x);
}

/**
 * The texts of `values` in order, duplicates left out. A rising run of numbers (a `range()`: 100,000 values) cannot
 * repeat (distinct numbers have distinct texts), so no set is kept until a value breaks it: the set then starts with
 * what came before. Same result as a set over every text, without a set of 100,000 strings for a range.
 */
export function distinctTexts(values: readonly unknown[], prop: string): string[] {
  const out: string[] = [];
  let seen: Set<string> | undefined;
  let last = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (x === null || x === undefined) throw new Error(`${prop}: the value at position ${i} is null`);
    const s = valueText(x);
    if (!seen && typeof x === 'number' && x > last) { last = x; out.push(s); continue; }
    seen ??= new Set(out);
    if (!seen.has(s)) { seen.add(s); out.push(s); }
  }
  return out;
}

/** The loop's values and body; a loop that has not started yet is refused when its values cannot fit (budget.ts). */
function loopOf(ctx: StepContext, run: TaskRun, task: Task, prop: ValuesProperty): { values: string[]; tasks: Task[]; refused?: Resolution } {
  const values = loopValues(ctx, run, task, prop);
  const tasks = tasksOf(task.tasks);
  const over = childrenOf(ctx, run.id).length === 0 ? loopOverflow(ctx, run, task, values.length, tasks) : undefined;
  return { values, tasks, ...(over ? { refused: { create: [], state: 'FAILED', error: over.message } } : {}) };
}

/** Main-branch children by loop iteration (a sparse array: iterations not started yet are holes). */
function groupByIteration(runs: readonly TaskRun[]): TaskRun[][] {
  const byIteration: TaskRun[][] = [];
  for (const r of runs) {
    const i = r.iteration ?? -1;
    if (i < 0) continue;
    const list = byIteration[i];
    if (list) list.push(r); else byIteration[i] = [r];
  }
  return byIteration;
}

/**
 * The run of each iteration of a one-task loop (holes: not started), without an array per iteration (a 100,000-value
 * fan-out resolves on every step); undefined when an iteration has more than one run (then `groupByIteration`).
 */
function runPerIteration(runs: readonly TaskRun[], count: number): { one: (TaskRun | undefined)[]; going: number } | undefined {
  const one = new Array<TaskRun | undefined>(count);
  let going = 0;
  for (const r of runs) {
    if (!isTerminal(r.state.current)) going++;
    const i = r.iteration ?? -1;
    if (i < 0 || i >= count) continue;
    if (one[i]) return undefined;
    one[i] = r;
  }
  return { one, going };
}

/** The kept counts of a one-task loop's children (loop-tally.ts), when `runs` are all of them (no branch run left out). */
function tallyOf(ctx: StepContext, run: TaskRun, tasks: Task[], runs: readonly TaskRun[], count: number): LoopCounts | undefined {
  return tasks.length === 1 && runs === childrenOf(ctx, run.id) ? loopTally(ctx.runs, run.id, runs, count) : undefined;
}

/** `settled` of an iteration with a single run. */
const settledOne = (run: TaskRun): Final | 'running' => (isTerminal(run.state.current) ? worseState('SUCCESS', run.state.current) : 'running');

/**
 * An iteration that has a run for every task (the common case once a loop is under way) without the group functions:
 * 'running' while one of them runs, else the worst of their states; undefined when some task has no run yet.
 */
function settled(mine: readonly TaskRun[] | undefined, tasks: Task[]): Final | 'running' | undefined {
  if (!mine || mine.length < tasks.length) return undefined;
  let state: Final = 'SUCCESS';
  for (const r of mine) {
    if (!isTerminal(r.state.current)) return 'running';
    state = worseState(state, r.state.current);
  }
  return state;
}

/**
 * The tasks run one after the other for each value, `limit` values at a time (0: all at once), started in value
 * order; once an iteration failed no new one starts, and the loop ends when the running ones have.
 * EachSequential is this with a limit of 1; ForEach with its `concurrencyLimit`.
 */
function iterate(ctx: StepContext, run: TaskRun, task: Task, prop: ValuesProperty, limit: number): Resolution {
  const { values, tasks, refused } = loopOf(ctx, run, task, prop);
  if (refused) return refused;
  return withHandlers(ctx, run, task, (runs) => {
    if (tasks.length === 0) return { create: [], state: 'SUCCESS' };
    const tally = tallyOf(ctx, run, tasks, runs, values.length);
    if (tally) {
      // One task, one run per iteration, in order: the counts kept with the index, not a walk of the children.
      const failed = isFailure(tally.worst);
      const create: ChildSpec[] = [];
      const room = roomToCreate(ctx);
      let active = tally.running;
      for (let i = tally.started; !failed && i < values.length && (limit <= 0 || active < limit); i++, active++) {
        if (create.length >= room) { ctx.more = true; break; }
        create.push({ task: tasks[0]!, branch: 'tasks', value: values[i], iteration: i });
      }
      return create.length || active > 0 ? { create } : { create: [], state: tally.worst };
    }
    const one = tasks.length === 1 ? runPerIteration(runs, values.length)?.one : undefined;
    const byIteration = one ? undefined : groupByIteration(runs);
    const create: ChildSpec[] = [];
    let state: Final = 'SUCCESS';
    let active = 0;
    let failed = false;
    let next = values.length;
    for (let i = 0; i < values.length; i++) {
      let s: Final | 'running' | undefined;
      if (one) {
        const mine = one[i];
        if (!mine) { next = i; break; } // iterations start in order: the rest have not started
        s = settledOne(mine);
      } else {
        const mine = byIteration![i];
        if (!mine) { next = i; break; }
        s = settled(mine, tasks);
        if (s === undefined) {
          const r = sequentialGroup(tasks, mine, { branch: 'tasks', value: values[i], iteration: i });
          if (r.state === undefined) { create.push(...r.create); s = 'running'; } else s = r.state;
        }
      }
      if (s === 'running') { active++; continue; }
      state = worseState(state, s);
      if (isFailure(s)) failed = true;
    }
    // Not more than the step may create (a 100,000-value loop would list 100,000 specs per pass): the rest next step.
    const room = roomToCreate(ctx);
    for (let i = next; !failed && i < values.length && (limit <= 0 || active < limit); i++, active++) {
      if (create.length >= room) { ctx.more = true; break; }
      create.push({ task: tasks[0]!, branch: 'tasks', value: values[i], iteration: i });
    }
    return create.length || active > 0 ? { create } : { create: [], state };
  });
}

export const eachSequential = (ctx: StepContext, run: TaskRun, task: Task): Resolution => iterate(ctx, run, task, 'value', 1);

export const forEach = (ctx: StepContext, run: TaskRun, task: Task): Resolution =>
  iterate(ctx, run, task, 'values', countProperty(ctx, run, task, 'concurrencyLimit', 1, 0));

/** EachParallel: every task of every value in parallel, `concurrent` task runs at a time (0: no limit). */
export function eachParallel(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const { values, tasks, refused } = loopOf(ctx, run, task, 'value');
  if (refused) return refused;
  const limit = countProperty(ctx, run, task, 'concurrent', 0, 0);
  return withHandlers(ctx, run, task, (runs) => {
    const create: ChildSpec[] = [];
    let state: Final = 'SUCCESS';
    let pending = false;
    let active = 0;
    const tally = tallyOf(ctx, run, tasks, runs, values.length);
    if (tally) {
      // One task, one run per iteration, in order: the counts kept with the index, not a walk of the children.
      const room = roomToCreate(ctx);
      active = tally.running;
      for (let i = tally.started; i < values.length; i++) {
        if (limit > 0 && active >= limit) break;
        if (create.length >= room) { ctx.more = true; break; }
        create.push({ task: tasks[0]!, branch: 'tasks', value: values[i], iteration: i });
        active++;
      }
      return create.length || tally.running > 0 || tally.started < values.length ? { create } : { create: [], state: tally.worst };
    }
    const perIteration = tasks.length === 1 ? runPerIteration(runs, values.length) : undefined;
    if (perIteration) {
      const { one } = perIteration;
      active = perIteration.going;
      const room = roomToCreate(ctx); // the rest are listed by the next step's resolution
      // One task: an iteration is its run, or a run to create while the limit allows (pending either way).
      for (let i = 0; i < values.length; i++) {
        const mine = one[i];
        const s = mine ? settledOne(mine) : 'running';
        if (s !== 'running') { state = worseState(state, s); continue; }
        pending = true;
        if (mine || (limit > 0 && active >= limit)) continue;
        if (create.length >= room) { ctx.more = true; continue; }
        create.push({ task: tasks[0]!, branch: 'tasks', value: values[i], iteration: i });
        active++;
      }
      return create.length || pending ? { create } : { create: [], state };
    }
    for (const x of runs) if (!isTerminal(x.state.current)) active++;
    const byIteration = groupByIteration(runs);
    for (let i = 0; i < values.length; i++) {
      const mine = byIteration[i];
      const s = settled(mine, tasks);
      if (s === 'running') { pending = true; continue; }
      if (s !== undefined) { state = worseState(state, s); continue; }
      const mineActive = mine ? mine.filter((x) => !isTerminal(x.state.current)).length : 0;
      const r = parallelGroup(tasks, mine ?? [], { branch: 'tasks', value: values[i], iteration: i }, limit, active - mineActive);
      create.push(...r.create);
      active += r.create.length;
      if (r.state === undefined) pending = true; else state = worseState(state, r.state);
    }
    return create.length || pending ? { create } : { create: [], state };
  });
}

interface CheckFrequency { maxIterations?: number; maxDurationMs?: number; intervalMs: number; failOnMaxReached: boolean }

/** Kestra's default interval between two LoopUntil iterations. */
const DEFAULT_INTERVAL = 'PT1M';

function checkFrequencyOf(ctx: StepContext, run: TaskRun, task: Task): CheckFrequency {
  const vars = variablesFor(ctx, run, task);
  const cf = (task.checkFrequency ?? {}) as Record<string, unknown>;
  const duration = (name: string, v: unknown): number => {
    const ms = parseDuration(ctx.deps.renderer.render(String(v), vars).trim());
    if (!(ms > 0)) throw new Error(`checkFrequency.${name}: must be a positive duration, got '${String(v)}'`);
    return ms;
  };
  let maxIterations: number | undefined;
  if (cf.maxIterations !== undefined && cf.maxIterations !== null) {
    const n = Number(typeof cf.maxIterations === 'string' ? ctx.deps.renderer.render(cf.maxIterations, vars).trim() : cf.maxIterations);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`checkFrequency.maxIterations: expected an integer >= 1, got '${String(cf.maxIterations)}'`);
    maxIterations = n;
  }
  return {
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(cf.maxDuration !== undefined && cf.maxDuration !== null ? { maxDurationMs: duration('maxDuration', cf.maxDuration) } : {}),
    intervalMs: duration('interval', cf.interval ?? DEFAULT_INTERVAL),
    failOnMaxReached: task.failOnMaxReached === undefined ? false : truthy(ctx.deps.renderer.renderTyped(task.failOnMaxReached, vars)),
  };
}

/** LoopUntil's bookkeeping status while it waits for its interval (work.ts arms the timer at `resumeDate`). */
export const LOOP_WAITING = 'WAITING';

type LoopOutcome = 'met' | 'again' | 'maxIterations' | 'maxDuration';

/**
 * After iteration `n` ended well: the condition (rendered once per iteration, with the latest outputs), else a maximum
 * reached, else another iteration after the interval.
 */
function decideAfter(ctx: StepContext, run: TaskRun, task: Task, n: number, cf: CheckFrequency): LoopOutcome {
  const fs = run.flowableState!;
  if (fs.decided === n) return fs.outcome as LoopOutcome;
  const met = truthy(ctx.deps.renderer.renderTyped(task.condition, variablesFor(ctx, run, task)));
  const now = ctx.deps.now.getTime();
  let outcome: LoopOutcome = 'again';
  if (met) outcome = 'met';
  else if (cf.maxIterations !== undefined && n - Number(fs.iterationBase ?? 0) >= cf.maxIterations) outcome = 'maxIterations';
  else if (cf.maxDurationMs !== undefined && now - Date.parse(String(fs.since ?? run.state.startDate)) >= cf.maxDurationMs) outcome = 'maxDuration';
  fs.decided = n;
  fs.outcome = outcome;
  if (outcome === 'again') {
    fs.status = LOOP_WAITING;
    run.resumeDate = new Date(now + cf.intervalMs).toISOString();
  } else if (outcome !== 'met') {
    log(ctx, 'WARN', `${outcome === 'maxIterations' ? `Max iterations (${cf.maxIterations})` : 'Max duration'} reached before the condition was met`, run);
  }
  return outcome;
}

/**
 * A new attempt of a LoopUntil (restart, or its own `retry`) that ended on a `checkFrequency` maximum: a fresh set of
 * iterations. The maxima count from here (`iterationBase`, `since`); iteration numbers go on, so each child run keeps
 * its own; the condition and `checkFrequency` are rendered again. A loop that ended on a failed iteration keeps its
 * count (that iteration runs again and the loop goes on).
 */
export function freshIterations(ctx: StepContext, run: TaskRun): void {
  const fs = run.flowableState;
  if (!fs || (fs.outcome !== 'maxIterations' && fs.outcome !== 'maxDuration')) return;
  fs.iterationBase = Number(fs.iteration ?? 0);
  fs.since = ctx.deps.now.toISOString();
  for (const k of ['decided', 'outcome', 'checkFrequency']) delete fs[k];
}

/**
 * LoopUntil: runs its tasks (iteration 1, 2...: `taskrun.iteration` of the children, `outputs.<id>.iterationCount`),
 * checks `condition` after each iteration that ended well, and stops when it is true or a `checkFrequency` maximum is
 * reached (FAILED with `failOnMaxReached`). A failed iteration fails the loop (its `errors` run).
 */
export function loopUntil(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const tasks = tasksOf(task.tasks);
  const cf = memo(run, 'checkFrequency', () => checkFrequencyOf(ctx, run, task));
  const fs = run.flowableState!;
  let failure: string | undefined;
  const r = withHandlers(ctx, run, task, (runs) => {
    if (tasks.length === 0) return { create: [], state: 'SUCCESS' };
    let n = Number(fs.iteration ?? 0);
    const first = (k: number): Resolution => { fs.iteration = k; return { create: [{ task: tasks[0]!, branch: 'tasks', iteration: k }] }; };
    if (n === 0) return first(1);
    const current = sequentialGroup(tasks, runs.filter((x) => x.iteration === n), { branch: 'tasks', iteration: n });
    if (current.state === undefined || isFailure(current.state)) return current;
    const outcome = decideAfter(ctx, run, task, n, cf);
    if (outcome === 'again') {
      if (Date.parse(run.resumeDate!) > ctx.deps.now.getTime()) return { create: [] };
      delete fs.status;
      delete run.resumeDate;
      return first(++n);
    }
    if (outcome !== 'met' && cf.failOnMaxReached) {
      failure = `${outcome === 'maxIterations' ? `checkFrequency.maxIterations (${cf.maxIterations})` : 'checkFrequency.maxDuration'} reached before the condition was met (failOnMaxReached)`;
      return { create: [], state: 'FAILED' };
    }
    return { create: [], state: mergeStates(runs.map((x) => x.state.current)) };
  });
  return { ...r, outputs: { iterationCount: Math.max(1, Number(fs.iteration ?? 1)) }, ...(failure && r.state === 'FAILED' ? { error: failure } : {}) };
}

const EXIT_STATES = new Map<string, ExitState>([
  ['SUCCESS', 'SUCCESS'], ['WARNING', 'WARNING'], ['KILLED', 'KILLED'], ['FAILED', 'FAILED'],
  ['CANCELED', 'CANCELLED'], ['CANCELLED', 'CANCELLED'],
]);

/** Exit: ends the execution at once in `state` (default SUCCESS); see exitExecution in kill.ts. */
export function exit(ctx: StepContext, run: TaskRun, task: Task): Resolution {
  const raw = ctx.deps.renderer.render(String(task.state ?? 'SUCCESS'), variablesFor(ctx, run, task)).trim().toUpperCase();
  const state = EXIT_STATES.get(raw);
  if (!state) throw new Error(`state: expected one of SUCCESS, WARNING, KILLED, FAILED, CANCELED, got '${raw.slice(0, 100)}'`);
  return { create: [], exit: state };
}
