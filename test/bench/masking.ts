// Masking figures: the time to mask a ~100 KB execution record (as text, and deeply as data) with 0, 20 and 1,000 known
// secrets, and to build the masker. `BENCH=masking npm run bench`.
import { createMasker } from '../../operator/secrets/masker.js';

function record(): unknown {
  const taskRunList = Array.from({ length: 200 }, (_, i) => ({
    id: `run${i}`, taskId: `task_${i % 17}`, state: { current: 'SUCCESS', startDate: new Date(0).toISOString() },
    outputs: { value: `line ${i}: the quick brown fox jumps over the lazy dog ${'x'.repeat(300)}`, n: i, ok: true },
  }));
  return { id: 'exec', labels: [{ key: 'team', value: 'data' }], inputs: { name: 'world' }, taskRunList };
}

function time(label: string, rounds: number, f: () => unknown): void {
  for (let i = 0; i < 5; i++) f();
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) f();
  const ms = (performance.now() - t0) / rounds;
  console.log(`${label.padEnd(58)} ${ms.toFixed(3)} ms`);
}

export async function runMaskingBench(): Promise<void> {
  const data = record();
  const text = JSON.stringify(data);
  console.log(`\n## masking (record of ${(text.length / 1024).toFixed(0)} KB)`);
  for (const n of [0, 20, 1000]) {
    const values = Array.from({ length: n }, (_, i) => `secret-value-${i}-${Math.random().toString(36).slice(2, 12)}`);
    time(`build a masker of ${n} secrets`, n > 100 ? 5 : 50, () => createMasker(values));
    const m = createMasker(values);
    time(`mask the record's JSON text, ${n} secrets (no match)`, 20, () => m.mask(text));
    time(`mask the record deeply (strings and keys), ${n} secrets`, 20, () => m.maskDeep(data));
    if (n) time(`mask the JSON text with 10 occurrences, ${n} secrets`, 20, () => m.mask(text.replaceAll('lazy dog 1', `${values[0]} 1`)));
  }
}

