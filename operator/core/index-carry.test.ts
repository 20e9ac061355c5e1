// Property test of the run index a step hands on to the next (run-index.ts forkIndex, shared-runs.ts): over generated
// sequences of batches through the real engine (results, retries, kills, restarts, resumes, in-place rounds, writes,
// reloads), the index each record carries is the very one a fresh build of its run list gives, after every step.
import { describe, expect, it } from 'vitest';
import { handBackUnchanged, stepMany, stepOwned } from './engine.js';
import type { EngineEvent, TaskOutcome } from './engine-types.js';
import { EngineHarness } from './engine-harness.js';
import { freezeData } from './keyed.js';
import { loopTally } from './loop-tally.js';
import { buildOutputs } from './context.js';
import { changedSince, childrenIn, forkIndex, frozenGoingCount, frozenGoingIn, goingCount, indexRuns, knownIndex, placedOnce, versionCopies, VersionedMap } from './run-index.js';
import { indexFlow, isFlowableType } from './flow-index.js';
import type { Execution, Flow, TaskRun } from './types.js';
import { isTerminal } from './types.js';
import { pendingWork } from './work.js';
import { prng } from './prng.js';

const P = 'ai.service.plugin.';
const ret = (id: string, indent = '      ') => `${indent}- id: ${id}\n${indent}  type: ${P}core.debug.Return\n${indent}  format: "{{ taskrun.value }}"\n`;
const values = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `v${i}`));

const FLOWS: Record<string, string> = {
  eachParallel: `id: f\nnamespace: t\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: ${values(40)}\n    concurrent: 9\n    tasks:\n${ret('a')}${ret('b')}`,
  forEach: `id: f\nnamespace: t\ntasks:\n  - id: loop\n    type: ${P}core.flow.ForEach\n    values: ${values(25)}\n    concurrencyLimit: 4\n    tasks:\n`
    + `      - id: seq\n        type: ${P}core.flow.Sequential\n        tasks:\n${ret('a', '          ')}${ret('b', '          ')}`
    + `        errors:\n${ret('handler', '          ')}`,
  nested: `id: f\nnamespace: t\ntasks:\n  - id: par\n    type: ${P}core.flow.Parallel\n    tasks:\n`
    + `      - id: r\n        type: ${P}core.debug.Return\n        format: x\n        retry: { type: constant, interval: PT1S, maxAttempt: 3 }\n`
    + `      - id: each\n        type: ${P}core.flow.EachParallel\n        value: ${values(30)}\n        tasks:\n${ret('c', '          ')}`
    + `      - id: seq\n        type: ${P}core.flow.Sequential\n        tasks:\n${ret('s1', '          ')}`
    + `          - id: ok\n            type: ${P}core.debug.Return\n            format: y\n            allowFailure: true\n`
    + `${ret('last')}`,
  pause: `id: f\nnamespace: t\ntasks:\n  - id: each\n    type: ${P}core.flow.EachParallel\n    value: ${values(20)}\n    tasks:\n${ret('c')}`
    + `  - id: wait\n    type: ${P}core.flow.Pause\n  - id: after\n    type: ${P}core.flow.EachParallel\n    value: ${values(20)}\n    tasks:\n${ret('d')}`,
  // Wide enough for steps of thousands of changes (a run a result, RUNS_PER_STEP runs a creation step).
  wide: `id: f\nnamespace: t\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: ${values(2500)}\n    tasks:\n${ret('a')}`,
};
/** One-task loops of each flow (task id: values), whose kept counts are checked too. */
const LOOPS: Record<string, Record<string, number>> = { eachParallel: {}, forEach: { loop: 25 }, nested: { each: 30 }, pause: { each: 20, after: 20 }, wide: { loop: 2500 } };
let tallied = 0;
const SEEDS: Record<string, number> = { eachParallel: 60, forEach: 60, nested: 60, pause: 60, wide: 3 };

