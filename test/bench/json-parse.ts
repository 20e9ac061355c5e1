// JSON parse benchmark: why execution bodies (the controller's hot path) are read with plain JSON.parse rather than the
// prototype-free parseJsonSafe (core/keyed.ts). JSON.parse only creates own data properties, so it cannot pollute; the
// reviver costs several times more per read. Printed, never asserted.
import { parseJsonSafe } from '../../operator/core/keyed.js';

function execution(runs: number): unknown {
  const now = new Date().toISOString();
  const state = {
    current: 'SUCCESS', startDate: now, endDate: now, duration: 'PT1S',
    histories: ['CREATED', 'RUNNING', 'SUCCESS'].map((s) => ({ state: s, date: now })),
  };
  return {
    id: 'e', namespace: 'company.team', flowId: 'f', flowRevision: 1, originalId: 'e', labels: [{ key: 'team', value: 'data' }],
    inputs: { name: 'x', cfg: { a: 1, b: [1, 2, 3] } }, state,
    taskRunList: Array.from({ length: runs }, (_, i) => ({
      id: `tr${i}`, executionId: 'e', namespace: 'company.team', flowId: 'f', taskId: `t${i % 10}`, value: String(i),
      iteration: i, state, attempts: [{ state }],
      outputs: { value: `out ${i}`, code: 200, headers: { 'content-type': ['application/json'] }, body: '{"ok":true}' },
    })),
  };
}

/** Mean microseconds per call after a warm-up. */
function micros(f: () => unknown, n: number): number {
  for (let i = 0; i < 5; i++) f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / 1e3 / n;
}

export async function runJsonParseBench(): Promise<void> {
  console.log('\nExecution body parse (controller hot path): JSON.parse vs parseJsonSafe');
  for (const runs of [10, 200, 2000]) {
    const text = JSON.stringify(execution(runs));
    const n = Math.max(20, Math.round(2e6 / text.length));
    const plain = micros(() => JSON.parse(text), n);
    const safe = micros(() => parseJsonSafe(text), n);
    console.log(`  ${runs} task runs (${(text.length / 1024).toFixed(0)} KiB): JSON.parse ${plain.toFixed(0)} µs, parseJsonSafe ${safe.toFixed(0)} µs (x${(safe / plain).toFixed(1)})`);
  }
}
