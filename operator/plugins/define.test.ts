// Tests of definePlugin: the schema derived from declared properties, and run() receiving rendered, typed values
// (real expression renderer and secret layer through the plugin test context).
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, defineTrigger, p } from './define.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

const seen: unknown[] = [];
const def = definePlugin({
  type: 'test.Sample',
  aliases: ['io.kestra.plugin.old.Sample'],
  title: 'Sample',
  description: 'A test task.',
  properties: {
    url: p.string().required().describe('Where to send.'),
    count: p.integer({ min: 1, max: 10 }).default(3),
    flag: p.boolean(),
    mode: p.enum(['FAST', 'SLOW'] as const).default('FAST'),
    wait: p.duration(),
    tags: p.stringList(),
    headers: p.stringMap(),
    password: p.string().secret(),
    auth: p.object({ user: p.string().required(), port: p.integer() }),
  },
  outputs: { echoed: { type: 'string', description: 'The URL.' } },
  async run(ctx, props) {
    seen.push(props);
    // Typed: these would not compile if the declared types were lost.
    const n: number = props.count;
    const u: string = props.url;
    return { state: 'SUCCESS', outputs: { echoed: `${u}#${n}` } };
  },
});

function run(task: Record<string, unknown>, variables?: Record<string, unknown>) {
  t = makeTestContext({ task: { id: 's', type: def.type, ...task }, variables });
  return def.runnable.run(t.ctx);
}

