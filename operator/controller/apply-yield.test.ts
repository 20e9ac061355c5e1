// A fan-out's thousands of launches do not hold the event loop: the controller lets other work (an HTTP request,
// another execution) run between chunks of actions, and the results still come back as one batch.
import { afterEach, expect, it } from 'vitest';
import { initExpressions } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import type { Execution } from '../core/types.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { RUNS_PER_STEP } from '../core/runs.js';
import { EVENTS_PER_BATCH, startController, type Controller } from './controller.js';
import type { Launcher } from './launcher.js';

let stores: EmbeddedStores | undefined;
let controller: Controller | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => { await controller?.stop(); await stores?.close(); tmp?.remove(); });

it('other work runs between the launches of a 2,000-branch loop (a recording launcher stands in for the local one)', async () => {
  await initExpressions();
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const src = `id: wide\nnamespace: ns\ntasks:\n  - id: each\n    type: ai.service.plugin.core.flow.EachParallel\n    value: "{{ range(1, 2000) }}"\n    tasks:\n      - { id: r, type: ai.service.plugin.core.debug.Return, format: x }\n`;
  const flow = (await stores.flows.save(parseFlow(src), src)).record.flow;
  const launched: string[] = [];
  let seenByOtherWork: number | undefined;
  controller = await startController(stores, {
    dataDir: tmp.dir,
    env: {},
    // Records each launch and reports success at once; schedules "other work" (a macrotask) at the first launch.
    launcher: (report): Launcher => ({
      launch(_flow, exec, run, attempt) {
        if (launched.length === 0) setImmediate(() => { seenByOtherWork = launched.length; });
        launched.push(run.id);
        queueMicrotask(() => report(exec.id, run.id, attempt, { state: 'SUCCESS' }));
      },
      kill() {},
      killAll() {},
      recorded() {},
      forgetExecution() {},
    }),
  });
  const exec = newExecution({ id: newId(), flow, inputs: {}, now: new Date() });
  let writes = 0;
  stores.executions.watch((e) => { if (e.type === 'MODIFIED' && e.execution.id === exec.id) writes++; });
  await stores.executions.create(exec);
  let end: Execution | undefined;
  for (let i = 0; i < 600 && !end; i++) {
    const e = (await stores.executions.get(exec.id))!.execution;
    if (e.state.current === 'SUCCESS' || e.state.current === 'FAILED') end = e;
    else await new Promise((r) => setTimeout(r, 50));
  }
  expect(end?.state.current).toBe('SUCCESS');
  expect(launched).toHaveLength(2000);
  expect(seenByOtherWork).toBeGreaterThan(0);
  expect(seenByOtherWork).toBeLessThan(2000);
  // The results reported meanwhile wait for the launching step to finish and are applied together: a write per
  // creation step (RUNS_PER_STEP runs) and per batch of results (EVENTS_PER_BATCH), not one per result.
  expect(writes).toBeLessThanOrEqual(Math.ceil(2000 / RUNS_PER_STEP) + Math.ceil(2000 / EVENTS_PER_BATCH) + 1);
});
