// Eager start through the API of the embedded service (test/support/embedded.ts wires ApiOptions.admit as main does):
// POST /executions answers the execution as created (CREATED, Kestra's answer) once it is stored, already ended for a
// flow of quick tasks; ?wait=true answers the end; bad input stores nothing; a stopped
// controller makes the API answer 503 and store nothing.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const NS = 'eager.api';
const FLOW = `id: three
namespace: ${NS}
inputs:
  - id: n
    type: INT
    required: false
tasks:
${[0, 1, 2].map((i) => `  - id: t${i}
    type: io.kestra.plugin.core.debug.Return
    format: "{{ execution.id }}-${i}"
`).join('')}`;

let e: Embedded;
beforeEach(async () => {
  e = await startEmbedded();
  await e.createFlow(FLOW);
});
afterEach(async () => { await e.close(); });

const post = (query = '', body = '{}') => e.json(`/executions/${NS}/three${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
const total = async () => (await e.json(`/executions/search?namespace=${NS}`)).body.total;

it('answers CREATED once stored with its first step taken, and the execution runs once to SUCCESS', async () => {
  const r = await post();
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ namespace: NS, flowId: 'three', flowRevision: 1, state: { current: 'CREATED' } });
  expect(r.body.taskRunList ?? []).toEqual([]);
  // Stored before the answer, started already (SUCCESS, unless the inline budget of 10 ms ran out on a loaded machine;
  // that no update follows is operator/controller/admit.test.ts's, with the budget injected).
  const stored = await e.stores.executions.get(r.body.id);
  expect(stored?.execution.state.current).toMatch(/^(RUNNING|SUCCESS)$/);
  const done = await e.waitFor(r.body.id, (x) => x?.state?.current === 'SUCCESS');
  expect(done.taskRunList.map((t: any) => [t.taskId, t.attempts.length])).toEqual([['t0', 1], ['t1', 1], ['t2', 1]]);
});

it('?wait=true answers the ended execution', async () => {
  const r = await post('?wait=true');
  expect(r.status).toBe(200);
  expect(r.body.state.current).toBe('SUCCESS');
  expect(r.body.taskRunList).toHaveLength(3);
});

it('bad input is refused (422) and stores nothing', async () => {
  const r = await post('', JSON.stringify({ n: 'not a number' }));
  expect(r.status).toBe(422);
  expect(await total()).toBe(0);
});

it('a stopped controller: the API answers 503 (transient) and stores nothing', async () => {
  await e.controller.stop();
  const r = await post();
  expect(r.status).toBe(503);
  expect(await total()).toBe(0);
});

it('?wait=true of an execution that ends after its creation answers its end as the watch carried it: no read of the record', async () => {
  // Wider than the first step (2,000 runs): the execution is RUNNING when created, and ends later.
  await e.createFlow(`id: wide\nnamespace: ${NS}\ntasks:\n  - id: each\n    type: io.kestra.plugin.core.flow.EachParallel\n    value: "{{ range(1, 2500) }}"\n    tasks:\n      - id: r\n        type: io.kestra.plugin.core.debug.Return\n        format: "{{ taskrun.value }}"\n`);
  // Reads counted on the SQLite store's own method (the stores handed out are a masking proxy over it).
  const executions = e.stores.executions as typeof e.stores.executions & { get: (id: string) => unknown };
  const original = Object.getPrototypeOf(executions).get as (this: unknown, id: string) => unknown;
  const reads: string[] = [];
  executions.get = function (this: unknown, id: string) { reads.push(id); return original.call(this, id); } as typeof executions.get;
  try {
    const r = await e.json(`/executions/${NS}/wide?wait=true`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.body.state.current).toBe('SUCCESS');
    expect(r.body.taskRunList).toHaveLength(2_501);
    expect(reads.filter((id) => id === r.body.id)).toEqual([]);
  } finally {
    delete (executions as Partial<typeof executions>).get;
  }
});
