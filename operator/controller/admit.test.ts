// Eager start (Controller.admit) on real SQLite stores: a new execution takes its first step before it is stored and
// is stored with one create holding that step (a flow of quick tasks: no update at all); its ADDED event does not
// start it again; what the first step leaves (a timer) carries on as usual; stop() rejects an admission still waiting
// with a transient error (the API's 503) and stores nothing; a first step that throws falls back to a plain create; a
// create that fails leaves no log line of the first step's inline tasks.
import { afterEach, describe, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import type { Execution, Flow } from '../core/types.js';
import { initExpressions } from '../expr/index.js';
import { isTransient, TransientError } from '../faults.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { until } from '../../test/support/wait.js';
import { Controller } from './controller.js';
import { LocalLauncher, type Launcher } from './launcher.js';
import { createSecretRenderer } from './secrets.js';

const P = 'io.kestra.plugin.core.';
const ENDED = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'];

const returns = (id: string, n: number) => `id: ${id}
namespace: eager
tasks:
${Array.from({ length: n }, (_, i) => `  - id: t${i}
    type: ${P}debug.Return
    format: "{{ execution.id }}-${i}"
`).join('')}`;

const FAILING = `id: failing
namespace: eager
tasks:
  - id: said
    type: ${P}log.Log
    message: about to fail
  - id: fail
    type: ${P}execution.Fail
    errorMessage: on purpose
`;

const PAUSING = `id: pausing
namespace: eager
tasks:
  - id: before
    type: ${P}debug.Return
    format: before
  - id: wait
    type: ${P}flow.Pause
    delay: PT0.2S
  - id: after
    type: ${P}debug.Return
    format: after
`;

const LIMITED = `id: limited
namespace: eager
concurrency:
  limit: 1
tasks:
  - id: only
    type: ${P}debug.Return
    format: one
`;

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
let controller: Controller | undefined;

afterEach(async () => {
  await controller?.stop();
  await stores?.close();
  tmp?.remove();
  controller = stores = tmp = undefined;
});

interface Counts { creates: number; updates: number; inline: number; batches: number }

/**
 * Real stores whose execution creates and updates are counted (the store's own methods, wrapped), and a controller on
 * the real in-process launcher whose inline runs are counted; `failInline`: that many inline runs throw first.
 */
async function setup(yaml: string, failInline = 0, failCreates = 0): Promise<{ flow: Flow; counts: Counts; c: Controller }> {
  await initExpressions();
  tmp = tempDir('controller-admit-');
  stores = openEmbeddedStores(tmp.dir);
  const { record } = await stores.flows.save(parseFlow(yaml), yaml);
  const counts: Counts = { creates: 0, updates: 0, inline: 0, batches: 0 };
  const executions = stores.executions;
  const create = executions.create.bind(executions);
  const update = executions.update.bind(executions);
  let createFailures = failCreates;
  executions.create = (e) => {
    counts.creates++;
    if (createFailures-- > 0) return Promise.reject(new TransientError('the store is busy (on purpose)'));
    return create(e);
  };
  executions.update = (e, v, acks) => { counts.updates++; return update(e, v, acks); };
  let failures = failInline;
  controller = new Controller(stores, {
    dataDir: tmp.dir, env: {},
    observe: () => { counts.batches++; },
    // No wall-clock bound on inline work: on a loaded machine 10 ms may pass within 3 tasks, leaving the rest to the
    // launcher (and an update), which is the budget at work, not what this file tests.
    inlineBudget: { attempts: 200, ms: 60_000 },
    launcher: (report) => {
      const real = new LocalLauncher({ stores: stores!, renderer: createSecretRenderer(stores!, {}), workRoot: `${tmp!.dir}/work`, report });
      const counted: Launcher = {
        launch: (f, e, r, a) => real.launch(f, e, r, a), kill: (t, a) => real.kill(t, a), killAll: () => real.killAll(),
        recorded: (t, a) => real.recorded(t, a), forgetExecution: (id) => real.forgetExecution(id),
        runInline: (f, e, r, a) => {
          if (failures > 0) { failures--; throw new Error('inline run failed on purpose'); }
          const outcome = real.runInline(f, e, r, a);
          if (outcome) counts.inline++;
          return outcome;
        },
      };
      return counted;
    },
  });
  await controller.start();
  return { flow: { ...record.flow, revision: record.revision }, counts, c: controller };
}

const fresh = (flow: Flow): Execution => newExecution({ id: newId(), flow, inputs: {}, now: new Date() });

const ended = (id: string) => until(async () => {
  const s = await stores!.executions.get(id);
  return s && ENDED.includes(s.execution.state.current) && s.execution;
}, `execution ${id} to end`);

/** Lets every event of the store's feed arrive and every queued batch run (an ADDED event handled twice would show). */
async function settle(c: Controller): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 20));
    await c.whenIdle();
  }
}

