// Wide loops through the real controller and SQLite store: no write carries more than one step's worth of runs (at most
// RUNS_PER_STEP new runs a step, EVENTS_PER_BATCH results a batch), and a loop wider than a step is created step after
// step by the controller alone (the `continue` action queues a tick), with no other event to drive it.
import { afterEach, describe, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import { versionCopies } from '../core/run-index.js';
import { RUNS_PER_STEP } from '../core/runs.js';
import type { Execution } from '../core/types.js';
import { initExpressions } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { Controller, EVENTS_PER_BATCH } from './controller.js';

const P = 'ai.service.plugin.';
const loop = (n: number, child: string) => `id: wide\nnamespace: loops\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n`
  + `    value: "{{ range(1, ${n}) }}"\n    tasks:\n      - id: c\n${child}`;

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
let controller: Controller | undefined;

afterEach(async () => {
  await controller?.stop();
  controller = undefined;
  await stores?.close();
  stores = undefined;
  tmp?.remove();
});

/** Runs the flow until `done` holds for a written record; returns every version written (MODIFIED), in order. */
async function run(yaml: string, done: (e: Execution) => boolean): Promise<Execution[]> {
  await initExpressions();
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const { record } = await stores.flows.save(parseFlow(yaml), yaml);
  controller = new Controller(stores, { dataDir: tmp.dir, env: {} });
  await controller.start();
  const exec = newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() });
  const versions: Execution[] = [];
  const reached = new Promise<void>((resolve) => stores!.executions.watch((e) => {
    if (e.execution.id !== exec.id || e.type !== 'MODIFIED') return;
    versions.push(e.execution);
    if (done(e.execution)) resolve();
  }));
  await stores.executions.create(exec);
  await reached;
  return versions;
}

/** Runs of `after` that are new or changed (state or attempts) against `before`. */
function touched(before: Execution | undefined, after: Execution): number {
  const old = new Map((before?.taskRunList ?? []).map((r) => [r.id, `${r.state.current}/${r.attempts.length}`]));
  return after.taskRunList.filter((r) => old.get(r.id) !== `${r.state.current}/${r.attempts.length}`).length;
}

describe('records kept between batches: EXECUTION_CACHE_MAX_TASK_RUNS', { timeout: 120_000 }, () => {
  it('three paused executions of 402 runs with a bound of 1,000: at most 1,000 runs kept, and each one let go resumes from the store to SUCCESS', async () => {
    await initExpressions();
    tmp = tempDir();
    stores = openEmbeddedStores(tmp.dir, { maxWrittenRuns: 1_000 });
    const yaml = `${loop(400, `        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`)}  - id: wait\n    type: ${P}core.flow.Pause\n`;
    const { record } = await stores.flows.save(parseFlow(yaml), yaml);
    controller = new Controller(stores, { dataDir: tmp.dir, env: { EXECUTION_CACHE_MAX_TASK_RUNS: '1000' } });
    await controller.start();
    const stateOf = async (id: string) => (await stores!.executions.get(id))!.execution;
    const until = async (ids: string[], state: string) => {
      for (let i = 0; i < 600 && !(await Promise.all(ids.map(stateOf))).every((e) => e.state.current === state); i++) await new Promise((r) => setTimeout(r, 50));
    };
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) {
      const exec = newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() });
      ids.push(exec.id);
      await stores.executions.create(exec);
      await until([exec.id], 'PAUSED');
    }
    expect((await Promise.all(ids.map(stateOf))).map((e) => [e.state.current, e.taskRunList.length])).toEqual(ids.map(() => ['PAUSED', 402]));
    expect(controller.cachedTaskRuns).toBeGreaterThan(0);
    expect(controller.cachedTaskRuns).toBeLessThanOrEqual(1_000);
    for (const id of ids) await stores.executions.addCommand(id, { type: 'resume' });
    await until(ids, 'SUCCESS');
    const ended = await Promise.all(ids.map(stateOf));
    expect(ended.map((e) => e.state.current)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    // Each child ran once, whether its execution's record was kept or read back.
    for (const e of ended) expect(e.taskRunList.filter((r) => r.taskId === 'c' && r.state.current === 'SUCCESS' && r.attempts.length === 1)).toHaveLength(400);
  });
});

describe('wide loops through the controller', { timeout: 120_000 }, () => {
  it('4,500 Pause children (no result ever comes): created RUNS_PER_STEP a step by the controller alone, then the execution waits PAUSED', async () => {
    // PAUSED as soon as the first Pause waits: the steps after it (ticks) go on creating the rest.
    const versions = await run(loop(4_500, `        type: ${P}core.flow.Pause\n`), (e) => e.taskRunList.length === 4_501);
    const last = versions[versions.length - 1]!;
    expect(last.state.current).toBe('PAUSED');
    expect(last.taskRunList.filter((r) => r.taskId === 'c' && r.flowableState?.status === 'PAUSED')).toHaveLength(4_500);
    const counts = versions.map((v) => v.taskRunList.length);
    expect(Math.max(...counts.map((n, i) => n - (counts[i - 1] ?? 0)))).toBeLessThanOrEqual(RUNS_PER_STEP + 1);
    expect(counts.filter((n, i) => n > (counts[i - 1] ?? 0)).length).toBeGreaterThanOrEqual(3);
  });

  it('5,000 Return children: every child ran once and ended SUCCESS, no write touched more than a step and a batch of runs, no index was copied', async () => {
    const copies = versionCopies.count;
    const versions = await run(loop(5_000, `        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`), (e) => e.state.current === 'SUCCESS');
    const last = versions[versions.length - 1]!;
    const children = last.taskRunList.filter((r) => r.taskId === 'c');
    expect(children).toHaveLength(5_000);
    expect(children.every((r) => r.state.current === 'SUCCESS' && r.attempts.length === 1 && r.outputs?.value === r.value)).toBe(true);
    const perWrite = versions.map((v, i) => touched(versions[i - 1], v));
    // New runs of a step, plus the results of a batch (each changes its run), plus the loop's own run.
    expect(Math.max(...perWrite)).toBeLessThanOrEqual(RUNS_PER_STEP + EVENTS_PER_BATCH + 1);
    // Each step forked the index the previous one handed on (run-index.ts VersionedMap): none had to copy one.
    expect(versionCopies.count - copies).toBe(0);
  });
});
