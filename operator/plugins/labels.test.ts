// Tests of core.execution.Labels: labels from a map, a list or a JSON text; keys computed at run time (even
// `__proto__`, `constructor`) are stored as ordinary labels, never lost to a prototype.
import { afterEach, expect, it } from 'vitest';
import { labelsPlugin } from './labels.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

const run = async (labels: unknown) => {
  t = makeTestContext({ task: { id: 'l', type: labelsPlugin.type, labels } });
  return labelsPlugin.run(t.ctx);
};

it('sets labels from a map with rendered keys and values', async () => {
  expect(await run({ team: '{{ flow.id }}', '{{ task.id }}-key': 2 }))
    .toEqual({ state: 'SUCCESS', executionLabels: [{ key: 'team', value: 'flow1' }, { key: 'l-key', value: '2' }] });
});

it('keeps run-time keys named like Object.prototype members (JSON text)', async () => {
  const r = await run('{"__proto__": "x", "constructor": "y", "ok": "z"}');
  expect(r.state).toBe('SUCCESS');
  expect(r.executionLabels).toEqual([{ key: '__proto__', value: 'x' }, { key: 'constructor', value: 'y' }, { key: 'ok', value: 'z' }]);
});

it('keeps run-time keys named like Object.prototype members (list)', async () => {
  const r = await run([{ key: "{{ '__proto__' }}", value: 'x' }]);
  expect(r.executionLabels).toEqual([{ key: '__proto__', value: 'x' }]);
});

it('takes an expression rendering to a JSON map or a JSON list of {key, value} (Kestra flows build labels so)', async () => {
  t = makeTestContext({ task: { id: 'l', type: labelsPlugin.type, labels: '{{ vars.list | json }}' }, variables: { vars: { list: '[{"key": "env", "value": "prod"}, {"key": "n", "value": 3}]' } } });
  t.ctx.task.labels = '{{ vars.list }}';
  expect((await labelsPlugin.run(t.ctx)).executionLabels).toEqual([{ key: 'env', value: 'prod' }, { key: 'n', value: '3' }]);
  await t.cleanup();
  t = makeTestContext({ task: { id: 'l', type: labelsPlugin.type, labels: "{{ {'team': flow.id} | json }}" } });
  expect((await labelsPlugin.run(t.ctx)).executionLabels).toEqual([{ key: 'team', value: 'flow1' }]);
});

it('refuses an expression that renders to neither a map nor a list', async () => {
  const r = await run('{{ 42 }}');
  expect(r.state).toBe('FAILED');
  expect(r.error).toMatch(/must be a map or a list/);
});

it('a value that is a map is rendered and stored as its JSON text, as Kestra does (map and list forms)', async () => {
  expect((await run({ stage: { name: '{{ flow.id }}', n: 1 } })).executionLabels).toEqual([{ key: 'stage', value: '{"name":"flow1","n":1}' }]);
  await t?.cleanup();
  expect((await run([{ key: 'stage', value: { name: 'done' } }])).executionLabels).toEqual([{ key: 'stage', value: '{"name":"done"}' }]);
});

it('takes JSON text without an expression; a key given twice keeps the last value, an empty key fails the task (Kestra)', async () => {
  expect((await run('{ "k": "value1", "k": "value2" }')).executionLabels).toEqual([{ key: 'k', value: 'value2' }]);
  await t?.cleanup();
  const r = await run('{ "fromStringKey": "", "": "value2" }');
  expect(r.state).toBe('FAILED');
});
