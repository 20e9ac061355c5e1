// Micro-benchmark of template rendering (what the per-render budget costs): `BENCH=render npm run bench`.
// BASELINE=<dir with another checkout's operator/> also loads that engine and alternates rounds between the two in
// this one process, so machine load affects both alike; it prints each one's median and minimum CPU time per render.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRenderer } from '../../operator/expr/index.js';

type Render = (template: string, vars: Record<string, unknown>) => string;

const vars = {
  outputs: { t: { value: 'result-42' } },
  taskrun: { value: 'item-a' },
  flow: { id: 'f', namespace: 'company.team' },
  execution: { id: 'e1' },
};
const CASES: [string, string, number][] = [
  ['typical', '{{ outputs.t.value }}-{{ taskrun.value | upper }}', 100_000],
  ['loop', '{% for i in range(1, 100) %}{{ i }},{% endfor %}', 5_000],
  ['filters', '{{ [3, 1, 2] | sort | join(",") }} {{ {"a": taskrun.value} | keys | first }} {{ "x" ~ flow.id ~ execution.id }}', 50_000],
];
const ROUNDS = 21;

const engines: [string, Render][] = [['this', createRenderer().render]];
async function loadBaseline(): Promise<void> {
  if (!process.env.BASELINE || engines.length > 1) return;
  const url = pathToFileURL(resolve(process.env.BASELINE, 'operator/expr/index.ts')).href;
  const baseline = (await import(url)) as { createRenderer(): { render: Render } };
  engines.unshift(['baseline', baseline.createRenderer().render]);
}

/** CPU microseconds (user + system) of this process: less sensitive than wall time to other processes. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function round(render: Render, template: string, count: number): number {
  const start = cpuMicros();
  for (let i = 0; i < count; i++) render(template, vars);
  return (cpuMicros() - start) / count;
}

export async function runRenderBench(): Promise<void> {
  await loadBaseline();
  console.log('render: CPU time per rendering (budget: EXPRESSION_TIMEOUT_MS, EXPRESSION_MAX_BYTES)' +
    (process.env.BASELINE ? `, against ${process.env.BASELINE}` : '; BASELINE=<another checkout> compares'));
  for (const [name, template, count] of CASES) {
    const times = new Map<string, number[]>(engines.map(([label]) => [label, []]));
    for (const [, render] of engines) for (let i = 0; i < 2_000; i++) render(template, vars); // warm-up
    for (let r = 0; r < ROUNDS; r++) for (const [label, render] of engines) times.get(label)!.push(round(render, template, count));
    const medians: number[] = [];
    for (const [label, list] of times) {
      list.sort((a, b) => a - b);
      medians.push(list[ROUNDS >> 1]);
      console.log(`${name.padEnd(8)} ${label.padEnd(8)} ${count} renders x ${ROUNDS}: median ${list[ROUNDS >> 1].toFixed(3)} µs, min ${list[0].toFixed(3)} µs`);
    }
    if (medians.length === 2) console.log(`${name.padEnd(8)} this/baseline (medians): ${(medians[1] / medians[0]).toFixed(3)}`);
  }
}