describe('admit', () => {
  it.each([
    { name: '3-task Return flow', yaml: returns('three', 3), state: 'SUCCESS', runs: 3, inline: 3 },
    { name: 'Log then Fail', yaml: FAILING, state: 'FAILED', runs: 2, inline: 1 }, // Fail is the engine's
  ])('$name: stored once, ended $state, with no update and no task run twice', async ({ yaml, state, runs, inline }) => {
    const { flow, counts, c } = await setup(yaml);
    const exec = fresh(flow);
    const answered = await c.admit(exec);
    // Durable before it resolves, already as its first step left it.
    const stored = (await stores!.executions.get(exec.id))!;
    expect(stored.execution.state.current).toBe(state);
    expect(stored.resourceVersion).toBe(1);
    // Answered as created (what Kestra answers, and what a plain create resolves with).
    expect(answered).toMatchObject({ id: exec.id, state: { current: 'CREATED' }, taskRunList: [] });
    expect(answered.state.histories.map((h) => h.state)).toEqual(['CREATED']);
    await settle(c);
    // One batch: the admission's. Its ADDED event is skipped (no second batch for it, no task run again).
    expect(counts).toEqual({ creates: 1, updates: 0, inline, batches: 1 });
    const final = (await stores!.executions.get(exec.id))!.execution;
    expect(final.taskRunList).toHaveLength(runs);
    for (const run of final.taskRunList) expect(run.attempts, run.taskId).toHaveLength(1);
    expect(final.state.histories.map((h) => h.state)).toEqual(['CREATED', 'RUNNING', state]);
  });

  it('a first step that leaves work (a Pause timer) is created PAUSED and carries on through the usual batches', async () => {
    const { flow, counts, c } = await setup(PAUSING);
    const exec = fresh(flow);
    await c.admit(exec);
    expect(counts.creates).toBe(1);
    expect(counts.updates).toBe(0);
    const created = (await stores!.executions.get(exec.id))!.execution;
    expect(created.state.current).toBe('PAUSED');
    expect(created.taskRunList.map((r) => [r.taskId, r.state.current])).toEqual([['before', 'SUCCESS'], ['wait', 'RUNNING']]);
    const done = await ended(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList.map((r) => [r.taskId, r.attempts.length])).toEqual([['before', 1], ['wait', 0], ['after', 1]]); // Pause is the engine's: no attempt
    await settle(c);
    expect(counts.creates).toBe(1);
    expect(counts.inline).toBe(2);
  });

  it('stop() rejects an admission still waiting for its turn with a transient error, and nothing is stored', async () => {
    const { flow, counts, c } = await setup(returns('three', 3));
    const exec = fresh(flow);
    const admitted = c.admit(exec).then(() => undefined, (e: unknown) => e);
    await c.stop();
    controller = undefined;
    const err = await admitted;
    expect(err).toBeInstanceOf(TransientError);
    expect(isTransient(err)).toBe(true);
    expect(await stores!.executions.get(exec.id)).toBeUndefined();
    expect(counts.creates).toBe(0);
    // A stopped controller takes no new admission either.
    await expect(c.admit(fresh(flow))).rejects.toBeInstanceOf(TransientError);
  });

  it('a create that fails after the first step is answered with its error and leaves no log line of that step', async () => {
    const { flow, counts, c } = await setup(FAILING, 0, 1);
    const exec = fresh(flow);
    await expect(c.admit(exec)).rejects.toBeInstanceOf(TransientError);
    expect(counts.inline).toBe(1); // the Log task ran (and logged) in the first step
    await settle(c);
    await stores!.logs.flush();
    expect(await stores!.logs.forExecution(exec.id, {})).toEqual([]);
    expect(await stores!.executions.get(exec.id)).toBeUndefined();
  });

  it('a first step that throws falls back to a plain create: the execution is started the usual way, not lost', async () => {
    const { flow, counts, c } = await setup(returns('three', 3), 1);
    const exec = fresh(flow);
    const answered = await c.admit(exec);
    expect(answered.state.current).toBe('CREATED');
    const done = await ended(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    await settle(c);
    expect(counts.creates).toBe(1);
    expect(counts.updates).toBeGreaterThanOrEqual(1);
    expect(done.taskRunList).toHaveLength(3);
    for (const run of done.taskRunList) expect(run.attempts, run.taskId).toHaveLength(1);
  });

  it('a flow with a concurrency limit is created as it came (its starts stay serialized) and still runs', async () => {
    const { flow, counts, c } = await setup(LIMITED);
    const exec = fresh(flow);
    await c.admit(exec);
    expect(counts.creates).toBe(1);
    expect(counts.inline).toBe(0); // nothing ran before the create
    expect((await ended(exec.id)).state.current).toBe('SUCCESS');
  });
});
