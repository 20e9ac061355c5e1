// In-process figures of the engine's steps over a wide loop (issue 12): an EachParallel over range(1, N) of a Return
// task stepped as the controller steps it, without a server, a store or a launcher: the creation steps (a start, then
// ticks creating RUNS_PER_STEP children each) and the result steps (EVENTS_PER_BATCH results a batch), each timed alone,
// the run list frozen between them as a write freezes it. What a step costs the event loop at that width, with less
// noise than the server's figures. `BENCH=steps npm run bench` (BENCH_STEPS_ITEMS, default 100,000; BENCH_STEPS_BATCHES,
// result batch sizes, default EVENTS_PER_BATCH). Printed, never asserted.
import { EVENTS_PER_BATCH } from '../../operator/controller/controller.js';
import { stepMany } from '../../operator/core/engine.js';
import { EngineHarness } from '../../operator/core/engine-harness.js';
import type { EngineEvent } from '../../operator/core/engine-types.js';
import { freezeData } from '../../operator/core/keyed.js';
import { RUNS_PER_STEP } from '../../operator/core/runs.js';
import { isTerminal } from '../../operator/core/types.js';
import { initExpressions } from '../../operator/expr/index.js';
import { median } from './stats.js';

const P = 'io.kestra.plugin.core.';

export async function runStepsBench(): Promise<void> {
  const n = Number(process.env.BENCH_STEPS_ITEMS ?? 100_000);
  await initExpressions();
  console.log(`\n== Engine steps of an EachParallel over ${n.toLocaleString('en-US')} Return tasks (in process; ${RUNS_PER_STEP} runs a creation step, ${EVENTS_PER_BATCH} results a batch) ==`);
  const h = new EngineHarness(`id: f\nnamespace: t\ntasks:\n  - id: loop\n    type: ${P}flow.EachParallel\n    value: "{{ range(1, ${n}) }}"\n`
    + `    tasks:\n      - id: r\n        type: ${P}debug.Return\n        format: "{{ taskrun.value }}"\n`);
  let exec = h.exec;
  const step = (events: EngineEvent[]): number => {
    const t0 = performance.now();
    exec = stepMany(h.flow, exec, events, h.deps).execution;
    const ms = performance.now() - t0;
    for (const r of exec.taskRunList) if (!Object.isFrozen(r)) freezeData(r); // as the store's write freezes what it wrote
    return ms;
  };
  const creations = [step([{ type: 'start', runningCount: 0 }])];
  while (exec.taskRunList.length < n + 1 && creations.length < n) creations.push(step([{ type: 'tick' }]));
  const line = (what: string, ms: number[]) => {
    const total = ms.reduce((a, b) => a + b, 0);
    console.log(`  ${what.padEnd(22)} ${String(ms.length).padStart(4)} steps: median ${median(ms).toFixed(1)} ms, `
      + `longest ${[...ms].sort((a, b) => b - a).slice(0, 5).map((m) => m.toFixed(1)).join(', ')} ms, total ${total.toFixed(0)} ms (${((total * 1000) / n).toFixed(1)} µs per item)`);
  };
  line('creation steps', creations);
  // The same record's results in batches of each size (BENCH_STEPS_BATCHES): a step's fixed cost shows as a median
  // that does not fall with the batch (docs/performance.md, "Batches of 500"). Each size starts from the same record, an
  // older version of its index after the first: its first step copies that index once (a longest step of ~100 ms).
  const created = exec;
  const sizes = (process.env.BENCH_STEPS_BATCHES ?? String(EVENTS_PER_BATCH)).split(',').map(Number).filter((b) => b > 0);
  for (const batch of sizes) {
    exec = created;
    const results: number[] = [];
    const running = exec.taskRunList.filter((r) => r.taskId === 'r' && !isTerminal(r.state.current));
    for (let i = 0; i < running.length; i += batch) {
      results.push(step(running.slice(i, i + batch).map((r) => ({ type: 'task-result', taskRunId: r.id, attempt: r.attempts.length, outcome: { state: 'SUCCESS', outputs: { value: r.value } } }))));
    }
    if (exec.state.current !== 'SUCCESS') throw new Error(`the loop ended ${exec.state.current}`);
    line(`result steps of ${batch}`, results);
  }
}
