// MQTT realtime trigger (`mqtt.RealtimeTrigger`): one execution per message on `topic`. Messages are received with
// QoS 1 (or the `qos` given) on a persistent session (clean: false, a stable client id per flow trigger) and the PUBACK
// is sent only after the execution is durably created; a message received but not created before a crash or a
// disconnect is redelivered by the broker. At-least-once: a crash after the create and before the PUBACK delivers
// the message again (MQTT message ids are reused, so they cannot serve as a dedupe key).
import mqtt from 'mqtt';
import { derivedId } from '../../core/ids.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext } from '../types.js';
import { str, supervise } from './util.js';

export function decodePayload(payload: Buffer, serde: string): unknown {
  if (serde === 'BYTES') return payload.toString('base64');
  const text = payload.toString('utf8');
  if (serde !== 'JSON') return text;
  try { return JSON.parse(text); } catch { return text; }
}

/** The client id of a flow trigger (stable, so the broker keeps its session and unacknowledged messages). */
export function mqttClientId(ctx: Pick<TriggerContext, 'flow' | 'trigger'>): string {
  return `flowpilot-${derivedId(ctx.flow.namespace, ctx.flow.id, ctx.trigger.id)}`;
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
    const version = String(ctx.render(t.version ?? 'V3'));
    const username = str(ctx, t.username, 'username', false);
    const password = str(ctx, t.password, 'password', false);
    const clientId = str(ctx, t.clientId, 'clientId', false) ?? mqttClientId(ctx);
    return supervise(ctx, `mqtt ${server}`, (signal, ready) => new Promise<void>((resolve, reject) => {
      const client = mqtt.connect(server, {
        clientId, clean: false, reconnectPeriod: 0, connectTimeout: 10_000,
        protocolVersion: version.includes('5') ? 5 : 4,
        ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}),
      });
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