describe('definePlugin', () => {
  it('derives the task schema: declared properties, required ones, unknown ones rejected', () => {
    expect(def.type).toBe('ai.service.plugin.test.Sample');
    expect(def.kestraType).toBe('io.kestra.plugin.test.Sample');
    expect(def.schema.required).toEqual(['id', 'type', 'url']);
    expect(def.schema.additionalProperties).toBe(false);
    const props = def.schema.properties as Record<string, Record<string, unknown>>;
    expect(props.url).toEqual({ type: 'string', description: 'Where to send.' });
    expect(props.count).toMatchObject({ minimum: 1, maximum: 10 });
    expect(props.auth).toMatchObject({ type: 'object', required: ['user'], additionalProperties: false });
    expect(props.retry).toBeDefined(); // the properties every task shares
  });

  it('renders and types every property before run', async () => {
    seen.length = 0;
    const r = await run({
      url: 'http://{{ inputs.host }}/x', count: '{{ inputs.n }}', flag: '{{ inputs.n > 1 }}', mode: 'slow', wait: 'PT1.5S',
      tags: ['a', '{{ inputs.host }}'], headers: { 'X-N': 2 }, auth: { user: '{{ inputs.host }}', port: '22' },
    }, { inputs: { host: 'h', n: 4 } });
    expect(r).toEqual({ state: 'SUCCESS', outputs: { echoed: 'http://h/x#4' } });
    expect(seen[0]).toEqual({
      url: 'http://h/x', count: 4, flag: true, mode: 'SLOW', wait: 1500, tags: ['a', 'h'], headers: { 'X-N': '2' },
      password: undefined, auth: { user: 'h', port: 22 },
    });
  });

  it('applies defaults, and fails with a message naming the property', async () => {
    seen.length = 0;
    await run({ url: 'u' });
    expect(seen[0]).toMatchObject({ count: 3, mode: 'FAST', flag: undefined });
    expect(await run({})).toEqual({ state: 'FAILED', error: "Missing required property 'url'" });
    expect(await run({ url: 'u', count: 11 })).toEqual({ state: 'FAILED', error: "Property 'count' must be at most 10, got 11" });
    expect(await run({ url: 'u', mode: 'X' })).toEqual({ state: 'FAILED', error: "Property 'mode' must be one of FAST, SLOW, got 'X'" });
    expect(await run({ url: 'u', auth: { port: 1 } })).toEqual({ state: 'FAILED', error: "Missing required property 'auth.user'" });
  });

  it('reads text (scalars written in a string\'s place) and durations kept as text', async () => {
    const d = definePlugin({
      type: 'test.Text', title: 'T', description: 'd',
      properties: { format: p.text(), ttl: p.durationText() },
      async run(_ctx, props) { seen.push(props); return { state: 'SUCCESS' }; },
    });
    const props = d.schema.properties as Record<string, Record<string, unknown>>;
    expect(props.format).toEqual({ type: ['string', 'number', 'boolean'] });
    expect(props.ttl).toEqual({ type: 'string', format: 'iso-duration' });
    expect(d.properties.ttl!.label).toBe('duration (ISO 8601)');
    seen.length = 0;
    t = makeTestContext({ task: { id: 's', type: d.type, format: 42, ttl: 'PT{{ inputs.n }}S' }, variables: { inputs: { n: 4 } } });
    expect(await d.runnable.run(t.ctx)).toEqual({ state: 'SUCCESS' });
    expect(seen[0]).toEqual({ format: '42', ttl: 'PT4S' });
  });

  it('registers a secret property value so the execution masks it', async () => {
    const r = await run({ url: 'u', password: 'hunter2-{{ inputs.n }}' }, { inputs: { n: 7 } });
    expect(r.state).toBe('SUCCESS');
    t!.ctx.logger.info('the password is hunter2-7');
    expect(t!.messages().join('\n')).not.toContain('hunter2-7');
  });

  it('reads a list of declared objects, written as a list or rendered from an expression', async () => {
    const listDef = definePlugin({
      type: 'test.List', title: 'List', description: 'A test task.',
      properties: { files: p.objectList({ name: p.string().required(), size: p.integer({ min: 0 }) }) },
      async run(_ctx, props) { seen.push(props.files); return { state: 'SUCCESS' }; },
    });
    const props = listDef.schema.properties as Record<string, Record<string, unknown>>;
    expect(props.files.anyOf).toContainEqual({ type: 'array', items: expect.objectContaining({ required: ['name'], additionalProperties: false }) });
    const go = (files: unknown, variables?: Record<string, unknown>) => {
      t = makeTestContext({ task: { id: 'l', type: listDef.type, files } as never, variables });
      return listDef.runnable.run(t.ctx);
    };
    seen.length = 0;
    expect((await go([{ name: '{{ inputs.n }}', size: '3' }], { inputs: { n: 'a.txt' } })).state).toBe('SUCCESS');
    expect(seen[0]).toEqual([{ name: 'a.txt', size: 3 }]);
    await t!.cleanup();
    expect((await go('{{ inputs.list | toJson }}', { inputs: { list: [{ name: 'b' }, { name: 'c', size: 1 }] } })).state).toBe('SUCCESS');
    expect(seen[1]).toEqual([{ name: 'b', size: undefined }, { name: 'c', size: 1 }]);
    await t!.cleanup();
    expect(await go([{ size: 1 }])).toEqual({ state: 'FAILED', error: "Missing required property 'files[0].name'" });
    await t!.cleanup();
    expect(await go('{{ 3 }}')).toEqual({ state: 'FAILED', error: "Property 'files' must be a list of maps" });
  });
});

describe('defineTrigger', () => {
  it('gives the canonical name, Kestra\'s name, aliases and the schema of its own properties', () => {
    const d = defineTrigger({
      type: 'queue.RealtimeTrigger', aliases: ['queue.core.RealtimeTrigger'], title: 'Queue', description: 'One execution per message.',
      kind: 'realtime', properties: { url: { type: 'string' } }, required: ['url'], allOf: [{ required: ['url'] }],
    });
    expect(d).toMatchObject({
      type: 'ai.service.plugin.queue.RealtimeTrigger', kestraType: 'io.kestra.plugin.queue.RealtimeTrigger',
      aliases: ['ai.service.plugin.queue.core.RealtimeTrigger'], kind: 'realtime', outputs: {},
      schema: { type: 'object', required: ['url'], properties: { url: { type: 'string' } }, allOf: [{ required: ['url'] }] },
    });
  });
});
