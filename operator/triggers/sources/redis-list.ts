// Redis list realtime trigger (`redis.list.RealtimeTrigger`): one execution per list item, never lost and never doubled.
// Reliable-queue pattern in three steps, each surviving a crash:
//   1. BLMOVE the item from the list into the trigger's `claimed` list (a crash here leaves it there: re-claimed);
//   2. MULTI: take it out of `claimed` and push an envelope {id, value} onto `pending` (the id fixes the execution id);
//   3. create the execution (dedupe key = envelope id), then LREM the envelope from `pending`.
// On (re)connect, leftovers of `claimed` are claimed again and leftovers of `pending` are re-created (idempotent).
import { Redis } from 'ioredis';
import { newId } from '../../core/ids.js';
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
  try { return JSON.parse(raw); } catch { return raw; }
}

async function claim(redis: Redis, lists: { claimed: string; pending: string }, value: string): Promise<string> {
  const envelope = JSON.stringify({ id: newId(), value } satisfies Envelope);
  await redis.multi().lrem(lists.claimed, 1, value).rpush(lists.pending, envelope).exec();
  return envelope;
}

async function handle(redis: Redis, lists: { pending: string }, envelope: string, key: string, serde: string, emit: (e: TriggerEvent) => Promise<void>): Promise<void> {
  const { id, value } = JSON.parse(envelope) as Envelope;
  await emit({ dedupeKey: id, variables: { key, value: decode(value, serde) } });
  await redis.lrem(lists.pending, 1, envelope);
}

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
        for (const v of await redis.lrange(lists.claimed, 0, -1)) await claim(redis, lists, v);
        for (const env of await redis.lrange(lists.pending, 0, -1)) await handle(redis, lists, env, key, serde, emit);
        while (!signal.aborted) {
          // Blocks up to 1 s so a stop is noticed; then drains what is queued without blocking.
          let value = await Promise.race([redis.blmove(key, lists.claimed, 'LEFT', 'RIGHT', 1), closed.then(() => null)]);
          while (value !== null && value !== undefined && !signal.aborted) {
            await handle(redis, lists, await claim(redis, lists, value), key, serde, emit);
            value = await redis.lmove(key, lists.claimed, 'LEFT', 'RIGHT');
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
