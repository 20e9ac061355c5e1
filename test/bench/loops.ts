// In-process figures of wide loops through the real controller and SQLite store (issue 12), without HTTP, the bench's
// client or a second process: a loop over range(1, N) of a Return task (EachParallel, ForEach `concurrencyLimit: 0`,
// the default sequential ForEach), timed from its creation to its end, with the longest holds of this process's event
// loop (a 5 ms timer firing late: what a request would have waited), CPU, peak heap and RSS. Steadier than the server
// figures on a shared machine, and what the batch sizes were chosen with (docs/performance.md, "Batches of 500").
// Then what EXECUTION_CACHE_MAX_TASK_RUNS holds in memory with many wide executions waiting (BENCH_LOOPS_PAUSED,
// `<count>x<items>`, default 10x20000; `0x0` skips it). `BENCH=loops npm run bench` (BENCH_LOOPS_ITEMS, default
// 100,000; BENCH_LOOPS_KINDS, default all three). Printed, never asserted.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { newExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import { initExpressions } from '../../operator/expr/index.js';
import { parseFlow } from '../../operator/model/index.js';
import { openEmbeddedStores } from '../../operator/store/sqlite/index.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { Controller, EVENTS_PER_BATCH } from '../../operator/controller/controller.js';
import { RUNS_PER_STEP } from '../../operator/core/runs.js';

const P = 'io.kestra.plugin.core.';
const LOOPS: Record<string, (n: number) => string> = {
  EachParallel: (n) => `type: ${P}flow.EachParallel\n    value: "{{ range(1, ${n}) }}"`,
  'ForEach c=0': (n) => `type: ${P}flow.ForEach\n    concurrencyLimit: 0\n    values: "{{ range(1, ${n}) }}"`,
  'ForEach c=1': (n) => `type: ${P}flow.ForEach\n    values: "{{ range(1, ${n}) }}"`,
};

/** A full collection (the bench runs without --expose-gc: the flag is set, and `gc` taken from a new context). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * `count` executions of a `items`-item EachParallel followed by a Pause, one after the other until each waits PAUSED,
 * with EXECUTION_CACHE_MAX_TASK_RUNS at `bound`: the heap after a full collection, and the task runs the controller
 * keeps. What the bound holds in memory, against the records of every waiting execution.
 */
async function pausedRecords(count: number, items: number, bound: number): Promise<{ heapMiB: number; kept: number; baseMiB: number }> {
  const tmp = tempDir();
  const stores = openEmbeddedStores(tmp.dir, { maxWrittenRuns: bound });
  const controller = new Controller(stores, { dataDir: tmp.dir, env: { EXECUTION_CACHE_MAX_TASK_RUNS: String(bound) } });
  await controller.start();
  try {
    const yaml = `id: paused\nnamespace: bench\ntasks:\n  - id: loop\n    ${LOOPS.EachParallel!(items)}\n    tasks:\n      - id: r\n`
      + `        type: ${P}debug.Return\n        format: "{{ taskrun.value }}"\n  - id: wait\n    type: ${P}flow.Pause\n`;
    const { record } = await stores.flows.save(parseFlow(yaml), yaml);
    collect();
    const baseMiB = process.memoryUsage().heapUsed / 2 ** 20;
    for (let k = 0; k < count; k++) {
      const exec = newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() });
      const paused = new Promise<void>((resolve) => stores.executions.watch((e) => { if (e.execution.id === exec.id && e.execution.state.current === 'PAUSED') resolve(); }));
      await stores.executions.create(exec);
      await paused;
    }
    await controller.whenIdle();
    await new Promise((r) => setTimeout(r, 100));
    collect();
    return { heapMiB: process.memoryUsage().heapUsed / 2 ** 20, kept: controller.cachedTaskRuns, baseMiB };
  } finally {
    await controller.stop();
    await stores.close();
    tmp.remove();
  }
}

export async function runLoopsBench(): Promise<void> {
  const n = Number(process.env.BENCH_LOOPS_ITEMS ?? 100_000);
  const kinds = (process.env.BENCH_LOOPS_KINDS ?? Object.keys(LOOPS).join(',')).split(',').map((k) => k.trim()).filter((k) => LOOPS[k]);
  await initExpressions();
  console.log(`\n== Wide loops through the controller and SQLite in process (${n.toLocaleString('en-US')} Return tasks; `
    + `${RUNS_PER_STEP} runs a creation step, ${EVENTS_PER_BATCH} events a batch) ==`);
  const tmp = tempDir();
  const stores = openEmbeddedStores(tmp.dir);
  const controller = new Controller(stores, { dataDir: tmp.dir, env: {} });
  await controller.start();
  try {
    for (const kind of kinds) {
      const id = `loop${kinds.indexOf(kind)}`;
      const yaml = `id: ${id}\nnamespace: bench\ntasks:\n  - id: loop\n    ${LOOPS[kind]!(n)}\n    tasks:\n      - id: r\n`
        + `        type: ${P}debug.Return\n        format: "{{ taskrun.value }}"\n`;
      const { record } = await stores.flows.save(parseFlow(yaml), yaml);
      const exec = newExecution({ id: newId(), flow: record.flow, inputs: {}, now: new Date() });
      const holds: number[] = [];
      let last = performance.now();
      let peakRss = 0;
      let peakHeap = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        holds.push(now - last - 5);
        last = now;
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed);
      }, 5);
      const ended = new Promise<string>((resolve) => stores.executions.watch((e) => {
        if (e.execution.id === exec.id && ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(e.execution.state.current)) resolve(e.execution.state.current);
      }));
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await stores.executions.create(exec);
      const state = await ended;
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(timer);
      holds.sort((a, b) => b - a);
      const mib = (b: number) => Math.round(b / 2 ** 20);
      console.log(`  ${kind.padEnd(13)} ${state}: ${Math.round(ms)} ms (${((ms * 1000) / n).toFixed(1)} µs per item), CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms, `
        + `longest event-loop holds ${holds.slice(0, 5).map((h) => Math.round(h)).join(', ')} ms (${holds.filter((h) => h > 50).length} over 50 ms), `
        + `peak heap ${mib(peakHeap)} MiB, peak RSS ${mib(peakRss)} MiB`);
    }
  } finally {
    await controller.stop();
    await stores.close();
    tmp.remove();
  }
  const [count, items] = (process.env.BENCH_LOOPS_PAUSED ?? '10x20000').split('x').map(Number) as [number, number];
  if (!(count > 0 && items > 0)) return;
  console.log(`  ${count} executions of a ${items.toLocaleString('en-US')}-item EachParallel, each left PAUSED after it (heap after a full collection, above the one before):`);
  for (const bound of [count * (items + 2), 2 * (items + 2)]) {
    const r = await pausedRecords(count, items, bound);
    console.log(`    EXECUTION_CACHE_MAX_TASK_RUNS=${bound}: +${Math.round(r.heapMiB - r.baseMiB)} MiB, the controller keeping ${r.kept.toLocaleString('en-US')} task runs`);
  }
}
