// MQTT realtime trigger against a real Mosquitto: one execution per message with `trigger.topic`/`trigger.payload`,
// redelivery of a message received but not created before a crash (QoS 1, persistent session, PUBACK after create),
// reconnect after a broker restart, and a disabled trigger that receives nothing.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, testCertificates, type TestCertificates } from '../../../test/support/services.js';
import { mqttConnectOptions } from './mqtt.js';
import { flowYaml, portService, startHarness, waitFor, type Harness, type PortService } from './test-harness.js';
import type { TriggerContext } from '../types.js';

let broker: PortService;
let url: string;
let h: Harness | undefined;

beforeAll(async () => {
  const port = await freePort();
  broker = portService('/usr/sbin/mosquitto', (_p, dir) => ['-c', join(dir, 'mosquitto.conf')], port, (dir) => {
    writeFileSync(join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  });
  await broker.start();
  url = `mqtt://127.0.0.1:${port}`;
});
afterAll(async () => { await broker.stop(); });
afterEach(async () => { await h?.close(); h = undefined; });

async function publish(topic: string, payload: string): Promise<void> {
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0 });
  await client.publishAsync(topic, payload, { qos: 1 });
  await client.endAsync();
}

const trigger = (topic: string, extra = '') => `id: sensor
type: io.kestra.plugin.mqtt.RealtimeTrigger
server: ${url}
topic: ${topic}
qos: 1
${extra}`;

const ready = (flowId: string) => waitFor(() => h!.component.running().includes(`company.team/${flowId}/sensor`), 'listener running');

it('creates one execution per message with topic and JSON payload', async () => {
  h = await startHarness();
  await h.save(flowYaml('mqtt_basic', trigger('"sensors/#"')));
  await ready('mqtt_basic');
  // The subscription may not be in place yet: publish until the first message is received.
  await waitFor(async () => { await publish('sensors/t1', '{"c":21.5}'); return (await h!.executions('mqtt_basic')).length > 0; }, 'first message');
  await publish('sensors/t2', 'not json');
  const execs = await waitFor(async () => {
    const e = await h!.executions('mqtt_basic');
    return e.some((x) => x.trigger?.variables?.topic === 'sensors/t2') && e;
  }, 'second message');
  const t2 = execs.find((x) => x.trigger?.variables?.topic === 'sensors/t2')!;
  expect(t2.trigger!.variables!.payload).toBe('not json');
  expect(execs.filter((x) => x.trigger?.variables?.topic === 'sensors/t2')).toHaveLength(1);
  expect(execs.find((x) => x.trigger?.variables?.topic === 'sensors/t1')!.trigger!.variables!.payload).toEqual({ c: 21.5 });
});

it('redelivers a message that was received but not created before the crash', async () => {
  let received = 0;
  h = await startHarness({ stopTimeoutMs: 2000, create: async () => { received++; throw new Error('crash before create'); } });
  await h.save(flowYaml('mqtt_crash', trigger('jobs/crash')));
  await ready('mqtt_crash');
  // Wait until the persistent session exists with its subscription (a message was received once).
  await waitFor(async () => { await publish('jobs/crash', '{"job":1}'); return received > 0; }, 'message received by the crashing run');
  await h.restartComponent();
  const execs = await waitFor(async () => { const e = await h!.executions('mqtt_crash'); return e.length > 0 && e; }, 'redelivered message created');
  expect(execs.every((e) => (e.trigger!.variables!.payload as { job: number }).job === 1)).toBe(true);
}, 90_000);

it('reconnects after the broker is stopped and restarted', async () => {
  h = await startHarness();
  await h.save(flowYaml('mqtt_reconnect', trigger('events/x')));
  await ready('mqtt_reconnect');
  await waitFor(async () => { await publish('events/x', '"one"'); return (await h!.executions('mqtt_reconnect')).length > 0; }, 'first message');
  await broker.stop();
  await waitFor(() => h!.logs.some((l) => l.includes('reconnecting')), 'a reconnect attempt');
  await broker.start();
  await waitFor(async () => {
    try { await publish('events/x', '"two"'); } catch { return false; }
    return (await h!.executions('mqtt_reconnect')).some((e) => e.trigger?.variables?.payload === 'two');
  }, 'message after the broker restart', 60_000);
}, 150_000);

it('a disabled trigger does not subscribe', async () => {
  h = await startHarness();
  await h.save(flowYaml('mqtt_off', trigger('off/x', 'disabled: true')));
  await h.component.resync();
  expect(h.component.running()).toEqual([]);
  await publish('off/x', '1');
  await new Promise((r) => setTimeout(r, 500));
  expect(await h.executions('mqtt_off')).toHaveLength(0);
});

