// The in-process fast path (inline.ts): pure tasks run within the batch that launched them, the record ends the same as
// when every attempt is launched and reported through the queue (task runs, attempts, outputs, labels, logs), with
// fewer writes; the per-batch bound leaves the rest to the launcher.
import { afterEach, describe, expect, it } from 'vitest';
import { stepMany, stepOwned } from '../core/engine.js';
import { EngineHarness } from '../core/engine-harness.js';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import type { Execution } from '../core/types.js';
import { initExpressions } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { Controller } from './controller.js';
import { INLINE_MAX_ATTEMPTS, mayReadInStep, stepInline } from './inline.js';
import { EngineReads, StepReadsMissed } from './step-reads.js';
import { LocalLauncher, type Launcher } from './launcher.js';
import { createSecretRenderer } from './secrets.js';

const P = 'ai.service.plugin.';
const FLOW = `id: pure
namespace: fast
labels:
  team: a
tasks:
  - id: first
    type: ${P}core.debug.Return
    format: "{{ execution.id | length }}"
  - id: log
    type: ${P}core.log.Log
    message: "first said {{ outputs.first.value }}"
  - id: label
    type: ${P}core.execution.Labels
    labels:
      stage: two
  - id: put
    type: ${P}core.kv.Set
    key: k
    value: "{{ outputs.first.value }}"
  - id: get
    type: ${P}core.kv.Get
    key: k
  - id: check
    type: ${P}core.execution.Assert
    conditions:
      - "{{ outputs.get.value == outputs.first.value }}"
  - id: out
    type: ${P}core.output.OutputValues
    values:
      got: "{{ outputs.get.value }}"
  - id: shaky
    type: ${P}core.execution.Assert
    retry:
      type: constant
      interval: PT0S
      maxAttempts: 2
    conditions:
      - "{{ outputs.first.value == 'never' }}"
    allowFailure: true
`;

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
const controllers: Controller[] = [];

afterEach(async () => {
  for (const c of controllers.splice(0)) await c.stop();
  await stores?.close();
  tmp?.remove();
});

/** The real in-process launcher; `inline: false` hides its fast path (every attempt launched and reported, as before). */
function controller(inline: boolean): Controller {
  const c = new Controller(stores!, {
    dataDir: tmp!.dir, env: {},
    launcher: (report) => {
      const real = new LocalLauncher({ stores: stores!, renderer: createSecretRenderer(stores!, {}), workRoot: `${tmp!.dir}/work`, report });
      if (inline) return real;
      const launchedOnly: Launcher = {
        launch: (f, e, r, a) => real.launch(f, e, r, a), kill: (t, a) => real.kill(t, a), killAll: () => real.killAll(),
        recorded: (t, a) => real.recorded(t, a), forgetExecution: (id) => real.forgetExecution(id),
      };
      return launchedOnly;
    },
  });
  controllers.push(c);
  return c;
}

