// The embedded namespace store (SQLite) against the NamespaceStore contract, and across a reopen (durability).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { namespaceStoreContract } from '../../../test/support/namespace-store-contract.js';
import { openEmbeddedStores, type EmbeddedStores } from './index.js';
import { tempDir } from './test-fixtures.js';

const tmp = tempDir('ns-store-');
let stores: EmbeddedStores;
beforeAll(() => { stores = openEmbeddedStores(tmp.dir); });
afterAll(async () => { await stores.close(); tmp.remove(); });

namespaceStoreContract('sqlite', () => stores.namespaces);

it('keeps namespaces across a reopen of the database', async () => {
  await stores.namespaces.put({ id: 'durable', variables: { k: 1 }, pluginDefaults: [] });
  await stores.close();
  stores = openEmbeddedStores(tmp.dir);
  expect((await stores.namespaces.get('durable'))?.variables).toEqual({ k: 1 });
});
