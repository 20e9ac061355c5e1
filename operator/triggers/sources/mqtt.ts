// MQTT realtime trigger (`mqtt.RealtimeTrigger`): one execution per message on `topic`. Messages are received with
// QoS 1 (or the `qos` given) on a persistent session (clean: false, a stable client id per flow trigger) and the PUBACK
// is sent only after the execution is durably created; a message received but not created before a crash or a
// disconnect is redelivered by the broker. At-least-once: a crash after the create and before the PUBACK delivers
// the message again (MQTT message ids are reused, so they cannot serve as a dedupe key).
import mqtt, { type IClientOptions } from 'mqtt';
import { derivedId } from '../../core/ids.js';
import { parseJsonSafe } from '../../core/keyed.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext } from '../types.js';
import { durationMs } from '../../plugins/util.js';
import { str, supervise } from './util.js';

export function decodePayload(payload: Buffer, serde: string): unknown {
  if (serde === 'BYTES') return payload.toString('base64');
  const text = payload.toString('utf8');
  if (serde !== 'JSON') return text;
  try { return parseJsonSafe(text); } catch { return text; }
}

/** The client id of a flow trigger (stable, so the broker keeps its session and unacknowledged messages). */
export function mqttClientId(ctx: Pick<TriggerContext, 'flow' | 'trigger'>): string {
  return `flowpilot-${derivedId(ctx.flow.namespace, ctx.flow.id, ctx.trigger.id)}`;
}

/**
 * Connection options of a trigger: `connectionTimeout` (ISO duration, default 10 s) bounds the connect and CONNACK;
 * `crt` is the PEM of the CA that signs a TLS broker's certificate (mqtts://, ssl://, tls://; the system CAs without
 * it); `httpsHostnameVerificationEnabled: false` skips the host name check (the chain is still verified).
 * `authMethod` (MQTT 5 enhanced authentication) needs a challenge/response exchange flowpilot does not implement: it
 * is refused.
 */
export function mqttConnectOptions(ctx: TriggerContext, clientId: string): IClientOptions {
  const t = ctx.trigger;
  const field = (name: string) => `triggers.${t.id}.${name}`;
  if (t.authMethod !== undefined && t.authMethod !== null && t.authMethod !== '') {
    throw new Error(`${field('authMethod')}: MQTT 5 enhanced authentication is not supported; use username/password (or remove authMethod)`);
  }
  const version = String(ctx.render(t.version ?? 'V3'));
  const username = str(ctx, t.username, 'username', false);
  const password = str(ctx, t.password, 'password', false);
  const timeout = str(ctx, t.connectionTimeout, 'connectionTimeout', false);
  let connectTimeout = 10_000;
  if (timeout !== undefined) {
    try { connectTimeout = durationMs(timeout); } catch { throw new Error(`${field('connectionTimeout')} must be an ISO-8601 duration such as PT30S (got '${timeout}')`); }
    if (!(connectTimeout > 0)) throw new Error(`${field('connectionTimeout')} must be positive (got '${timeout}')`);
  }
  const ca = str(ctx, t.crt, 'crt', false);
  if (ca !== undefined && !ca.includes('-----BEGIN ')) {
    throw new Error(`${field('crt')} must be the PEM content of the CA certificate ("-----BEGIN CERTIFICATE-----...", e.g. "{{ secret('MQTT_CA') }}"); file paths are not read`);
  }
  const hostCheck = t.httpsHostnameVerificationEnabled === undefined || String(ctx.render(t.httpsHostnameVerificationEnabled)) !== 'false';
  return {
    clientId, clean: false, reconnectPeriod: 0, connectTimeout,
    protocolVersion: version.includes('5') ? 5 : 4,
    ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}),
    // TLS settings, used by the TLS protocols only.
    rejectUnauthorized: true,
    ...(ca ? { ca } : {}),
    ...(hostCheck ? {} : { checkServerIdentity: () => undefined }),
  };
}

export const mqttTrigger: RealtimeTriggerPlugin = {
  kind: 'realtime',
  type: PLUGIN_TRIGGER_TYPES.mqtt,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.mqtt),
  async listen(ctx, emit) {
    const t = ctx.trigger;
    const server = str(ctx, t.server, 'server')!;
    const rendered = ctx.render(t.topic);
    const topics = (Array.isArray(rendered) ? rendered : [rendered]).map(String);
    const qos = Number(ctx.render(t.qos ?? 1)) as 0 | 1 | 2;
    const serde = String(ctx.render(t.serdeType ?? 'JSON')).toUpperCase();
    const clientId = str(ctx, t.clientId, 'clientId', false) ?? mqttClientId(ctx);
    const options = mqttConnectOptions(ctx, clientId);
    return supervise(ctx, `mqtt ${server}`, (signal, ready) => new Promise<void>((resolve, reject) => {
      const client = mqtt.connect(server, options);
      // handleMessage runs before the PUBACK (QoS 1) / PUBCOMP (QoS 2) is sent and blocks the next message until its
      // callback: the ack goes only after the execution exists (customHandleAcks would do this for MQTT 5 only).
      client.handleMessage = (packet, callback) => {
        if (packet.cmd !== 'publish') { callback(); return; }
        const variables = { topic: packet.topic, payload: decodePayload(Buffer.from(packet.payload), serde), qos: packet.qos, retain: packet.retain, id: packet.messageId };
        emit({ variables }).then(() => callback(), (err: unknown) => {
          // No ack: drop the connection so the broker redelivers on the next session.
          client.end(true);
          reject(err);
        });
      };
      const finish = () => { signal.removeEventListener('abort', onAbort); resolve(); };
      const onAbort = () => client.end(true, undefined, finish);
      signal.addEventListener('abort', onAbort, { once: true });
      client.on('connect', () => {
        client.subscribe(topics, { qos }, (err) => {
          if (err) { client.end(true); reject(err); return; }
          ready();
        });
      });
      client.on('error', (err) => { client.end(true); reject(err); });
      client.on('close', finish);
    }));
  },
};
