import { createRenderer, initExpressions } from './index.js';
const r = createRenderer();
const t0 = Date.now();
console.log(r.render('{{ x | jq("[.[] | tostring] | join(\\"-\\")") }}', { x: [1, 2] }));
await initExpressions();
console.log('init ms', Date.now() - t0);
console.log(r.render('{{ x | jq("[.[] | tostring] | join(\\"-\\")") }}', { x: [1, 2] }));
console.log(r.render('{{ x | jq("@base64") }}', { x: 'hi' }));
// perf
const vars = { inputs: { name: 'World', n: 3 }, outputs: { t: { value: 'v' } } };
let s = Date.now();
for (let i = 0; i < 100000; i++) r.render('Hello {{ inputs.name }} {{ outputs.t.value | upper }} {{ inputs.n + 1 }}', vars);
console.log('100k renders ms', Date.now() - s);
s = Date.now();
for (let i = 0; i < 1000000; i++) r.renderTyped('plain string value', vars);
console.log('1M plain ms', Date.now() - s);
