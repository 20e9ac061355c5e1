// AMQP 0-9-1 realtime trigger (`amqp.RealtimeTrigger`, RabbitMQ): one execution per message of `queue`, with the
// message in `trigger.*` (data, headers, contentType, messageId, timestamp...). Manual acknowledgement: a message is
// acked only after its execution is durably created, and nacked with requeue when the create fails (after a backoff,
// so a store outage does not spin). Up to PREFETCH messages are handled at once. A message delivered but not acked
// before a crash or a lost connection is redelivered by the broker; with a `messageId` it still starts one execution
// (the id is the dedupe key), without one it may start a second. The connection is re-established with backoff.
import { connect, type Channel, type ConsumeMessage, type Options } from 'amqplib';
import { dictFrom, parseJsonSafe } from '../../core/keyed.js';
import { InputValidationError } from '../../model/errors.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import { errorMessage } from '../../plugins/util.js';
import { backoff, sleep } from '../../faults.js';
import type { RealtimeTriggerPlugin, TriggerContext, TriggerEvent } from '../types.js';
import { aborted, str, supervise } from './util.js';

/** Unacknowledged messages the broker sends at most (each one's execution is created concurrently). */
export const AMQP_PREFETCH = 100;
/** How long a stopping listener lets creates in flight finish (and be acked) before closing the channel. */
const STOP_GRACE_MS = 5000;
const CONNECT_TIMEOUT_MS = 10_000;

/** Where to connect: `url` (amqp://user:pass@host:port/vhost, kept by Kestra for compatibility) or host/port/... */
export function amqpConnectTarget(ctx: TriggerContext): string | Options.Connect {
  const t = ctx.trigger;
  const url = str(ctx, t.url, 'url', false);
  if (url) return url;
  const hostname = str(ctx, t.host, 'host (or url)')!;
  const port = str(ctx, t.port, 'port', false);
  const username = str(ctx, t.username, 'username', false);
  const password = str(ctx, t.password, 'password', false);
  return {
    protocol: 'amqp', hostname, port: port ? Number(port) : 5672,
    // Verbatim, like Kestra's `virtualHost` (the default vhost is "/").
    vhost: str(ctx, t.virtualHost, 'virtualHost', false) ?? '/',
    ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}),
  };
}

/** AMQP field-table values as JSON (byte arrays as UTF-8 text, 64-bit integers as numbers or digits). */
function jsonSafe(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    // Typed values ({ '!': 'timestamp', value }) keep their value only.
    if ('!' in o && 'value' in o && Object.keys(o).length === 2) return jsonSafe(o.value);
    return dictFrom(Object.entries(o).map(([k, v]) => [k, jsonSafe(v)] as const));
  }
  return value;
}

export function decodeAmqpBody(content: Buffer, serde: string): unknown {
  const text = content.toString('utf8');
  if (serde !== 'JSON') return text;
  try { return parseJsonSafe(text); } catch { return text; }
}

/** The `trigger.*` variables of a message (Kestra's Message output: absent properties are left out). */
export function amqpMessageVariables(msg: Pick<ConsumeMessage, 'content' | 'properties'>, serde: string): Record<string, unknown> {
  const p = msg.properties;
  const vars: Record<string, unknown> = {
    data: decodeAmqpBody(msg.content, serde),
    contentType: p.contentType, contentEncoding: p.contentEncoding,
    headers: p.headers && Object.keys(p.headers).length ? jsonSafe(p.headers) : undefined,
    deliveryMode: p.deliveryMode, priority: p.priority, correlationId: p.correlationId, replyTo: p.replyTo,
    expiration: p.expiration, messageId: p.messageId,
    timestamp: typeof p.timestamp === 'number' ? new Date(p.timestamp * 1000).toISOString() : undefined,
    type: p.type, userId: p.userId, appId: p.appId,
  };
  for (const k of Object.keys(vars)) if (vars[k] === undefined || vars[k] === null) delete vars[k];
  return vars;
}

