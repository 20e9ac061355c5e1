// Throughput figures of the embedded store (run: npx tsx operator/store/sqlite/bench.ts): execution creates and
// updates with ~3 KB bodies, and log lines appended and flushed. Prints figures only; nothing is asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedStores } from './index.js';
import { logLine, sampleExecution } from './test-fixtures.js';

const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 2000);
const UPDATES_PER_EXECUTION = 4;
const LOG_LINES = 100_000;

function rate(count: number, startNs: bigint): string {
  const seconds = Number(process.hrtime.bigint() - startNs) / 1e9;
  return `${Math.round(count / seconds).toLocaleString('en-US')}/s (${count} in ${seconds.toFixed(2)} s)`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'store-bench-'));
  const stores = openEmbeddedStores(dir);
  try {
    const executions = Array.from({ length: EXECUTIONS }, (_, i) => sampleExecution(`bench-${i}`, { padding: 2800 }));
    console.log(`execution body: ${JSON.stringify(executions[0]).length} bytes`);

    let start = process.hrtime.bigint();
    for (const execution of executions) await stores.executions.create(execution);
    console.log(`creates: ${rate(EXECUTIONS, start)}`);

    start = process.hrtime.bigint();
    for (let round = 1; round <= UPDATES_PER_EXECUTION; round++) {
      for (const execution of executions) {
        execution.state.current = round === UPDATES_PER_EXECUTION ? 'SUCCESS' : 'RUNNING';
        execution.state.histories.push({ state: execution.state.current, date: new Date().toISOString() });
        await stores.executions.update(execution, round);
      }
    }
    console.log(`updates: ${rate(EXECUTIONS * UPDATES_PER_EXECUTION, start)}`);

    start = process.hrtime.bigint();
    for (let i = 0; i < LOG_LINES; i += 10) {
      stores.logs.append(Array.from({ length: 10 }, (_, j) => logLine(`bench-${i % EXECUTIONS}`, `processing item ${i + j} of the batch`)));
      if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await stores.logs.flush();
    console.log(`log lines: ${rate(LOG_LINES, start)}`);

    start = process.hrtime.bigint();
    const found = await stores.executions.search({ namespace: 'company', state: ['SUCCESS'], limit: 25 });
    console.log(`execution search (${found.total} matches, first 25): ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(1)} ms`);

    start = process.hrtime.bigint();
    const page = await stores.logs.search({ q: 'item', limit: 50 });
    console.log(`log search (${page.total} matches, first 50): ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(1)} ms`);
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
