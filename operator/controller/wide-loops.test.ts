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

describe('wide loops through the controller', { timeout: 120_000 }, () => {
  it('4,500 Pause children (no result ever comes): created 2,000 a step by the controller alone, then the execution waits PAUSED', async () => {
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