/** The carried index of `exec` is the fresh build of its run list: the same run objects, lists and places. */
function expectCarriedIsFresh(exec: Execution, loops: Record<string, number>, where: string, flow?: Flow): void {
  const carried = knownIndex(exec);
  expect(carried, `${where}: a step hands on its index`).toBeDefined();
  const fresh = indexRuns(exec.taskRunList);
  expect([...carried!.byId.keys()], where).toEqual([...fresh.byId.keys()]);
  for (const id of fresh.byId.keys()) {
    if (carried!.byId.get(id) !== fresh.byId.get(id)) throw new Error(`${where}: byId of ${id} is not the run in the list`);
    expect(carried!.places.get(id), `${where}: place of ${id}`).toEqual(fresh.places.get(id));
  }
  expect([...carried!.children.keys()].sort(), where).toEqual([...fresh.children.keys()].sort());
  // The counts kept for one-task loops (loop-tally.ts) are those of a walk of their children.
  for (const [taskId, count] of Object.entries(loops)) {
    for (const loop of exec.taskRunList.filter((r) => r.taskId === taskId)) {
      const children = childrenIn(carried!, loop.id);
      const kept = loopTally(carried!, loop.id, children, count);
      if (!kept) continue; // not kept (a branch run, children out of order): the resolver walks them
      tallied++;
      const ended = children.filter((r) => isTerminal(r.state.current)).map((r) => r.state.current);
      const rank = (x: string) => ['WARNING', 'FAILED', 'KILLED'].indexOf(x);
      const worst = ended.reduce<string>((w, x) => (rank(x) > rank(w) ? x : w), 'SUCCESS');
      expect(kept, `${where}: counts of ${taskId}`).toEqual({ running: children.length - ended.length, worst, started: children.length });
    }
  }
  for (const key of fresh.children.keys()) {
    const a = carried!.children.get(key)!;
    const b = fresh.children.get(key)!;
    if (a.length !== b.length || a.some((r, i) => r !== b[i])) throw new Error(`${where}: children of '${key}' differ`);
  }
  // The flowable list a step on shared runs carries (engine.ts flowableRuns) holds every flowable still going before
  // its `seen`: the next such step looks at the runs after it only.
  // The counts a fork takes from it (run-index.ts countsOf) are those of a walk, and a run not frozen sits where the
  // version placed one (what lets copyShared and pendingWork look at the placed runs only).
  const list = exec.taskRunList;
  const placed = placedOnce(carried!);
  for (let at = 0; at < list.length; at++) {
    if (!Object.isFrozen(list[at]) && !placed.has(at)) throw new Error(`${where}: run ${list[at]!.taskId} at ${at} is not frozen and not placed`);
  }
  const goingAt = list.flatMap((r, at) => (isTerminal(r.state.current) ? [] : [at]));
  const frozenAt = goingAt.filter((at) => Object.isFrozen(list[at]));
  expect(goingCount(carried!, list), `${where}: runs going`).toBe(goingAt.length);
  expect(frozenGoingCount(carried!, list), `${where}: frozen runs going`).toBe(frozenAt.length);
  expect(frozenGoingIn(carried!, list, frozenAt.length), `${where}: where the frozen runs going are`).toEqual(frozenAt);
  if (frozenAt.length) expect(frozenGoingIn(carried!, list, frozenAt.length - 1), where).toBeUndefined();
  countsChecked++;
  // The outputs tree a fork builds from the log the index hands on (context.ts buildOutputs) is that of a walk.
  if (carried!.withOutputs) {
    const fromLog = JSON.stringify(buildOutputs(exec, forkIndex(carried!, list)));
    expect(fromLog, `${where}: outputs`).toBe(JSON.stringify(buildOutputs(exec, indexRuns(list))));
    outputsChecked++;
  }
  const kept = carried!.flowables;
  if (flow && kept) {
    expect(kept.flow, where).toBe(flow);
    expect(kept.seen, where).toBeLessThanOrEqual(exec.taskRunList.length);
    const types = indexFlow(flow).byId;
    const listed = new Set(kept.positions);
    for (let at = 0; at < kept.seen; at++) {
      const run = exec.taskRunList[at]!;
      if (isTerminal(run.state.current) || !isFlowableType(types.get(run.taskId)!.type)) continue;
      if (!listed.has(at)) throw new Error(`${where}: flowable ${run.taskId} at ${at}, going, is not in the carried list`);
      flowablesChecked++;
    }
  }
}
let flowablesChecked = 0;
let countsChecked = 0;
let outputsChecked = 0;
let changedChecked = 0;

