// A fan-out whose tasks end at different times (each result from its own timer callback, as script tasks do from
// their process exits) is applied in batches: a handful of record writes, not one full write per result.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

let env: Embedded;
beforeAll(async () => { env = await startEmbedded(); });
afterAll(async () => { await env?.close(); });

it('1,000 Sleep tasks ending over half a second are applied in batches', async () => {
  await env.createFlow(`id: sleepers
namespace: fanout
tasks:
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: "{{ range(1, 1000) }}"
    tasks:
      - id: nap
        type: ai.service.plugin.core.flow.Sleep
        duration: "PT{{ (taskrun.value % 50) / 100 }}S"
`);
  let writes = 0;
  let id = '';
  env.stores.executions.watch((e) => { if (e.type === 'MODIFIED' && e.execution.id === id) writes++; });
  id = (await env.execute('fanout', 'sleepers')).id;
  const end = await env.waitFor(id, (e) => ['SUCCESS', 'FAILED'].includes(e.state.current), 60_000);
  expect(end.state.current).toBe('SUCCESS');
  expect(end.taskRunList).toHaveLength(1001);
  // One write per result (the old behaviour) would be about 1,000. How many results share a write depends on how many
  // arrive while the previous step is written (50 distinct end times, spread by the batched starts): faster steps make
  // smaller batches, 130-240 writes here. Below 400 still proves results are applied several at a time.
  expect(writes).toBeLessThan(400);
}, 90_000);
