// Micro-benchmark of template rendering (the cost of the per-render budget): `npx tsx test/bench/render.ts`.
// Prints the median time per render of a typical template and of a loop-heavy one over several rounds.
import { createRenderer } from '../../operator/expr/index.js';

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
const ROUNDS = 7;

const renderer = createRenderer();
for (const [name, template, count] of CASES) {
  for (let i = 0; i < 1_000; i++) renderer.render(template, vars); // warm-up
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < count; i++) renderer.render(template, vars);
    rounds.push(((performance.now() - start) * 1000) / count);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(8)} ${count} renders x ${ROUNDS}: median ${rounds[ROUNDS >> 1].toFixed(3)} µs/render (min ${rounds[0].toFixed(3)})`);
}
