// Namespace changes reach executions: the embedded service (API + controller) runs a flow, the namespace's variables
// and plugin defaults change through the API, and the next execution of the same flow revision sees the new ones;
// deleting the namespace takes them away again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

let env: Embedded;
beforeAll(async () => {
  env = await startEmbedded();
  await env.createFlow(`id: ns-change
namespace: change.team
tasks:
  - id: ret
    type: io.kestra.plugin.core.debug.Return
    format: "{{ namespace.color ?? 'none' }}"
  - id: log
    type: io.kestra.plugin.core.log.Log
    message: logged
`);
});
afterAll(async () => { await env.close(); });

const put = (id: string, body: unknown) =>
  env.json(`/namespaces/${id}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function run(): Promise<{ value: unknown; logs: string[] }> {
  const { id } = await env.execute('change.team', 'ns-change');
  const done = await env.waitFor(id, (e) => ['SUCCESS', 'FAILED', 'WARNING'].includes(e.state.current));
  expect(done.state.current).toBe('SUCCESS');
  await env.stores.logs.flush();
  const logs = (await env.json(`/logs/${id}`)).body.map((l: { level: string; message: string }) => `${l.level} ${l.message}`);
  return { value: done.taskRunList.find((r: { taskId: string }) => r.taskId === 'ret').outputs.value, logs };
}

describe('a namespace change reaches the next execution', () => {
  it('variables and plugin defaults of the namespace and its parent, then none after the delete', async () => {
    expect(await run()).toEqual({ value: 'none', logs: ['INFO logged'] });
    expect((await put('change', { variables: { color: 'red' }, pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'WARN' } }] })).status).toBe(200);
    expect(await run()).toEqual({ value: 'red', logs: ['WARN logged'] });
    expect((await put('change.team', { variables: { color: 'blue' }, pluginDefaults: [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'ERROR' } }] })).status).toBe(200);
    expect(await run()).toEqual({ value: 'blue', logs: ['ERROR logged'] });
    expect((await env.json('/namespaces/change.team', { method: 'DELETE' })).status).toBe(204);
    expect((await env.json('/namespaces/change', { method: 'DELETE' })).status).toBe(204);
    expect(await run()).toEqual({ value: 'none', logs: ['INFO logged'] });
  });
});