const runningAttempts = (exec: Execution): { run: TaskRun; attempt: number }[] => exec.taskRunList.flatMap((run) => {
  const att = run.attempts[run.attempts.length - 1];
  return att && !isTerminal(att.state.current) && !isTerminal(run.state.current) ? [{ run, attempt: run.attempts.length }] : [];
});

function outcome(rand: () => number, run: TaskRun): TaskOutcome {
  const x = rand();
  if (x < 0.12) return { state: 'FAILED', error: 'boom' };
  if (x < 0.18) return { state: 'WARNING', outputs: { value: run.value ?? run.taskId } };
  return { state: 'SUCCESS', outputs: { value: `${run.value ?? run.taskId}-${Math.floor(x * 1000)}` } };
}

/** Results of a random subset of the running attempts (none when nothing runs). */
function results(rand: () => number, exec: Execution): EngineEvent[] {
  const running = runningAttempts(exec);
  return running.filter(() => rand() < 0.45).map(({ run, attempt }) => ({ type: 'task-result', taskRunId: run.id, attempt, outcome: outcome(rand, run) }));
}

/**
 * Where a record stepped from `given` differs from it (run-index.ts changedSince): every position whose run is not the
 * very object of `given`'s, and the work pendingWork derives from those positions is that of the walk of every run.
 */
function expectChangedSince(flow: Flow, exec: Execution, given: Execution, where: string): void {
  const changed = changedSince(exec, given);
  if (!changed) return; // not stepped straight from it (a full copy, a restart): pendingWork walks
  const listed = new Set(changed);
  exec.taskRunList.forEach((r, at) => {
    if (given.taskRunList[at] !== r && !listed.has(at)) throw new Error(`${where}: position ${at} changed and is not listed`);
  });
  const walked = pendingWork(flow, exec, { ...given, taskRunList: given.taskRunList.slice() });
  expect(pendingWork(flow, exec, given), where).toEqual(walked);
  changedChecked++;
}

