// The API while another process holds the store's write lock: a write answers 503 (retry later), not a 500, and reads
// keep working (WAL); once the lock is released the same request succeeds.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../operator/store/sqlite/db.js';
import { call, createFlow, jsonInit, simpleFlow, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, simpleFlow('busy', 'f'));
});
afterAll(async () => { await api.close(); });

it('a write meeting a held write lock answers 503; it succeeds after the release', async () => {
  const lock = openDatabase(join(api.dataDir, 'store.db'));
  lock.exec('BEGIN IMMEDIATE');
  try {
    const refused = await call(`${api.url}/api/v1/executions/busy/f`, jsonInit('POST', {}));
    expect(refused.status).toBe(503);
    expect(refused.body.message).toMatch(/retry later/);
    expect((await call(`${api.url}/api/v1/flows/busy/f`)).status).toBe(200);
  } finally {
    lock.exec('COMMIT');
    lock.close();
  }
  expect((await call(`${api.url}/api/v1/executions/busy/f`, jsonInit('POST', {}))).status).toBe(200);
}, 30_000);