/** Runs FLOW to its end with or without the fast path; returns the record, the writes after create, and its log lines. */
async function run(inline: boolean, yaml = FLOW): Promise<{ exec: Execution; writes: number; logs: string[] }> {
  await initExpressions();
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const { record } = await stores.flows.save(parseFlow(yaml), yaml);
  const c = controller(inline);
  await c.start();
  let writes = 0;
  const exec = newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() });
  const ended = new Promise<Execution>((resolve) => stores!.executions.watch((e) => {
    if (e.execution.id !== exec.id || e.type !== 'MODIFIED') return;
    writes++;
    if (['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(e.execution.state.current)) resolve(e.execution);
  }));
  await stores.executions.create(exec);
  const end = await ended;
  await c.whenIdle();
  await stores.logs.flush();
  const logs = (await stores.logs.forExecution(exec.id, {})).map((l) => `${l.taskId ?? '-'} ${l.level} ${l.message}`);
  await c.stop();
  controllers.splice(0);
  await stores.close();
  stores = undefined;
  tmp.remove();
  tmp = undefined;
  return { exec: end, writes, logs };
}

/** What must be the same either way: no ids or dates. */
function shape(e: Execution) {
  return {
    state: e.state.current, states: e.state.histories.map((h) => h.state), labels: e.labels, outputs: e.outputs,
    runs: e.taskRunList.map((r) => ({
      taskId: r.taskId, state: r.state.current, states: r.state.histories.map((h) => h.state), outputs: r.outputs,
      attempts: r.attempts.map((a) => ({ states: a.state.histories.map((h) => h.state) })),
    })),
  };
}

describe('inline fast path', { timeout: 60_000 }, () => {
  it('records the same task runs, attempts, outputs, labels and logs as launched attempts, in one write instead of one per task', async () => {
    const launched = await run(false);
    const inline = await run(true);
    expect(launched.exec.state.current).toBe('WARNING'); // the shaky task fails twice (a retry), allowed
    expect(shape(inline.exec)).toEqual(shape(launched.exec));
    expect(inline.exec.taskRunList.find((r) => r.taskId === 'shaky')!.attempts).toHaveLength(2);
    expect(inline.exec.labels).toContainEqual({ key: 'stage', value: 'two' });
    expect(inline.logs.slice().sort()).toEqual(launched.logs.slice().sort());
    expect(inline.logs.some((l) => /^log INFO first said \d+$/.test(l))).toBe(true);
    // Launched: a write per reported attempt (9) besides the start. Inline: the start carries every task to the end
    // but the retry, whose timer's batch runs the second attempt and ends the execution.
    expect(launched.writes).toBeGreaterThanOrEqual(9);
    expect(inline.writes).toBeLessThanOrEqual(3);
  });

  it('a sequential loop longer than a batch: later batches step in place over written (frozen) runs, the loop ends whole', async () => {
    // More iterations than INLINE_MAX_ATTEMPTS: each batch after the first starts from the record the store wrote (its
    // runs frozen), steps it once on a copy (the loop's own run handed back as the written object), then in place.
    const n = INLINE_MAX_ATTEMPTS * 2 + 50;
    const yaml = `id: long\nnamespace: fast\ntasks:\n  - id: loop\n    type: ${P}core.flow.ForEach\n    values: ${JSON.stringify(Array.from({ length: n }, (_, i) => `v${i}`))}\n`
      + `    tasks:\n      - id: r\n        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`;
    const { exec, writes } = await run(true, yaml);
    expect(exec.state.current).toBe('SUCCESS');
    expect(exec.taskRunList.find((r) => r.taskId === 'loop')!.state.current).toBe('SUCCESS');
    const children = exec.taskRunList.filter((r) => r.taskId === 'r');
    expect(children.map((r) => `${r.state.current}:${String(r.outputs?.value)}`)).toEqual(Array.from({ length: n }, (_, i) => `SUCCESS:v${i}`));
    expect(children.every((r) => r.attempts.length === 1)).toBe(true);
    expect(writes).toBeGreaterThanOrEqual(3); // at least three batches, each after the first over written runs
    expect(writes).toBeLessThan(n);
  });

  it('runs at most the bound of attempts in one batch: the rest stay launched, in order', async () => {
    await initExpressions();
    const h = new EngineHarness(`id: seq\nnamespace: fast\ntasks:\n${[0, 1, 2, 3, 4].map((i) => `  - id: t${i}\n    type: ${P}core.debug.Return\n    format: v${i}\n`).join('')}`);
    const decide = async (exec: Execution, events: Parameters<typeof stepMany>[2]) => stepMany(h.flow, exec, events, h.deps);
    const ran: string[] = [];
    const first = await decide(h.exec, [{ type: 'start', runningCount: 0 }]);
    const r = await stepInline(h.flow, first, (_f, _e, run) => { ran.push(run.taskId); return Promise.resolve({ state: 'SUCCESS', outputs: { value: run.taskId } }); }, decide, { attempts: 2, ms: 60_000 });
    expect(ran).toEqual(['t0', 't1']);
    expect(r.execution.taskRunList.map((t) => `${t.taskId}:${t.state.current}`)).toEqual(['t0:SUCCESS', 't1:SUCCESS', 't2:RUNNING']);
    const t2 = r.execution.taskRunList[2]!;
    expect(r.actions.filter((a) => a.type === 'launch')).toEqual([{ type: 'launch', taskRunId: t2.id, attempt: 1 }]);
    // A launcher that declines (undefined) leaves every launch as it was.
    const none = await stepInline(h.flow, first, () => undefined, decide);
    expect(none).toEqual(first);
  });

  it('steps in place (no copy per task) to the same record as on copies, loops and their outputs tree included', async () => {
    await initExpressions();
    const yaml = `id: loops\nnamespace: fast\ntasks:
  - id: seq
    type: ${P}core.flow.EachSequential
    value: ["a", "b"]
    tasks:
      - id: inner
        type: ${P}core.debug.Return
        format: x
      - id: pick
        type: ${P}core.flow.If
        condition: "{{ outputs.inner[taskrun.value].value == 'inner:a' }}"
        then:
          - id: yes
            type: ${P}core.debug.Return
            format: y
  - id: par
    type: ${P}core.flow.EachParallel
    value: ["1", "2", "3"]
    tasks:
      - id: leaf
        type: ${P}core.debug.Return
        format: z
  - id: last
    type: ${P}core.debug.Return
    format: "{{ outputs.leaf['2'].value }}"
`;
    const runTo = async (step: typeof stepMany) => {
      const h = new EngineHarness(yaml);
      const first = stepMany(h.flow, h.exec, [{ type: 'start', runningCount: 0 }], h.deps);
      const out = (run: { taskId: string; value?: unknown }) => ({ value: `${run.taskId}:${run.value ?? ''}`, nested: { list: [run.taskId] } });
      return stepInline(h.flow, first, (_f, _e, run) => Promise.resolve({ state: 'SUCCESS', outputs: out(run) }),
        async (exec, events) => step(h.flow, exec, events, h.deps), { attempts: 1000, ms: 60_000 });
    };
    const copied = await runTo(stepMany);
    const owned = await runTo(stepOwned);
    expect(copied.execution.state.current).toBe('SUCCESS');
    expect(copied.execution.taskRunList.find((r) => r.taskId === 'yes')).toBeDefined();
    expect(owned).toEqual(copied);
    expect(mayReadInStep(new EngineHarness(yaml).flow)).toBe(false);
    expect(mayReadInStep(new EngineHarness(`id: r\nnamespace: fast\ntasks:\n  - id: i\n    type: ${P}core.flow.If\n    condition: "{{ kv('k') }}"\n    then:\n      - id: t\n        type: ${P}core.debug.Return\n        format: x\n`).flow)).toBe(true);
  });

  it('a step that may not run twice (in place) and asks for a value not fetched yet is refused, not run again', async () => {
    await initExpressions();
    tmp = tempDir();
    stores = openEmbeddedStores(tmp.dir);
    const reads = new EngineReads(stores, {});
    let runs = 0;
    const step = () => { runs++; return reads.renderer.render("{{ kv('missing') }}", { flow: { namespace: 'fast' } }); };
    await expect(reads.run(new Date(), step, stores, { once: true })).rejects.toBeInstanceOf(StepReadsMissed);
    expect(runs).toBe(1);
    // On a copy it runs again once the value is fetched (absent here: kv() fails the template).
    runs = 0;
    await expect(reads.run(new Date(), step, stores)).rejects.toThrow();
    expect(runs).toBe(2);
  });
});
