import { createRenderer } from './index.js';
const r = createRenderer();
const vars = { inputs: { name: 'World', list: [1, 2], map: { a: 1 } }, vars: { selfRef: '{{ render(vars.selfRef) }}' }, hostFn: () => 'called', hostDate: new Date('2024-01-01T00:00:00Z'), hostMap: new Map([['a', 1]]) };
for (const t of process.argv.slice(2)) { try { console.log(t, '=>', r.render(t, vars)); } catch (e) { console.log(t, 'ERR', (e as Error).message.slice(0, 150)); } }
