// End to end: the example plugin package (examples/plugin-hello) loaded through the PLUGINS setting, its task types
// used by a flow created over the API and run by the embedded engine, and listed by /api/v1/plugins.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resetRegisteredDefinitions } from '../../operator/plugins/catalog.js';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const HELLO = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../examples/plugin-hello');
let e: Embedded;
beforeAll(async () => { e = await startEmbedded({ PATH: process.env.PATH, PLUGINS: HELLO }); });
afterAll(async () => { await e?.close(); resetRegisteredDefinitions(); });

it('runs a flow using the package\'s task types (Kestra names too) and lists them', async () => {
  await e.createFlow(`id: hello
namespace: company.team
inputs:
  - id: who
    type: STRING
tasks:
  - id: greet
    type: io.kestra.plugin.hello.Greet
    name: "{{ inputs.who }}"
    times: 2
    shout: true
  - id: count
    type: ai.service.plugin.hello.Count
    text: "{{ outputs.greet.greeting }} and more"
`);
  const started = await e.execute('company.team', 'hello', 'create', { who: 'ada' });
  const done = await e.waitFor(started.id, (x) => ['SUCCESS', 'FAILED', 'WARNING'].includes(x?.state?.current));
  expect(done.state.current).toBe('SUCCESS');
  const out = Object.fromEntries(done.taskRunList.map((r: any) => [r.taskId, r.outputs]));
  expect(out.greet).toEqual({ greeting: 'HELLO, ADA!' });
  expect(out.count.words).toBe(4);
  expect(out.count.uri).toMatch(/^kestra:\/\/\/.*words\.txt$/);
  const logs = await e.json(`/logs/${started.id}`);
  expect(logs.body.filter((l: any) => l.message === 'HELLO, ADA!')).toHaveLength(2);

  const plugins = await e.json('/plugins');
  expect(plugins.body.find((p: any) => p.name === 'hello').tasks.map((t: any) => t.cls)).toContain('ai.service.plugin.hello.Count');
  const invalid = await e.json('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' },
    body: 'id: bad\nnamespace: company.team\ntasks:\n  - id: g\n    type: ai.service.plugin.hello.Greet\n    name: x\n    times: 11\n' });
  expect(invalid.status).toBe(422);
  expect(JSON.stringify(invalid.body)).toContain('times');
});
