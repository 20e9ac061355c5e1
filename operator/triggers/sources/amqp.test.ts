// AMQP realtime trigger against a real RabbitMQ (Debian's rabbitmq-server, one node per test file): one execution per
// message with the message in `trigger.*`, ack only after the create (a message whose create had not resolved when the
// listener stopped is redelivered to the next one; a crash after the create still gives one execution thanks to the
// messageId), reconnect after a broker restart, a queue declared late, disabled triggers and save-time validation.
import { connect, type Options } from 'amqplib';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startRabbitMQ, type RabbitMQ } from '../../../test/support/services.js';
import { parseFlow } from '../../model/index.js';
import { startTriggeredExecution } from '../create.js';
import type { TriggeredStart } from '../create.js';
import { flowYaml, startHarness, waitFor, type Harness } from './test-harness.js';

let broker: RabbitMQ;
let h: Harness | undefined;

beforeAll(async () => { broker = await startRabbitMQ(); }, 180_000);
afterAll(async () => { await broker?.stop(); }, 60_000);
afterEach(async () => { await h?.close(); h = undefined; }, 30_000);

/** Runs `f` on a fresh channel of a fresh connection (the broker is restarted by one test). */
async function withChannel<T>(f: (ch: import('amqplib').ConfirmChannel) => Promise<T>): Promise<T> {
  const conn = await connect(broker.url);
  try {
    const ch = await conn.createConfirmChannel();
    const out = await f(ch);
    await ch.close();
    return out;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

const declare = (queue: string) => withChannel((ch) => ch.assertQueue(queue, { durable: true }));
const publish = (queue: string, body: string, props: Options.Publish = {}) => withChannel(async (ch) => {
  ch.sendToQueue(queue, Buffer.from(body), { persistent: true, ...props });
  await ch.waitForConfirms();
});
/** Ready messages and consumers of a queue (unacknowledged messages are not counted). */
const queueState = (queue: string) => withChannel((ch) => ch.checkQueue(queue));

const trigger = (queue: string, extra = '') => `id: amqp
type: io.kestra.plugin.amqp.RealtimeTrigger
url: ${broker.url}
queue: ${queue}
${extra}`;

const running = (flowId: string) => waitFor(() => h!.component.running().includes(`company.team/${flowId}/amqp`), 'listener running');

it('creates exactly one execution per message with trigger.data and the message properties', async () => {
  await declare('orders');
  h = await startHarness();
  await h.save(flowYaml('amqp_basic', trigger('orders', 'serdeType: JSON')));
  await running('amqp_basic');
  await publish('orders', JSON.stringify({ id: 1, amount: 10 }), {
    messageId: 'order-1', contentType: 'application/json', headers: { source: 'shop', attempt: 2, raw: Buffer.from('bytes') },
    timestamp: 1_700_000_000, appId: 'shop', correlationId: 'c-1',
  });
  await publish('orders', 'not json');
  const execs = await waitFor(async () => { const e = await h!.executions('amqp_basic'); return e.length === 2 && e; }, 'two executions', 60_000);
  const first = execs.find((e) => e.trigger?.variables?.messageId === 'order-1')!;
  expect(first.trigger!.id).toBe('amqp');
  expect(first.trigger!.variables).toEqual({
    data: { id: 1, amount: 10 }, messageId: 'order-1', contentType: 'application/json', headers: { source: 'shop', attempt: 2, raw: 'bytes' },
    timestamp: '2023-11-14T22:13:20.000Z', appId: 'shop', correlationId: 'c-1', deliveryMode: 2,
  });
  const second = execs.find((e) => e !== first)!;
  expect(second.trigger!.variables!.data).toBe('not json');
  expect(second.trigger!.variables!.messageId).toBeUndefined();
  // Both acked: after the listener stops, nothing is requeued.
  await h.stopComponent();
  expect((await queueState('orders')).messageCount).toBe(0);
  expect(await h.executions('amqp_basic')).toHaveLength(2);
}, 90_000);

it('acks only after the create: a message whose create had not resolved is redelivered to the next listener', async () => {
  await declare('jobs');
  let crash!: (err: Error) => void;
  const seen: TriggeredStart[] = [];
  h = await startHarness({
    stopTimeoutMs: 10_000,
    create: (_deps, start) => { seen.push(start); return new Promise((_res, rej) => { crash = rej; }); },
  });
  await h.save(flowYaml('amqp_crash', trigger('jobs')));
  await running('amqp_crash');
  await publish('jobs', 'job-1', { messageId: 'job-1' });
  await waitFor(() => seen.length === 1, 'message received by the first listener', 60_000);
  // The listener stops while the create is pending; the create then fails (the process "crashed" before it).
  const stopping = h.stopComponent();
  crash(new Error('crash before create'));
  await stopping;
  expect(await h.executions('amqp_crash')).toHaveLength(0);
  // Not acked: the broker has it back, flagged as redelivered. The queue requeues it when it handles the closed
  // channel, asynchronously to the client's close: wait until it is ready again.
  await waitFor(async () => (await queueState('jobs')).messageCount === 1, 'the unacknowledged message back in the queue', 30_000);
  await withChannel(async (ch) => {
    const msg = await ch.get('jobs', { noAck: false });
    expect(msg && msg.fields.redelivered).toBe(true);
    ch.nack(msg as import('amqplib').GetMessage, false, true);
  });
  await h.restartComponent();
  const execs = await waitFor(async () => { const e = await h!.executions('amqp_crash'); return e.length === 1 && e; }, 'redelivered message created', 60_000);
  expect(execs[0].trigger!.variables!.data).toBe('job-1');
  await h.stopComponent();
  expect((await queueState('jobs')).messageCount).toBe(0);
}, 120_000);

it('a crash after the create and before the ack still gives one execution (messageId dedupe)', async () => {
  await declare('payments');
  let calls = 0;
  h = await startHarness({
    stopTimeoutMs: 10_000,
    create: async (deps, start) => {
      calls++;
      await startTriggeredExecution(deps.stores, start, deps.renderer);
      throw new Error('crash after create');
    },
  });
  await h.save(flowYaml('amqp_dedupe', trigger('payments')));
  await running('amqp_dedupe');
  await publish('payments', 'pay-1', { messageId: 'pay-1' });
  // Created, never acked: requeued after a backoff and delivered again (still not acked).
  await waitFor(() => calls >= 2, 'message delivered twice to the crashing listener', 60_000);
  let created = 0;
  await h.restartComponent({ create: async (deps, start) => { await startTriggeredExecution(deps.stores, start, deps.renderer); created++; } });
  await waitFor(() => created === 1, 'redelivered message handled by the new listener', 60_000);
  await h.stopComponent();
  expect((await queueState('payments')).messageCount).toBe(0);
  const execs = await h.executions('amqp_dedupe');
  expect(execs).toHaveLength(1);
  expect(execs[0].trigger!.variables!.data).toBe('pay-1');
}, 120_000);

it('a message that can never become an execution (invalid inputs) is rejected, not requeued', async () => {
  await declare('bad_inputs');
  h = await startHarness();
  await h.save(flowYaml('amqp_inputs', trigger('bad_inputs', 'inputs:\n  n: "{{ trigger.data }}"'), 'inputs:\n  - id: n\n    type: INT\n'));
  await running('amqp_inputs');
  await publish('bad_inputs', 'not a number');
  await publish('bad_inputs', '42');
  const execs = await waitFor(async () => { const e = await h!.executions('amqp_inputs'); return e.length === 1 && e; }, 'the valid message created', 60_000);
  expect(execs[0].inputs).toEqual({ n: 42 });
  await waitFor(() => h!.logs.some((l) => l.includes('message rejected') && l.includes('inputs.n')), 'the invalid message rejected');
  await h.stopComponent();
  expect((await queueState('bad_inputs')).messageCount).toBe(0);
  expect(await h.executions('amqp_inputs')).toHaveLength(1);
}, 90_000);

it('reconnects after the broker is stopped and restarted (host/port/virtualHost properties)', async () => {
  await declare('events');
  h = await startHarness();
  await h.save(flowYaml('amqp_reconnect', `id: amqp
type: io.kestra.plugin.amqp.RealtimeTrigger
host: 127.0.0.1
port: ${broker.port}
username: guest
password: guest
virtualHost: /
queue: events`));
  await running('amqp_reconnect');
  await publish('events', 'one');
  await waitFor(async () => (await h!.executions('amqp_reconnect')).length === 1, 'first execution', 60_000);
  await broker.stopBroker();
  await waitFor(() => h!.logs.some((l) => l.includes('reconnecting')), 'a reconnect attempt', 30_000);
  await broker.startBroker();
  await publish('events', 'two');
  const execs = await waitFor(async () => { const e = await h!.executions('amqp_reconnect'); return e.length === 2 && e; }, 'message after the broker restart', 90_000);
  expect(execs.map((e) => e.trigger?.variables?.data).sort()).toEqual(['one', 'two']);
}, 240_000);

it('a missing queue is retried until it is declared', async () => {
  h = await startHarness();
  await h.save(flowYaml('amqp_late', trigger('late_queue')));
  await waitFor(() => h!.logs.some((l) => l.includes('NOT_FOUND')), 'the missing queue reported', 30_000);
  await declare('late_queue');
  await publish('late_queue', 'finally');
  const execs = await waitFor(async () => { const e = await h!.executions('amqp_late'); return e.length === 1 && e; }, 'execution once the queue exists', 90_000);
  expect(execs[0].trigger!.variables!.data).toBe('finally');
}, 120_000);

it('a disabled trigger or a disabled flow consumes nothing', async () => {
  await declare('off_queue');
  await declare('flow_off_queue');
  h = await startHarness();
  await h.save(flowYaml('amqp_off', trigger('off_queue', 'disabled: true')));
  await h.save(flowYaml('amqp_flow_off', trigger('flow_off_queue'), 'disabled: true\n'));
  await publish('off_queue', 'x');
  await publish('flow_off_queue', 'y');
  await h.component.resync();
  expect(h.component.running()).toEqual([]);
  expect(await queueState('off_queue')).toMatchObject({ messageCount: 1, consumerCount: 0 });
  expect(await queueState('flow_off_queue')).toMatchObject({ messageCount: 1, consumerCount: 0 });
  expect((await h.executions('amqp_off')).length + (await h.executions('amqp_flow_off')).length).toBe(0);
}, 60_000);

it('save-time validation: a queue and a broker (url or host) are required', () => {
  const base = 'id: amqp\ntype: io.kestra.plugin.amqp.RealtimeTrigger\n';
  expect(() => parseFlow(flowYaml('amqp_v1', `${base}url: amqp://localhost`))).toThrow(/queue/);
  expect(() => parseFlow(flowYaml('amqp_v2', `${base}queue: q`))).toThrow(/url|host/);
  expect(() => parseFlow(flowYaml('amqp_v3', `${base}queue: q\nhost: localhost\nserdeType: XML`))).toThrow(/serdeType/);
  expect(() => parseFlow(flowYaml('amqp_v4', `${base}queue: q\nhost: localhost\nport: 5672\nautoAck: true`))).not.toThrow();
});