/** One generated sequence: batches of a first step on copies, in-place rounds, then a write, a reload or nothing. */
function generated(flowName: string, seed: number, batches: number): void {
  const rand = prng(seed);
  const h = new EngineHarness(FLOWS[flowName]!);
  let exec = h.exec;
  const deps = () => ({ ...h.deps, random: rand });
  const where = (b: string) => `${flowName} seed ${seed} ${b}`;
  exec = stepMany(h.flow, exec, [{ type: 'start', runningCount: 0 }], deps()).execution;
  expectCarriedIsFresh(exec, LOOPS[flowName]!, where('start'), h.flow);
  for (let b = 0; b < batches && !isTerminal(exec.state.current); b++) {
    const x = rand();
    let events: EngineEvent[] = results(rand, exec);
    if (x < 0.05) events = [{ type: 'kill' }];
    else if (x < 0.1) events = [{ type: 'tick' }];
    else if (exec.state.current === 'PAUSED' && x < 0.4) events = [{ type: 'resume' }];
    else if (x < 0.25) {
      const timer = pendingWork(h.flow, exec).timers.find((t) => t.event.type === 'timer');
      if (timer) { h.now = new Date(Math.max(h.now.getTime(), Date.parse(timer.at))); events = [timer.event as EngineEvent]; }
    }
    if (!events.length) events = [{ type: 'tick' }];
    const given = exec;
    exec = stepMany(h.flow, exec, events, deps()).execution;
    expectCarriedIsFresh(exec, LOOPS[flowName]!, where(`batch ${b}: ${events[0]!.type}`), h.flow);
    expectChangedSince(h.flow, exec, given, where(`batch ${b}: ${events[0]!.type}`));
    // The record the step was given keeps its own index as it was (the step forked it).
    if (knownIndex(given)) expectCarriedIsFresh(given, LOOPS[flowName]!, where(`batch ${b}: the given record`), h.flow);
    // In-place rounds (the controller's inline results): the record is the step's own until written.
    for (let round = 0; round < 3 && rand() < 0.6; round++) {
      const more = results(rand, exec);
      if (!more.length) break;
      exec = stepOwned(h.flow, exec, more, deps()).execution;
      expectCarriedIsFresh(exec, LOOPS[flowName]!, where(`batch ${b} round ${round}`), h.flow);
    }
    handBackUnchanged(exec);
    expectCarriedIsFresh(exec, LOOPS[flowName]!, where(`batch ${b} handed back`), h.flow);
    expectChangedSince(h.flow, exec, given, where(`batch ${b} handed back`));
    const end = rand();
    if (end < 0.7) for (const r of exec.taskRunList) freezeData(r); // written: the store freezes what it wrote
    else if (end < 0.8) exec = JSON.parse(JSON.stringify(exec)) as Execution; // reloaded from the store: no index known
    if (isTerminal(exec.state.current) && (exec.state.current === 'FAILED' || exec.state.current === 'KILLED') && rand() < 0.7) {
      exec = stepMany(h.flow, exec, [{ type: 'restart' }], deps()).execution;
      expectCarriedIsFresh(exec, LOOPS[flowName]!, where(`batch ${b} restart`), h.flow);
    }
    h.advanceClock(500);
  }
}

