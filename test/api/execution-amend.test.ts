// Labels and change-status of ended executions through the whole embedded service: the API queues a command, the real
// controller applies it to the record (the only writer of executions), and the API answers the updated execution.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../operator/core/types.js';
import { startEmbedded, type Embedded } from '../support/embedded.js';
import { until } from '../support/wait.js';
import { jsonInit, simpleFlow } from './helpers.js';

let svc: Embedded;
const NS = 'amend.team';

beforeAll(async () => {
  svc = await startEmbedded();
  await svc.createFlow(simpleFlow(NS, 'f'));
}, 60_000);
afterAll(async () => { await svc?.close(); });

async function ended(query = ''): Promise<Execution> {
  const e = (await svc.json(`/executions/${NS}/f?wait=true${query}`, { method: 'POST' })).body as Execution;
  expect(e.state.current).toBe('SUCCESS');
  return e;
}

describe('amending ended executions (embedded controller)', () => {
  it('POST /executions/{id}/labels replaces the labels and keeps the system ones', async () => {
    const e = await ended('&labels=system.correlationId:c1&labels=old:1');
    const res = await svc.json(`/executions/${e.id}/labels`, jsonInit('POST', [{ key: 'team', value: 'data' }]));
    expect(res.status).toBe(200);
    expect(res.body.labels).toEqual([{ key: 'team', value: 'data' }, { key: 'system.correlationId', value: 'c1' }]);
    expect((await svc.stores.executions.get(e.id))!.execution.labels).toEqual(res.body.labels);
    expect(await svc.stores.executions.pendingCommands(e.id)).toEqual([]);
  });

  it('POST /executions/{id}/change-status moves it to another terminal state', async () => {
    const e = await ended();
    const res = await svc.json(`/executions/${e.id}/change-status?status=FAILED`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.state.current).toBe('FAILED');
    expect(res.body.state.histories.at(-1).state).toBe('FAILED');
    expect(res.body.taskRunList.map((t: { state: { current: string } }) => t.state.current)).toEqual(['SUCCESS']);
  });

  it('the bulk forms are applied by the controller too', async () => {
    const a = await ended();
    const b = await ended();
    expect((await svc.json('/executions/labels/by-ids', jsonInit('POST', { executionsId: [a.id, b.id], executionLabels: [{ key: 'k', value: 'v' }] }))).body).toEqual({ count: 2 });
    expect((await svc.json('/executions/change-status/by-ids?newStatus=CANCELLED', jsonInit('POST', [a.id]))).body).toEqual({ count: 1 });
    await until(async () => {
      const [ea, eb] = [(await svc.stores.executions.get(a.id))!.execution, (await svc.stores.executions.get(b.id))!.execution];
      return ea.state.current === 'CANCELLED' && [ea, eb].every((e) => e.labels.some((l) => l.key === 'k' && l.value === 'v'));
    }, 'the bulk commands to be applied', 30_000);
  });
});
