// NATS realtime trigger (`nats.RealtimeTrigger`, also `nats.core.RealtimeTrigger`): one execution per message on
// `subject`. With `durableId` (Kestra's usage) it reads through a JetStream durable consumer on the stream that holds
// the subject: explicit ack after the durable create, the stream sequence as dedupe key, so a message is never lost
// and never doubled. Without `durableId` it is a plain core NATS subscription, which has no acknowledgement: a
// message that arrives while the listener is down or crashes before the create is lost (at-most-once).
// Authentication: username/password, token, or `creds` (a NATS credentials file's content: JWT + nkey seed).
import { AckPolicy, DeliverPolicy, connect, credsAuthenticator, nanos, type ConnectionOptions, type JsMsg, type Msg, type NatsConnection } from 'nats';
import { dict } from '../../core/keyed.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext, TriggerEvent } from '../types.js';
import { int, str, supervise } from './util.js';

const POLICIES: Record<string, DeliverPolicy> = {
  All: DeliverPolicy.All, Last: DeliverPolicy.Last, New: DeliverPolicy.New, LastPerSubject: DeliverPolicy.LastPerSubject,
};

function headersOf(m: Msg | JsMsg): Record<string, string[]> {
  const out = dict<string[]>(); // the publisher chose the names
  if (m.headers) for (const [k, v] of m.headers) out[k] = v;
  return out;
}

function event(m: Msg | JsMsg, dedupeKey?: string): TriggerEvent {
  const timestamp = 'info' in m ? new Date(Math.floor(m.info.timestampNanos / 1e6)).toISOString() : new Date().toISOString();
  return { ...(dedupeKey ? { dedupeKey } : {}), variables: { subject: m.subject, data: m.string(), headers: headersOf(m), timestamp } };
}

const CREDS_BLOCK = /-{3,}BEGIN [^\n]*-{3,}\s*\n\s*\S+\s*\n\s*-{3,}END [^\n]*-{3,}/g;

/**
 * `creds` is the content of a NATS credentials file (the user JWT and the user's nkey seed, as `nsc` writes it): the
 * client answers the server's nonce with the seed's signature. Checked here so a malformed file fails at start, naming
 * the field, and never shows up in a message.
 */
export function credsOption(ctx: Pick<TriggerContext, 'trigger' | 'render'>): Pick<ConnectionOptions, 'authenticator'> {
  const t = ctx.trigger;
  if (t.creds === undefined || t.creds === null || t.creds === '') return {};
  const creds = String(ctx.render(t.creds));
  const blocks = creds.match(CREDS_BLOCK) ?? [];
  if (blocks.length < 2 || !/BEGIN [^\n]*JWT/.test(blocks[0]!) || !/BEGIN [^\n]*SEED/.test(blocks[1]!)) {
    throw new Error(`triggers.${t.id}.creds must be the content of a NATS credentials file (a USER JWT block then a USER NKEY SEED block), e.g. "{{ secret('NATS_CREDS') }}"`);
  }
  return { authenticator: credsAuthenticator(new TextEncoder().encode(creds)) };
}

function options(ctx: TriggerContext): ConnectionOptions {
  const t = ctx.trigger;
  const raw = str(ctx, t.url, 'url')!;
  const url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `nats://${raw}`);
  const user = str(ctx, t.username, 'username', false);
  const pass = str(ctx, t.password, 'password', false);
  const token = str(ctx, t.token, 'token', false) ?? (url.username && !url.password ? decodeURIComponent(url.username) : undefined);
  return {
    servers: `${url.hostname}:${url.port || 4222}`, reconnect: false, timeout: 10_000, name: `flowpilot ${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}`,
    ...(user ? { user } : {}), ...(pass !== undefined ? { pass } : {}), ...(token ? { token } : {}),
    ...credsOption(ctx),
  };
}

async function jetstream(nc: NatsConnection, ctx: TriggerContext, subject: string, durable: string, emit: (e: TriggerEvent) => Promise<void>): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const stream = await jsm.streams.find(subject);
  const name = String(ctx.render(ctx.trigger.deliverPolicy ?? 'All'));
  const policy = Object.hasOwn(POLICIES, name) ? POLICIES[name]! : DeliverPolicy.All;
  try {
    await jsm.consumers.info(stream, durable);
  } catch {
    await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: policy, filter_subject: subject, ack_wait: nanos(30_000) });
  }
  const consumer = await nc.jetstream().consumers.get(stream, durable);
  const size = int(ctx, ctx.trigger.batchSize, 10);
  // Batches pulled with fetch: after a failed create the rest of the batch is nak'ed (redelivered at once) rather
  // than left to wait for ack_wait.
  while (!nc.isClosed()) {
    const batch = await consumer.fetch({ max_messages: size, expires: 2000 });
    let failed: { err: unknown } | undefined;
    for await (const m of batch) {
      if (failed) { m.nak(); continue; }
      try {
        await emit(event(m, `${m.info.stream}:${m.seq}`));
        m.ack();
      } catch (err) {
        failed = { err };
        m.nak();
      }
    }
    if (failed) throw failed.err;
  }
}

async function core(nc: NatsConnection, subject: string, emit: (e: TriggerEvent) => Promise<void>): Promise<void> {
  const sub = nc.subscribe(subject);
  void nc.closed().then(() => sub.unsubscribe());
  for await (const m of sub) await emit(event(m));
}

export const natsTrigger: RealtimeTriggerPlugin = {
  kind: 'realtime',
  type: PLUGIN_TRIGGER_TYPES.nats,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.nats),
  async listen(ctx, emit) {
    const opts = options(ctx);
    const subject = str(ctx, ctx.trigger.subject, 'subject')!;
    const durable = str(ctx, ctx.trigger.durableId, 'durableId', false);
    return supervise(ctx, `nats ${subject}`, async (signal, ready) => {
      const nc = await connect(opts);
      const onAbort = () => { void nc.close(); };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const run = durable ? jetstream(nc, ctx, subject, durable, emit) : core(nc, subject, emit);
        run.catch(() => undefined); // observed by the race below
        // Flushing proves the subscription reached the server.
        await nc.flush();
        ready();
        await Promise.race([run, nc.closed()]);
      } finally {
        signal.removeEventListener('abort', onAbort);
        if (!nc.isClosed()) await nc.close();
      }
    });
  },
};
