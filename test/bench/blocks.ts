// In-process figures of the longest synchronous pieces of a wide fan-out's record (issue 12, /healthz during 100,000-item
// loops): each piece done in one go (as before) against the way it is done now, timed as the longest gap between two
// turns of the event loop while it runs. Medians of `BENCH_BLOCKS_ROUNDS` alternating rounds; CPU-bound, so less
// noisy on the shared machine than the server figures. Printed, never asserted. `BENCH=blocks npm run bench`.
// Also the resync's listing, the template `outputs` tree and a range's loop values (issue 12, second pass).
import { Readable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import { jsonBody } from '../../api/json-stream.js';
import { stepMany } from '../../operator/core/engine.js';
import { EngineHarness } from '../../operator/core/engine-harness.js';
import type { EngineEvent } from '../../operator/core/engine-types.js';
import { buildOutputs } from '../../operator/core/context.js';
import { copyData, freezeData, sameData } from '../../operator/core/keyed.js';
import { distinctTexts } from '../../operator/core/loops.js';
import { indexRuns } from '../../operator/core/run-index.js';
import type { Execution, TaskRun } from '../../operator/core/types.js';
import { openEmbeddedStores } from '../../operator/store/sqlite/index.js';
import { sampleExecution, tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { median } from './stats.js';

const now = '2026-01-01T00:00:00.000Z';

/** A child run of an EachParallel over range(1, n) of a Return task, as the engine records it. */
function child(i: number, state: 'RUNNING' | 'SUCCESS'): TaskRun {
  const histories = [{ state: 'CREATED', date: now }, { state: 'RUNNING', date: now }, ...(state === 'SUCCESS' ? [{ state: 'SUCCESS', date: now }] : [])];
  const s = () => ({ current: state, startDate: now, histories: copyData(histories), ...(state === 'SUCCESS' ? { endDate: now, duration: 'PT0.001S' } : {}) });
  return {
    id: `5xkQ${String(i).padStart(18, '0')}`, executionId: '6mzR0000000000000000', namespace: 'bench', flowId: 'eachparallel100000',
    taskId: 'r', parentTaskRunId: '3abc0000000000000000', value: String(i + 1), iteration: i, state: s(),
    attempts: [{ state: s() }], ...(state === 'SUCCESS' ? { outputs: { value: String(i + 1) } } : {}),
  } as unknown as TaskRun;
}

/** Longest gap (ms) between two turns of the event loop while `work` runs (a setImmediate loop beside it). */
async function longestBlock(work: () => unknown): Promise<number> {
  let worst = 0;
  let last = performance.now();
  let done = false;
  const tick = () => {
    const t = performance.now();
    worst = Math.max(worst, t - last);
    last = t;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  done = true;
  await new Promise((r) => setImmediate(r));
  worst = Math.max(worst, performance.now() - last);
  return worst;
}

async function drain(stream: Readable): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

export async function runBlocksBench(): Promise<void> {
  const n = Number(process.env.BENCH_BLOCKS_RUNS ?? 100_000);
  const rounds = Number(process.env.BENCH_BLOCKS_ROUNDS ?? 5);
  console.log(`\n== Longest event-loop block of one piece of a ${n.toLocaleString('en-US')}-run record (in process, median of ${rounds} rounds) ==`);
  const running = Array.from({ length: n }, (_, i) => freezeData(child(i, 'RUNNING')));
  const ended = Array.from({ length: n }, (_, i) => child(i, 'SUCCESS'));
  const record = { ...sampleExecution('e', { state: 'SUCCESS' }), taskRunList: ended } as Execution;
  const figures: Record<string, number[]> = {};
  const add = (k: string, v: number) => (figures[k] ??= []).push(v);
  // An EachParallel of n Return children, started, its runs frozen as the store leaves them; then the results of a
  // tenth of them in one step: results only (runs copied on first change) against the same batch with a tick (which
  // takes the usual way: every running run copied, then compared with its original).
  const P = 'ai.service.plugin.';
  const h = new EngineHarness(`id: f\nnamespace: bench\ntasks:\n  - id: loop\n    type: ${P}core.flow.EachParallel\n    value: "{{ range(1, ${n}) }}"\n`
    + `    tasks:\n      - id: r\n        type: ${P}core.debug.Return\n        format: "{{ taskrun.value }}"\n`);
  h.send({ type: 'start', runningCount: 0 });
  for (const run of h.exec.taskRunList) freezeData(run);
  const results: EngineEvent[] = h.exec.taskRunList.filter((r) => r.taskId === 'r').slice(0, n / 10)
    .map((r) => ({ type: 'task-result', taskRunId: r.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { value: r.value } } }));
  const tmp = tempDir('bench-blocks-');
  const stores = openEmbeddedStores(tmp.dir);
  try {
    for (let r = 0; r < rounds; r++) {
      add(`engine step of ${results.length} results: every running run copied and compared (before)`, await longestBlock(() => stepMany(h.flow, h.exec, [...results, { type: 'tick' }], h.deps)));
      add(`engine step of ${results.length} results: runs copied on first change (now)`, await longestBlock(() => stepMany(h.flow, h.exec, results, h.deps)));
      // A step compares every running run it copied with its original (engine.ts settleRuns).
      const copies = running.map((x) => copyData(x, true));
      add('compare copied runs: isDeepStrictEqual (before)', await longestBlock(() => copies.every((c, i) => isDeepStrictEqual(c, running[i]))));
      add('compare copied runs: sameData (now)', await longestBlock(() => copies.every((c, i) => sameData(c, running[i]))));
      // The ?wait=true / GET answer of the ended record.
      add('JSON answer: one JSON.stringify (before; the socket write comes on top)', await longestBlock(() => JSON.stringify(record).length));
      add('JSON answer: streamed, 500 runs per turn (now)', await longestBlock(() => drain(jsonBody(record, 'taskRunList') as Readable)));
      // The store's update writing every run changed (a fan-out's results): serialisation, then the group commit.
      const id = `e${r}`;
      const created = await stores.executions.create({ ...sampleExecution(id, { state: 'RUNNING' }), taskRunList: running.map((x) => copyData(x)) });
      const next = { ...created.execution, taskRunList: ended.map((x) => copyData(x)) };
      const others = next.taskRunList.map((x) => copyData(x));
      add('store update: serialise + freeze the changed runs in one go (before, then the transaction)', await longestBlock(() => {
        for (const run of others) { JSON.stringify(run); freezeData(run); }
      }));
      add('store update of every run (now: serialised 2,000 per turn, then the transaction: its longest block)', await longestBlock(() => stores.executions.update(next, created.resourceVersion)));
      // The periodic resync's listing of the active executions: this one, running, with its n runs.
      add('resync listing: listActive, every record read whole (before)', await longestBlock(() => stores.executions.listActive()));
      add('resync listing: listActiveSummaries, columns only (now)', await longestBlock(() => stores.executions.listActiveSummaries()));
      // The `outputs` of the template variables of a step (a fresh index per step), read by a template naming one task.
      const index = () => indexRuns(ended);
      const whole = index();
      add('outputs tree: every branch placed (before)', await longestBlock(() => {
        const tree = buildOutputs(record, whole);
        for (const k of Object.keys(tree)) void tree[k];
      }));
      const lazy = index();
      add('outputs tree: branches made on first read, none read (now)', await longestBlock(() => buildOutputs(record, lazy)));
      // The values of an EachParallel over range(1, n), rendered: their texts, duplicates left out.
      const range = Array.from({ length: n }, (_, i) => i + 1);
      add('loop values: a set over JSON.stringify of each value (before)', await longestBlock(() => {
        const seen = new Set<string>();
        const out: string[] = [];
        for (const x of range) { const t = typeof x === 'string' ? x : JSON.stringify(x); if (!seen.has(t)) { seen.add(t); out.push(t); } }
        return out.length;
      }));
      add('loop values: distinctTexts, no set for a rising run of numbers (now)', await longestBlock(() => distinctTexts(range, 'value').length));
      await stores.executions.delete(id);
    }
  } finally {
    await stores.close();
    tmp.remove();
  }
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(92)} ${median(v).toFixed(0).padStart(6)} ms`);
}
