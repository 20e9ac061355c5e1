// Redis list realtime trigger (`redis.list.RealtimeTrigger`): one execution per list item, never lost and never doubled.
// Reliable-queue pattern in three steps, each surviving a crash:
//   1. BLMOVE/LMOVE items from the list into the trigger's `claimed` list (a crash here leaves them there: re-claimed);
//   2. MULTI: take them out of `claimed` and push envelopes {id, value} onto `pending` (the id fixes the execution id);
//   3. create the executions (dedupe key = envelope id), then LREM the envelopes from `pending`.
// Items are taken in batches of up to 100 (three round trips per batch), handled in list order.
// On (re)connect, leftovers of `claimed` are claimed again and leftovers of `pending` are re-created (idempotent).
import { Redis } from 'ioredis';
import { newId } from '../../core/ids.js';
import { parseJsonSafe } from '../../core/keyed.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext, TriggerEvent } from '../types.js';
import { aborted, str, supervise } from './util.js';

interface Envelope { id: string; value: string }

/** The trigger's private lists (per flow trigger, so two triggers on one key never take each other's items). */
export function redisWorkLists(ctx: Pick<TriggerContext, 'flow' | 'trigger'>, key: string): { claimed: string; pending: string } {
  const base = `flowpilot:trigger:{${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}}:${key}`;
  return { claimed: `${base}:claimed`, pending: `${base}:pending` };
}

function decode(raw: string, serde: string): unknown {
  if (serde !== 'JSON') return raw;
  try { return parseJsonSafe(raw); } catch { return raw; }
}

/** Step 2 for a batch: one MULTI moves the claimed values into `pending` as envelopes with fresh ids. */
async function claim(redis: Redis, lists: { claimed: string; pending: string }, values: string[]): Promise<string[]> {
  if (values.length === 0) return [];
  const envelopes = values.map((value) => JSON.stringify({ id: newId(), value } satisfies Envelope));
  const tx = redis.multi();
  for (const v of values) tx.lrem(lists.claimed, 1, v);
  await tx.rpush(lists.pending, ...envelopes).exec();
  return envelopes;
}

/** Step 3 for a batch: create each execution in order, then drop the envelopes (a crash in between: re-created once). */
async function handle(redis: Redis, lists: { pending: string }, envelopes: string[], key: string, serde: string, emit: (e: TriggerEvent) => Promise<void>): Promise<void> {
  const done: string[] = [];
  try {
    for (const envelope of envelopes) {
      const { id, value } = JSON.parse(envelope) as Envelope;
      await emit({ dedupeKey: id, variables: { key, value: decode(value, serde) } });
      done.push(envelope);
    }
  } finally {
    if (done.length && redis.status === 'ready') {
      const p = redis.pipeline();
      for (const e of done) p.lrem(lists.pending, 1, e);
      await p.exec();
    }
  }
}

/** Up to `max` more items without blocking (one round trip). */
async function drain(redis: Redis, key: string, claimed: string, max: number): Promise<string[]> {
  const p = redis.pipeline();
  for (let i = 0; i < max; i++) p.lmove(key, claimed, 'LEFT', 'RIGHT');
  const out: string[] = [];
  for (const [err, v] of (await p.exec()) ?? []) {
    if (err) throw err;
    if (typeof v === 'string') out.push(v);
  }
  return out;
}

const BATCH = 100;

export const redisListTrigger: RealtimeTriggerPlugin = {
  kind: 'realtime',
  type: PLUGIN_TRIGGER_TYPES.redisList,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.redisList),
  async listen(ctx, emit) {
    const url = str(ctx, ctx.trigger.url, 'url')!;
    const key = str(ctx, ctx.trigger.key, 'key')!;
    const serde = String(ctx.render(ctx.trigger.serdeType ?? 'STRING')).toUpperCase();
    const lists = redisWorkLists(ctx, key);
    return supervise(ctx, `redis ${key}`, async (signal, ready) => {
      // No client-side retries or offline queue: a lost connection ends the session and `supervise` backs off.
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
      redis.on('error', () => { /* surfaced by the failing command */ });
      const closed = new Promise<void>((res) => redis.once('end', () => res()));
      const onAbort = () => redis.disconnect();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        await redis.connect();
        ready();
        // Recovery: what an earlier run claimed or announced but did not finish.
        await claim(redis, lists, await redis.lrange(lists.claimed, 0, -1));
        await handle(redis, lists, await redis.lrange(lists.pending, 0, -1), key, serde, emit);
        while (!signal.aborted) {
          // Blocks up to 1 s so a stop is noticed; then takes what is queued in batches, without blocking.
          const first = await Promise.race([redis.blmove(key, lists.claimed, 'LEFT', 'RIGHT', 1), closed.then(() => null)]);
          let batch = typeof first === 'string' ? [first, ...(await drain(redis, key, lists.claimed, BATCH - 1))] : [];
          while (batch.length > 0 && !signal.aborted) {
            await handle(redis, lists, await claim(redis, lists, batch), key, serde, emit);
            batch = batch.length < BATCH ? [] : await drain(redis, key, lists.claimed, BATCH);
          }
          if (redis.status === 'end') return;
        }
        await aborted(signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
        redis.disconnect();
      }
    });
  },
};
