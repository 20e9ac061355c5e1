// NATS realtime trigger against a real nats-server (JetStream enabled): core subscriptions (at-most-once) and
// JetStream durable consumers (ack after create, stream sequence as dedupe key: a message delivered again after a
// crash is still one execution), reconnect after a server restart, disabled trigger.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, credsAuthenticator, nkeys, type NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test/support/services.js';
import { startTriggeredExecution } from '../create.js';
import { flowYaml, portService, startHarness, waitFor, type Harness, type PortService } from './test-harness.js';

let server: PortService;
let url: string;
let h: Harness | undefined;

beforeAll(async () => {
  const port = await freePort();
  server = portService('/usr/sbin/nats-server', (p, dir) => ['-a', '127.0.0.1', '-p', String(p), '-js', '-sd', dir], port);
  await server.start();
  url = `nats://127.0.0.1:${port}`;
});
afterAll(async () => { await server.stop(); });
afterEach(async () => { await h?.close(); h = undefined; });

async function withNats<T>(f: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url.replace('nats://', ''), reconnect: false });
  try { return await f(nc); } finally { await nc.drain(); }
}

const trigger = (subject: string, extra = '') => `id: bus
type: io.kestra.plugin.nats.core.RealtimeTrigger
url: ${url}
subject: ${subject}
${extra}`;

it('core subject: one execution per message with subject and data', async () => {
  h = await startHarness();
  await h.save(flowYaml('nats_core', trigger('orders.created')));
  await waitFor(async () => {
    await withNats(async (nc) => { nc.publish('orders.created', '{"id":7}'); });
    return (await h!.executions('nats_core')).length > 0;
  }, 'a message received');
  const [e] = await h.executions('nats_core');
  expect(e!.trigger!.variables).toMatchObject({ subject: 'orders.created', data: '{"id":7}' });
});

it('JetStream durable consumer: messages published before the trigger starts, each created once, even after a crash', async () => {
  await withNats(async (nc) => {
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: 'JOBS', subjects: ['jobs.>'] });
    const js = nc.jetstream();
    for (let i = 0; i < 3; i++) await js.publish('jobs.new', JSON.stringify({ i }));
  });
  let crashes = 0;
  h = await startHarness({
    stopTimeoutMs: 2000,
    create: async (deps, start) => {
      await startTriggeredExecution(deps.stores, start, deps.renderer);
      crashes++;
      throw new Error('crash after create, before ack');
    },
  });
  await h.save(flowYaml('nats_js', trigger('jobs.new', 'durableId: flowpilot_jobs\ndeliverPolicy: All')));
  await waitFor(() => crashes >= 2, 'crashing deliveries');
  await h.restartComponent();
  const execs = await waitFor(async () => {
    const e = await h!.executions('nats_js');
    const info = await withNats(async (nc) => (await nc.jetstreamManager()).consumers.info('JOBS', 'flowpilot_jobs'));
    return e.length === 3 && info.num_ack_pending === 0 && info.num_pending === 0 && e;
    // A message fetched but neither acked nor nak'ed when the listener stopped comes back after the consumer's
    // ack_wait (30 s), as after a real crash: wait longer than that.
  }, 'three executions, all acknowledged', 60_000);
  expect(execs.map((e) => JSON.parse(e.trigger!.variables!.data as string).i).sort()).toEqual([0, 1, 2]);
}, 90_000);

it('reconnects after the server is stopped and restarted', async () => {
  h = await startHarness();
  await h.save(flowYaml('nats_reconnect', trigger('ping')));
  await waitFor(async () => { await withNats(async (nc) => { nc.publish('ping', 'one'); }); return (await h!.executions('nats_reconnect')).length > 0; }, 'first message');
  await server.stop();
  await waitFor(() => h!.logs.some((l) => l.includes('reconnecting')), 'a reconnect attempt');
  await server.start();
  await waitFor(async () => {
    try { await withNats(async (nc) => { nc.publish('ping', 'two'); }); } catch { return false; }
    return (await h!.executions('nats_reconnect')).some((e) => e.trigger?.variables?.data === 'two');
  }, 'message after restart', 60_000);
}, 150_000);

it('a disabled flow does not subscribe', async () => {
  h = await startHarness();
  await h.save(flowYaml('nats_off', trigger('off'), 'disabled: true\n'));
  await h.component.resync();
  expect(h.component.running()).toEqual([]);
});

describe('creds (NATS credentials file)', () => {
  // nats-server with an nkey user: it checks the signature of its nonce made with the seed of the credentials file.
  // (The user JWT itself is checked only by a server in operator mode, which is not set up here.)
  const user = nkeys.createUser();
  const stranger = nkeys.createUser();
  let authServer: PortService;
  const credsOf = (seed: Uint8Array) => `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.

-----BEGIN USER NKEY SEED-----
${new TextDecoder().decode(seed)}
------END USER NKEY SEED------
`;
  beforeAll(async () => {
    const port = await freePort();
    authServer = portService('/usr/sbin/nats-server', (_p, dir) => ['-c', join(dir, 'nats.conf')], port, (dir) => {
      writeFileSync(join(dir, 'nats.conf'), `host: 127.0.0.1\nport: ${port}\nauthorization { users = [ { nkey: ${user.getPublicKey()} } ] }\n`);
    });
    await authServer.start();
  }, 120_000);
  afterAll(async () => { await authServer?.stop(); });

  const authTrigger = (subject: string) => `id: bus
type: io.kestra.plugin.nats.core.RealtimeTrigger
url: nats://127.0.0.1:${authServer.port}
subject: ${subject}
creds: "{{ secret('CREDS') }}"`;

  it('the right credentials authenticate and receive; credentials of another user are refused; malformed ones fail naming the field', async () => {
    const seed = new TextDecoder().decode(user.getSeed());
    h = await startHarness({ env: { SECRET_CREDS: Buffer.from(credsOf(user.getSeed())).toString('base64') } });
    await h.save(flowYaml('nats_creds', authTrigger('secure.events')));
    await waitFor(async () => {
      const nc = await connect({ servers: `127.0.0.1:${authServer.port}`, authenticator: credsAuthenticator(new TextEncoder().encode(credsOf(user.getSeed()))), reconnect: false });
      try { nc.publish('secure.events', 'hello'); await nc.flush(); } finally { await nc.close(); }
      return (await h!.executions('nats_creds')).length > 0;
    }, 'a message received with creds', 60_000);
    expect(h.logs.join('\n')).not.toContain(seed);
    await h.close();

    h = await startHarness({ env: { SECRET_CREDS: Buffer.from(credsOf(stranger.getSeed())).toString('base64') } });
    await h.save(flowYaml('nats_stranger', authTrigger('secure.events')));
    await waitFor(() => h!.logs.some((l) => /authorization violation/i.test(l)), 'refused by the server', 60_000);
    expect(h.component.running()).toEqual(['company.team/nats_stranger/bus']); // retrying, receiving nothing
    expect(await h.executions('nats_stranger')).toHaveLength(0);
    await h.close();

    h = await startHarness({ env: { SECRET_CREDS: Buffer.from('not a creds file').toString('base64') } });
    await h.save(flowYaml('nats_badcreds', authTrigger('secure.events')));
    await waitFor(() => h!.logs.some((l) => l.includes('triggers.bus.creds must be the content of a NATS credentials file')), 'malformed creds refused', 60_000);
  }, 150_000);
});