describe('the run index a step hands on is the one a fresh build gives', () => {
  it.each(Object.keys(FLOWS))('%s: after every step of generated batches', (flowName) => {
    for (let seed = 1; seed <= SEEDS[flowName]!; seed++) generated(flowName, seed, 80);
  });

  it('carried flowable lists were checked', () => {
    expect(flowablesChecked).toBeGreaterThan(100);
  });

  it('the counts of runs going and the positions a step changed were checked', () => {
    expect(countsChecked).toBeGreaterThan(1_000);
    expect(changedChecked).toBeGreaterThan(500);
    expect(outputsChecked).toBeGreaterThan(1_000);
  });

  it('the kept counts of one-task loops were checked (not left to the walk every time)', () => {
    expect(tallied).toBeGreaterThan(1_000);
  });

  it('a versioned map forked and written reads as a plain map of the same writes, and a fork never changes its origin', () => {
    const rand = prng(7);
    let versioned = VersionedMap.empty<number>();
    let plain = new Map<string, number>();
    const versions: [VersionedMap<number>, Map<string, number>][] = [];
    for (let step = 0; step < 200; step++) {
      // Now and then a second fork of an earlier version, written too: two versions of one origin adding keys.
      if (step % 17 === 16) {
        const [origin, originPlain] = versions[Math.floor(rand() * versions.length)]!;
        const other = origin.fork();
        const otherPlain = new Map(originPlain);
        for (let i = 0; i < 50; i++) { const key = `o${step}-${i}`; other.set(key, -i); otherPlain.set(key, -i); }
        versions.push([other, otherPlain]);
      }
      versioned = versioned.fork();
      plain = new Map(plain);
      const writes = Math.floor(rand() * 400);
      for (let i = 0; i < writes; i++) {
        const key = `k${Math.floor(rand() * 3_000)}`;
        versioned.set(key, step * 1_000 + i);
        plain.set(key, step * 1_000 + i);
      }
      versions.push([versioned, plain]);
    }
    for (const [l, p] of versions) {
      expect([...l.keys()]).toEqual([...p.keys()]);
      expect([...l.values()]).toEqual([...p.values()]);
      expect(l.size).toBe(p.size);
    }
  });

  it('versions of a map forked, written and read in any order, older ones included, read as plain maps of their writes', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const rand = prng(seed);
      const pick = <T>(xs: T[], recent: number) => xs[rand() < recent ? xs.length - 1 : Math.floor(rand() * xs.length)]!;
      const versions: [VersionedMap<number>, Map<string, number>][] = [[VersionedMap.empty<number>(), new Map()]];
      const expectSame = ([m, p]: [VersionedMap<number>, Map<string, number>], key: string) => {
        expect(m.get(key)).toBe(p.get(key));
        expect(m.has(key)).toBe(p.has(key));
      };
      for (let op = 0; op < 3_000; op++) {
        const r = rand();
        const key = `k${Math.floor(rand() * 300)}`;
        if (r < 0.15) {
          // A fork: mostly of the newest version (a chain of steps), now and then of an older one (a second try).
          const [m, p] = pick(versions, 0.8);
          versions.push([m.fork(), new Map(p)]);
        } else if (r < 0.6) {
          // A write: mostly to the newest, now and then to an older version (forked already).
          const [m, p] = pick(versions, 0.9);
          m.set(key, op);
          p.set(key, op);
        } else {
          expectSame(pick(versions, 0.3), key);
        }
      }
      for (const [m, p] of versions) {
        expect([...m.keys()]).toEqual([...p.keys()]);
        expect([...m.values()]).toEqual([...p.values()]);
        expect(m.size).toBe(p.size);
      }
    }
  });

  it('a chain of forks, each written, copies nothing; an older version read after more than 8 newer ones is copied once', () => {
    const before = versionCopies.count;
    let m = VersionedMap.empty<number>();
    for (let i = 0; i < 10_000; i++) m.set(`k${i}`, i);
    const first = m;
    for (let step = 1; step <= 20; step++) {
      m = m.fork();
      for (let i = 0; i < 100; i++) m.set(`k${(step * 100 + i) % 10_000}`, -step);
      m.set(`new${step}`, step);
    }
    expect(versionCopies.count - before).toBe(0);
    expect(m.get('k150')).toBe(-1);
    expect(first.get('k150')).toBe(150); // found in the undo entries of the version after it
    expect(versionCopies.count - before).toBe(0);
    expect(first.get('k5000')).toBe(5_000); // written by none of the 20 newer versions: copied into a chain of its own
    expect(versionCopies.count - before).toBe(1);
    expect(first.get('k151')).toBe(151); // and read straight from it since
    expect(first.has('new1')).toBe(false);
    expect(first.size).toBe(10_000);
    expect(versionCopies.count - before).toBe(1);
    expect(m.size).toBe(10_020);
  });

  it('the steps of a 6,000-item loop fork each index and copy none', () => {
    const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: ${values(6000)}\n    tasks:\n${ret('a')}`);
    const before = versionCopies.count;
    let exec = stepMany(h.flow, h.exec, [{ type: 'start', runningCount: 0 }], h.deps).execution;
    const freeze = () => { for (const r of exec.taskRunList) if (!Object.isFrozen(r)) freezeData(r); };
    freeze();
    while (exec.taskRunList.length < 6001) { exec = stepMany(h.flow, exec, [{ type: 'tick' }], h.deps).execution; freeze(); }
    for (;;) {
      const running = exec.taskRunList.filter((r) => r.taskId === 'a' && !isTerminal(r.state.current)).slice(0, 2_000);
      if (!running.length) break;
      exec = stepMany(h.flow, exec, running.map((r) => ({ type: 'task-result' as const, taskRunId: r.id, attempt: r.attempts.length, outcome: { state: 'SUCCESS' as const } })), h.deps).execution;
      freeze();
    }
    expect(exec.state.current).toBe('SUCCESS');
    expect(versionCopies.count - before).toBe(0);
  });
});