describe('TLS broker (crt, httpsHostnameVerificationEnabled)', () => {
  let tlsBroker: PortService;
  let certs: TestCertificates;
  beforeAll(async () => {
    certs = testCertificates();
    const port = await freePort();
    tlsBroker = portService('/usr/sbin/mosquitto', (_p, dir) => ['-c', join(dir, 'mosquitto.conf')], port, (dir) => {
      // Readable by the account mosquitto drops to when started as root (test files only).
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'server.crt'), certs.cert, { mode: 0o644 });
      writeFileSync(join(dir, 'server.key'), certs.key, { mode: 0o644 });
      writeFileSync(join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\ncertfile ${join(dir, 'server.crt')}\nkeyfile ${join(dir, 'server.key')}\nallow_anonymous true\npersistence false\n`);
    });
    await tlsBroker.start();
  }, 120_000);
  afterAll(async () => { await tlsBroker?.stop(); });

  async function publishTls(topic: string, payload: string): Promise<void> {
    const client = await mqtt.connectAsync(`mqtts://localhost:${tlsBroker.port}`, { reconnectPeriod: 0, ca: certs.ca });
    await client.publishAsync(topic, payload, { qos: 1 });
    await client.endAsync();
  }
  const tlsTrigger = (host: string, topic: string, extra: string) => `id: sensor
type: io.kestra.plugin.mqtt.RealtimeTrigger
server: ssl://${host}:${tlsBroker.port}
topic: ${topic}
connectionTimeout: PT30S
${extra}`;

  it('the right CA connects and receives; a wrong CA or a host name not in the certificate is refused; the host check can be turned off', async () => {
    h = await startHarness({ env: { SECRET_CA: Buffer.from(certs.ca).toString('base64'), SECRET_OTHER: Buffer.from(certs.otherCa).toString('base64') } });
    await h.save(flowYaml('mqtt_tls_ok', tlsTrigger('localhost', 'tls/ok', `crt: "{{ secret('CA') }}"`)));
    await h.save(flowYaml('mqtt_tls_nohost', tlsTrigger('127.0.0.1', 'tls/nohost', `crt: "{{ secret('CA') }}"\nhttpsHostnameVerificationEnabled: false`)));
    await h.save(flowYaml('mqtt_tls_wrong_ca', tlsTrigger('localhost', 'tls/wrong', `crt: "{{ secret('OTHER') }}"`)));
    await h.save(flowYaml('mqtt_tls_wrong_host', tlsTrigger('127.0.0.1', 'tls/host', `crt: "{{ secret('CA') }}"`)));
    for (const [flow, topic] of [['mqtt_tls_ok', 'tls/ok'], ['mqtt_tls_nohost', 'tls/nohost']] as const) {
      await waitFor(async () => { await publishTls(topic, '{"t":1}'); return (await h!.executions(flow)).length > 0; }, `${flow} message`, 60_000);
    }
    await waitFor(() => h!.logs.some((l) => /self[- ]signed|unable to (get|verify)/i.test(l)), 'the wrong CA refused', 60_000);
    await waitFor(() => h!.logs.some((l) => /127\.0\.0\.1 is not in the cert's list/.test(l)), 'the wrong host refused', 60_000);
    await publishTls('tls/wrong', '1');
    await publishTls('tls/host', '1');
    await new Promise((r) => setTimeout(r, 500));
    expect(await h.executions('mqtt_tls_wrong_ca')).toHaveLength(0);
    expect(await h.executions('mqtt_tls_wrong_host')).toHaveLength(0);
    expect(h.logs.join('\n')).not.toContain('BEGIN CERTIFICATE');
  }, 150_000);
});

describe('connection options (pure function)', () => {
  const ctx = (trigger: Record<string, unknown>) => ({ trigger: { id: 'sensor', ...trigger }, render: (v: unknown) => v } as unknown as TriggerContext);
  it('connectionTimeout is the connect timeout; crt must be PEM; authMethod is refused naming the field', () => {
    expect(mqttConnectOptions(ctx({ connectionTimeout: 'PT2M' }), 'c').connectTimeout).toBe(120_000);
    expect(mqttConnectOptions(ctx({}), 'c').connectTimeout).toBe(10_000);
    expect(() => mqttConnectOptions(ctx({ connectionTimeout: 'soon' }), 'c')).toThrow(/triggers\.sensor\.connectionTimeout/);
    expect(() => mqttConnectOptions(ctx({ crt: '/etc/ca.crt' }), 'c')).toThrow(/triggers\.sensor\.crt must be the PEM content/);
    expect(() => mqttConnectOptions(ctx({ authMethod: 'SCRAM-SHA-1' }), 'c')).toThrow(/triggers\.sensor\.authMethod: MQTT 5 enhanced authentication is not supported/);
  });

  it('a flow whose trigger has authMethod is refused when saved, naming the field', async () => {
    h = await startHarness();
    await expect(h.save(flowYaml('mqtt_auth', trigger('auth/x', 'authMethod: SCRAM-SHA-1')))).rejects.toThrow(/triggers\[0\]\.authMethod: MQTT 5 enhanced authentication is not supported/);
  });
});