/** Acks/nacks on a channel that may have closed meanwhile (then the broker requeues the message itself). */
function settle(ch: Channel, f: (ch: Channel) => void): void {
  try { f(ch); } catch { /* channel closed: the message is redelivered */ }
}

export const amqpTrigger: RealtimeTriggerPlugin = {
  kind: 'realtime',
  type: PLUGIN_TRIGGER_TYPES.amqp,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.amqp),
  async listen(ctx, emit) {
    const t = ctx.trigger;
    const queue = str(ctx, t.queue, 'queue')!;
    const consumerTag = str(ctx, t.consumerTag, 'consumerTag', false) ?? 'Kestra';
    const serde = String(ctx.render(t.serdeType ?? 'STRING')).toUpperCase();
    const autoAck = String(ctx.render(t.autoAck ?? false)) === 'true';
    const target = amqpConnectTarget(ctx);
    let failures = 0;

    /** One message: create its execution, then ack; on failure nack with requeue (after a backoff). */
    async function handle(ch: Channel, msg: ConsumeMessage, signal: AbortSignal): Promise<void> {
      const messageId = msg.properties.messageId;
      const event: TriggerEvent = {
        variables: amqpMessageVariables(msg, serde),
        ...(messageId !== undefined && messageId !== null && messageId !== '' ? { dedupeKey: String(messageId) } : {}),
      };
      try {
        await emit(event);
      } catch (err) {
        if (autoAck) { ctx.logger.error(`message lost (autoAck): ${errorMessage(err)}`); return; }
        if (err instanceof InputValidationError) {
          // Can never become an execution: rejected without requeue (dead-lettered when the queue has a DLX).
          ctx.logger.error(`message rejected: ${errorMessage(err)}`);
          settle(ch, (c) => c.nack(msg, false, false));
          return;
        }
        if (!signal.aborted) {
          const wait = backoff(failures++);
          ctx.logger.warn(`execution not created, message requeued in ${wait} ms: ${errorMessage(err)}`);
          await sleep(wait, signal);
        }
        settle(ch, (c) => c.nack(msg, false, true));
        return;
      }
      failures = 0;
      if (!autoAck) settle(ch, (c) => c.ack(msg));
    }

    return supervise(ctx, `amqp queue ${queue}`, async (signal, ready) => {
      const conn = await connect(target, { timeout: CONNECT_TIMEOUT_MS, clientProperties: { connection_name: `flowpilot ${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}` } });
      let lost!: (err: Error) => void;
      const closed = new Promise<Error>((res) => { lost = res; });
      conn.on('error', () => { /* followed by 'close' */ });
      conn.on('close', (err?: Error) => lost(err ?? new Error('connection closed')));
      try {
        if (signal.aborted) return;
        const ch = await conn.createChannel();
        ch.on('error', () => { /* followed by 'close' */ });
        ch.on('close', () => lost(new Error('channel closed')));
        await ch.prefetch(AMQP_PREFETCH);
        const inflight = new Set<Promise<void>>();
        // The queue must exist (as in Kestra): a missing one closes the channel with NOT_FOUND and is retried.
        await ch.consume(queue, (msg) => {
          if (!msg) { lost(new Error('consumer cancelled by the broker (queue deleted?)')); return; }
          const p: Promise<void> = handle(ch, msg, signal).finally(() => inflight.delete(p));
          inflight.add(p);
        }, { noAck: autoAck, consumerTag });
        ready();
        const reason = await Promise.race([closed, aborted(signal).then(() => undefined)]);
        if (reason) throw reason;
        // Stopping: no more deliveries; creates in flight may finish and be acked, the rest is requeued on close.
        await ch.cancel(consumerTag).catch(() => undefined);
        const grace = new AbortController();
        await Promise.race([Promise.allSettled([...inflight]), sleep(STOP_GRACE_MS, grace.signal)]);
        grace.abort();
      } finally {
        await conn.close().catch(() => undefined);
      }
    });
  },
};
