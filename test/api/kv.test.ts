// API tests of the namespace KV store: typed round trips, non-JSON text as STRING, ttl, listing and deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, jsonInit, startTestApi, type TestApi } from './helpers.js';

let api: TestApi;
beforeAll(async () => { api = await startTestApi(); });
afterAll(async () => { await api.close(); });

const kv = (key = ''): string => `${api.url}/api/v1/namespaces/kv.team/kv${key ? `/${key}` : ''}`;
const put = (key: string, body: string, headers: Record<string, string> = {}) =>
  call(kv(key), { method: 'PUT', headers: { 'Content-Type': 'application/json', ...headers }, body });

describe('KV', () => {
  it.each([
    ['42', 'NUMBER', 42],
    ['true', 'BOOLEAN', true],
    ['"hello"', 'STRING', 'hello'],
    ['{"a":[1,2]}', 'JSON', { a: [1, 2] }],
    ['not json at all', 'STRING', 'not json at all'],
    ['"2024-01-02T03:04:05Z"', 'DATETIME', '2024-01-02T03:04:05Z'],
  ])('stores %s as %s', async (body, type, value) => {
    const key = `k_${type}_${Math.abs(body.length)}`;
    expect((await put(key, body)).status).toBe(200);
    const res = await call(kv(key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type, value });
  });

  it('overwrites a value', async () => {
    await put('over', '1');
    await put('over', '2');
    expect((await call(kv('over'))).body.value).toBe(2);
  });

  it('answers 404 with a message for a missing key on read, and 200 `false` on delete (as Kestra)', async () => {
    const res = await call(kv('absent'));
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/absent/);
    expect(await call(kv('absent'), { method: 'DELETE' })).toMatchObject({ status: 200, body: false });
  });

  it('deletes a key (200 `true`)', async () => {
    await put('gone', '"x"');
    expect(await call(kv('gone'), { method: 'DELETE' })).toMatchObject({ status: 200, body: true });
    expect((await call(kv('gone'))).status).toBe(404);
  });

  it('deletes several keys: {keys} in, the keys that existed out', async () => {
    await put('b1', '1');
    await put('b2', '2');
    const res = await call(kv(), jsonInit('DELETE', { keys: ['b1', 'b2', 'b3'] }));
    expect(res).toMatchObject({ status: 200, body: { keys: ['b1', 'b2'] } });
    expect((await call(kv('b1'))).status).toBe(404);
    const bad = await call(kv(), jsonInit('DELETE', { keys: 'b1' }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('keys');
  });

  it('sets an expiration from the ttl header and rejects an invalid ttl', async () => {
    expect((await put('ttl', '"v"', { ttl: 'PT1H' })).status).toBe(200);
    const list = await call(kv());
    const entry = list.body.find((e: { key: string }) => e.key === 'ttl');
    const expires = Date.parse(entry.expirationDate);
    expect(expires - Date.now()).toBeGreaterThan(50 * 60_000);
    const bad = await put('ttl2', '"v"', { ttl: 'one hour' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('ttl');
  });

  it.each([
    ['P999999999999Y', /too long/],
    ['P8000Y', /after the year 9999/],
    ['-PT1H', /positive/],
    ['PT-1H', /positive/],
    ['PT0S', /positive/],
  ])('answers 400 naming ttl for ttl %s and stores nothing', async (ttl, message) => {
    const res = await put('ttl_refused', '"v"', { ttl });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: 'ttl', message: expect.stringMatching(message) }]);
    expect((await call(kv('ttl_refused'))).status).toBe(404);
  });

  it('lists keys with type and dates', async () => {
    const res = await call(kv());
    expect(res.status).toBe(200);
    const over = res.body.find((e: { key: string }) => e.key === 'over');
    expect(over).toMatchObject({ key: 'over', type: 'NUMBER', expirationDate: null });
    expect(Date.parse(over.updateDate)).not.toBeNaN();
  });

  it('rejects an empty body and an invalid namespace with 400', async () => {
    expect((await put('empty', '')).status).toBe(400);
    const res = await call(`${api.url}/api/v1/namespaces/bad%20ns/kv/x`);
    expect(res.status).toBe(400);
  });
});
