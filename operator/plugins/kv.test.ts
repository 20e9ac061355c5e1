// Tests of the KV tasks (Set, Get, Delete) against the real embedded SQLite KV store.
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { namespaceGrantsFromEnv } from '../tenancy/namespaces.js';
import { kvDeletePlugin, kvGetKeysPlugin, kvGetPlugin, kvSetPlugin } from './kv.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

function ctxWith(task: Task, variables?: Record<string, unknown>, allowed?: string): TestContext {
  t = makeTestContext({ task, variables, ...(allowed ? { grants: namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: allowed }) } : {}) });
  return t;
}

describe('KV tasks reach only namespaces the flow may use', () => {
  it.each([
    [kvSetPlugin, { value: 'x' }],
    [kvGetPlugin, {}],
    [kvDeletePlugin, {}],
    [kvGetKeysPlugin, {}],
  ])('%# refuses another namespace (a parent, a child or an unrelated one) and changes nothing', async (plugin, extra) => {
    for (const target of ['company', 'company.team.sub', 'other']) {
      const c = ctxWith({ id: 't', type: plugin.type, key: 'k', namespace: target, ...extra });
      await c.stores.kv.set({ namespace: target, key: 'k', value: 'theirs' });
      const r = await plugin.run(c.ctx);
      expect(r.state).toBe('FAILED');
      expect(r.error).toBe(`${plugin === kvGetKeysPlugin ? 'The KV store' : "KV key 'k'"} of namespace '${target}' is not accessible from namespace 'company.team': a flow reaches only its own namespace unless ALLOWED_NAMESPACES grants more`);
      expect(r.outputs).toBeUndefined();
      expect((await c.stores.kv.get(target, 'k'))?.value).toBe('theirs');
      await t!.cleanup(); t = undefined;
    }
  });

  it('reads and writes a namespace ALLOWED_NAMESPACES grants', async () => {
    const c = ctxWith({ id: 's', type: kvSetPlugin.type, key: 'k', value: 'v', namespace: 'company.shared' }, undefined, '{"company.shared": ["company.*"]}');
    expect((await kvSetPlugin.run(c.ctx)).state).toBe('SUCCESS');
    expect((await c.stores.kv.get('company.shared', 'k'))?.value).toBe('v');
    c.ctx.task = { id: 'g', type: kvGetPlugin.type, key: 'k', namespace: 'company.shared' };
    expect(await kvGetPlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: { value: 'v' } });
  });
});

describe('core.kv.Set', () => {
  it('stores a typed value in the flow namespace, keeping lists from expressions', async () => {
    const c = ctxWith({ id: 's', type: kvSetPlugin.type, key: 'k_{{ flow.id }}', value: '{{ outputs.prev.list }}' },
      { outputs: { prev: { list: [1, 2] } } });
    expect(await kvSetPlugin.run(c.ctx)).toEqual({ state: 'SUCCESS' });
    const entry = await c.stores.kv.get('company.team', 'k_flow1');
    expect(entry?.value).toEqual([1, 2]);
    expect(entry?.type).toBe('JSON');
  });

  it('coerces with kvType and honours ttl', async () => {
    const c = ctxWith({ id: 's', type: kvSetPlugin.type, key: 'n', value: '42', kvType: 'NUMBER', ttl: 'PT1H' });
    await kvSetPlugin.run(c.ctx);
    const entry = await c.stores.kv.get('company.team', 'n');
    expect(entry?.value).toBe(42);
    expect(entry?.expirationDate).toBeDefined();
  });

  it.each(['-PT1H', 'P999999999999Y'])('fails naming ttl for ttl %s, storing nothing', async (ttl) => {
    const c = ctxWith({ id: 's', type: kvSetPlugin.type, key: 'n', value: '1', ttl: '{{ "' + ttl + '" }}' });
    const r = await kvSetPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/Invalid KV ttl/);
    expect(await c.stores.kv.get('company.team', 'n')).toBeUndefined();
  });

  it('fails when overwrite is false and the key exists', async () => {
    const c = ctxWith({ id: 's', type: kvSetPlugin.type, key: 'k', value: 'b', overwrite: false });
    await c.stores.kv.set({ namespace: 'company.team', key: 'k', value: 'a' });
    const r = await kvSetPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('overwrite');
    expect((await c.stores.kv.get('company.team', 'k'))?.value).toBe('a');
  });

});

describe('core.kv.Get', () => {
  it('returns the stored value', async () => {
    const c = ctxWith({ id: 'g', type: kvGetPlugin.type, key: 'k' });
    await c.stores.kv.set({ namespace: 'company.team', key: 'k', value: { a: 1 } });
    expect(await kvGetPlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: { value: { a: 1 } } });
  });

  it('returns no value for a missing key, or fails with errorOnMissing', async () => {
    const c = ctxWith({ id: 'g', type: kvGetPlugin.type, key: 'missing' });
    expect(await kvGetPlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: {} });
    c.ctx.task = { ...c.ctx.task, errorOnMissing: true };
    const r = await kvGetPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain("No value found for key 'missing'");
  });
});

describe('core.kv.Delete', () => {
  it('deletes and reports whether the key existed', async () => {
    const c = ctxWith({ id: 'd', type: kvDeletePlugin.type, key: 'k' });
    await c.stores.kv.set({ namespace: 'company.team', key: 'k', value: 'v' });
    expect(await kvDeletePlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: { deleted: true } });
    expect(await c.stores.kv.get('company.team', 'k')).toBeUndefined();
    expect(await kvDeletePlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: { deleted: false } });
    c.ctx.task = { ...c.ctx.task, errorOnMissing: true };
    expect((await kvDeletePlugin.run(c.ctx)).state).toBe('FAILED');
  });
});

describe('core.kv.GetKeys', () => {
  it('lists the keys of the namespace with the prefix', async () => {
    const c = ctxWith({ id: 'k', type: kvGetKeysPlugin.type, prefix: 'app_' });
    for (const key of ['app_b', 'app_a', 'other']) await c.stores.kv.set({ namespace: 'company.team', key, value: 1 });
    expect(await kvGetKeysPlugin.run(c.ctx)).toEqual({ state: 'SUCCESS', outputs: { keys: ['app_a', 'app_b'] } });
  });
});
