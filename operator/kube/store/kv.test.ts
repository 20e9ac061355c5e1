// Cluster KV store against the Kubernetes API test server: typed values, overwrite protection, TTL expiry, listing,
// and the synchronous getSync seeing writes of another process through the informer.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kvName } from '../names.js';
import { type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

let h: StoreHarness;
beforeEach(async () => { h = await startStoreHarness(); });
afterEach(async () => { await h.close(); });

/** Moves a pair's expiration into the past behind the store's back (as another process or kubectl could). */
async function expireBehindTheBack(namespace: string, key: string): Promise<void> {
  const name = kvName(namespace, key);
  const obj = (await h.co.getNamespacedCustomObject({ ...crd('kvpairs'), name })) as any;
  const written = (await h.co.replaceNamespacedCustomObject({ ...crd('kvpairs'), name, body: { ...obj, spec: { ...obj.spec, expirationDate: '2000-01-01T00:00:00.000Z' } } })) as any;
  await until(() => h.stores.kv.cache.get(name)?.metadata.resourceVersion === written.metadata.resourceVersion, 'the informer');
}

describe('KubeKVStore', () => {
  it('stores typed values in KVPair resources and reads them back', async () => {
    const kv = h.stores.kv;
    const entry = await kv.set({ namespace: 'company', key: 'n', value: '7', type: 'NUMBER' });
    expect(entry).toMatchObject({ namespace: 'company', key: 'n', type: 'NUMBER', value: 7 });
    await kv.set({ namespace: 'company', key: 'obj', value: { nested: [1, 'two'] } });
    expect(await kv.get('company', 'obj')).toMatchObject({ type: 'JSON', value: { nested: [1, 'two'] } });
    expect(kv.getSync('company', 'n')?.value).toBe(7);
    expect(await kv.get('company.team', 'n')).toBeUndefined();
    await expect(kv.set({ namespace: 'company', key: 'bad', value: 'abc', type: 'NUMBER' })).rejects.toThrow(/NUMBER/);
    const raw = (await h.co.getNamespacedCustomObject({ ...crd('kvpairs'), name: kvName('company', 'n') })) as any;
    expect(raw.spec).toMatchObject({ namespace: 'company', key: 'n', type: 'NUMBER', value: 7 });
  });

  it('refuses to overwrite a live key when overwrite is false, also when another process wrote it', async () => {
    const kv = h.stores.kv;
    await kv.set({ namespace: 'ns', key: 'k', value: 'one' });
    await expect(kv.set({ namespace: 'ns', key: 'k', value: 'two', overwrite: false })).rejects.toMatchObject({ status: 409 });
    expect((await kv.get('ns', 'k'))?.value).toBe('one');
    await kv.set({ namespace: 'ns', key: 'k', value: 'three' });
    expect((await kv.get('ns', 'k'))?.value).toBe('three');

    const peer = await h.openPeer();
    await peer.kv.set({ namespace: 'ns', key: 'fresh', value: 1 });
    // Our cache may not have it yet; the create conflicts on the server and the refusal still holds.
    await expect(kv.set({ namespace: 'ns', key: 'fresh', value: 2, overwrite: false })).rejects.toThrow(/already exists/);
    await until(() => kv.getSync('ns', 'fresh'), 'the informer');
    expect(kv.getSync('ns', 'fresh')?.value).toBe(1);
  });

  it('sets an expiration date from the ttl and hides expired entries', async () => {
    const kv = h.stores.kv;
    const before = Date.now();
    const entry = await kv.set({ namespace: 'ns', key: 'short', value: 1, ttl: 'PT1H' });
    const expires = Date.parse(entry.expirationDate!);
    expect(expires).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(expires).toBeLessThan(before + 3_600_000 + 60_000);
    await expect(kv.set({ namespace: 'ns', key: 'x', value: 1, ttl: 'one hour' })).rejects.toThrow(/ttl/);
    for (const ttl of ['-PT1H', 'PT0S', 'P999999999999Y', 'P8000Y']) {
      await expect(kv.set({ namespace: 'ns', key: 'x', value: 1, ttl })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/ttl/) });
    }

    await kv.set({ namespace: 'ns', key: 'gone', value: 'v', ttl: 'PT1H' });
    await expireBehindTheBack('ns', 'gone');
    expect(kv.getSync('ns', 'gone')).toBeUndefined();
    expect(await kv.get('ns', 'gone')).toBeUndefined();
    expect((await kv.list('ns')).map((e) => e.key)).toEqual(['short']);
    expect(await kv.delete('ns', 'gone')).toBe(false);
    // An expired key no longer blocks overwrite: false.
    await kv.set({ namespace: 'ns', key: 'gone', value: 'back', ttl: 'PT1H' });
    await expireBehindTheBack('ns', 'gone');
    expect((await kv.set({ namespace: 'ns', key: 'gone', value: 'new', overwrite: false })).value).toBe('new');
    // Expired pairs are deleted lazily from the cluster.
    await kv.set({ namespace: 'ns', key: 'purged', value: 1, ttl: 'PT1H' });
    await expireBehindTheBack('ns', 'purged');
    expect(await kv.get('ns', 'purged')).toBeUndefined();
    await until(async () => {
      try { await h.co.getNamespacedCustomObject({ ...crd('kvpairs'), name: kvName('ns', 'purged') }); return false; } catch (e: any) { return e.code === 404; }
    }, 'the lazy delete');
  });

  it('deletes and lists sorted by key', async () => {
    const kv = h.stores.kv;
    await kv.set({ namespace: 'ns', key: 'b', value: true });
    await kv.set({ namespace: 'ns', key: 'a', value: 'PT1M' });
    await kv.set({ namespace: 'ns.child', key: 'c', value: 1 });
    expect((await kv.list('ns')).map((e) => [e.key, e.type])).toEqual([['a', 'DURATION'], ['b', 'BOOLEAN']]);
    expect(await kv.delete('ns', 'a')).toBe(true);
    expect(await kv.delete('ns', 'a')).toBe(false);
    expect((await kv.list('ns')).map((e) => e.key)).toEqual(['b']);
  });
});
