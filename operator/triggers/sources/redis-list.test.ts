// Redis list realtime trigger against a real redis-server: one execution per item with `trigger.value`/`trigger.key`,
// recovery of items claimed before a crash (before and after the create), reconnect after a Redis restart, and
// disabled triggers / flows that consume nothing.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../../test/support/services.js';
import { startTriggeredExecution } from '../create.js';
import { redisWorkLists } from './redis-list.js';
import { flowYaml, portService, startHarness, waitFor, type Harness, type PortService } from './test-harness.js';

let redis: PortService;
let client: Redis;
let url: string;
let h: Harness | undefined;

beforeAll(async () => {
  const port = await freePort();
  redis = portService('/usr/bin/redis-server', (p, dir) => ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], port);
  await redis.start();
  url = `redis://127.0.0.1:${port}`;
  client = new Redis(url, { maxRetriesPerRequest: null });
  client.on('error', () => { /* the test restarts Redis on purpose */ });
});
afterAll(async () => { client.disconnect(); await redis.stop(); });
afterEach(async () => { await h?.close(); h = undefined; });

const trigger = (key: string, extra = '') =>
  `id: queue\ntype: ai.service.plugin.redis.list.RealtimeTrigger\nurl: ${url}\nkey: ${key}\n${extra}`;
const work = (flowId: string, key: string) => redisWorkLists({ flow: { id: flowId, namespace: 'company.team', tasks: [] }, trigger: { id: 'queue', type: '' } }, key);

it('creates exactly one execution per item with trigger.value and trigger.key (JSON serde)', async () => {
  h = await startHarness();
  await h.save(flowYaml('redis_json', trigger('orders', 'serdeType: JSON')));
  await client.rpush('orders', JSON.stringify({ id: 1, amount: 10 }), JSON.stringify({ id: 2, amount: 20 }));
  const execs = await waitFor(async () => { const e = await h!.executions('redis_json'); return e.length === 2 && e; }, 'two executions');
  const values = execs.map((e) => e.trigger?.variables?.value as { id: number }).sort((a, b) => a.id - b.id);
  expect(values).toEqual([{ id: 1, amount: 10 }, { id: 2, amount: 20 }]);
  expect(execs.every((e) => e.trigger?.variables?.key === 'orders' && e.trigger?.id === 'queue')).toBe(true);
  const lists = work('redis_json', 'orders');
  await waitFor(async () => (await client.llen(lists.pending)) === 0, 'pending list drained');
  expect(await client.llen('orders')).toBe(0);
  expect(await client.llen(lists.claimed)).toBe(0);
});

it('an item received before a crash is created once after the restart (crash before and after the create)', async () => {
  let calls = 0;
  // First run: the first item crashes before its execution exists, the second right after it was created.
  h = await startHarness({
    stopTimeoutMs: 2000,
    create: async (deps, start) => {
      calls++;
      if (start.variables.value === 'before') throw new Error('crash before create');
      await startTriggeredExecution(deps.stores, start, deps.renderer);
      throw new Error('crash after create');
    },
  });
  await h.save(flowYaml('redis_crash', trigger('jobs')));
  // One batch: 'after' is created then the run crashes; 'before' was received (it is in `pending`) but never created.
  await client.rpush('jobs', 'after', 'before');
  const lists = work('redis_crash', 'jobs');
  await waitFor(async () => calls >= 2 && (await client.llen(lists.pending)) === 2, 'items claimed by the crashing run');
  expect((await h.executions('redis_crash')).map((e) => e.trigger?.variables?.value)).toEqual(['after']);
  await h.restartComponent();
  const execs = await waitFor(async () => {
    const e = await h!.executions('redis_crash');
    return e.length === 2 && (await client.llen(lists.pending)) === 0 && e;
  }, 'both items created after restart');
  expect(execs.map((e) => e.trigger?.variables?.value).sort()).toEqual(['after', 'before']);
  expect(await client.llen('jobs')).toBe(0);
}, 90_000);

it('reconnects after Redis is stopped and restarted', async () => {
  h = await startHarness();
  await h.save(flowYaml('redis_reconnect', trigger('events')));
  await client.rpush('events', 'one');
  await waitFor(async () => (await h!.executions('redis_reconnect')).length === 1, 'first execution');
  await redis.stop();
  await waitFor(() => h!.logs.some((l) => l.includes('reconnecting')), 'a reconnect attempt');
  await redis.start();
  await waitFor(async () => { try { await client.rpush('events', 'two'); return true; } catch { return false; } }, 'push after restart');
  const execs = await waitFor(async () => { const e = await h!.executions('redis_reconnect'); return e.length === 2 && e; }, 'second execution', 60_000);
  expect(execs.map((e) => e.trigger?.variables?.value).sort()).toEqual(['one', 'two']);
}, 150_000);

it('a disabled trigger or a disabled flow consumes nothing; enabling the trigger starts it', async () => {
  h = await startHarness();
  await h.save(flowYaml('redis_off', trigger('off_key', 'disabled: true')));
  await h.save(flowYaml('redis_flow_off', trigger('flow_off_key'), 'disabled: true\n'));
  await h.save(flowYaml('redis_on', trigger('on_key')));
  await client.rpush('off_key', 'x');
  await client.rpush('flow_off_key', 'y');
  await client.rpush('on_key', 'z');
  await waitFor(async () => (await h!.executions('redis_on')).length === 1, 'the enabled trigger fired');
  await h.component.resync();
  expect(h.component.running()).toEqual(['company.team/redis_on/queue']);
  expect(await client.llen('off_key')).toBe(1);
  expect(await client.llen('flow_off_key')).toBe(1);
  expect((await h.executions('redis_off')).length + (await h.executions('redis_flow_off')).length).toBe(0);
  // A new revision with the trigger enabled starts it; deleting the flow stops it.
  await h.save(flowYaml('redis_off', trigger('off_key')));
  await waitFor(async () => (await h!.executions('redis_off')).length === 1, 'enabled trigger fired');
  await h.stores.flows.delete('company.team', 'redis_off');
  await waitFor(() => !h!.component.running().includes('company.team/redis_off/queue'), 'trigger stopped on delete');
});
