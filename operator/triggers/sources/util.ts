// Helpers shared by the trigger sources: the reconnect loop of realtime listeners (exponential backoff with jitter),
// storing large batches as a file in internal storage (Kestra's fetchType STORE), and small property readers.
import { newId } from '../../core/ids.js';
import { errorMessage } from '../../plugins/util.js';
import { backoff, sleep } from '../../faults.js';
import type { RealtimeListener, TriggerContext } from '../types.js';

/** Rows above this count or this serialized size go to a file (`trigger.uri`) instead of `trigger.rows`. */
export const INLINE_MAX_ROWS = 1000;
export const INLINE_MAX_BYTES = 256 * 1024;

/** Where a trigger's files live in internal storage (beside the flow's executions, Kestra's layout). */
export function triggerStoragePath(ctx: TriggerContext, name: string): string {
  return `${ctx.flow.namespace.replace(/\./g, '/')}/${ctx.flow.id}/triggers/${ctx.trigger.id}/${name}`;
}

/** Writes rows as one JSON document per line (the item-per-line layout ForEachItem reads) and returns the URI. */
export async function storeRows(ctx: TriggerContext, rows: unknown[]): Promise<string> {
  const text = rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');
  return ctx.stores.storage.put(triggerStoragePath(ctx, `${newId()}.ion`), Buffer.from(text, 'utf8'));
}

/** Whether rows are too large to travel inline in the execution record. */
export function tooLargeInline(rows: unknown[]): boolean {
  if (rows.length > INLINE_MAX_ROWS) return true;
  let size = 0;
  for (const r of rows) {
    size += Buffer.byteLength(JSON.stringify(r) ?? '');
    if (size > INLINE_MAX_BYTES) return true;
  }
  return false;
}

export function str(ctx: TriggerContext, value: unknown, name: string, required = true): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw new Error(`property '${name}' is required`);
    return undefined;
  }
  return String(ctx.render(value));
}

export function int(ctx: TriggerContext, value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = Number(ctx.render(value));
  return Number.isFinite(n) ? n : fallback;
}

/**
 * One connection's lifetime: resolves or rejects when the connection is lost or `signal` aborts. `ready()` says the
 * connection is up (the backoff restarts from its first step).
 */
export type Session = (signal: AbortSignal, ready: () => void) => Promise<void>;

/**
 * Runs `session` again and again until the trigger stops, waiting `backoff(attempt)` after each lost connection.
 * Returns at once: connecting happens in the background, so a service that is down at start is retried too.
 */
export function supervise(ctx: TriggerContext, what: string, session: Session): RealtimeListener {
  const abort = new AbortController();
  const onStop = () => abort.abort();
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const loop = (async () => {
    let attempt = 0;
    while (!abort.signal.aborted) {
      let wasReady = false;
      try {
        await session(abort.signal, () => { wasReady = true; attempt = 0; });
        if (abort.signal.aborted) return;
        ctx.logger.warn(`${what}: connection closed`);
      } catch (err) {
        if (abort.signal.aborted) return;
        ctx.logger.warn(`${what}: ${errorMessage(err)}`);
      }
      if (wasReady) attempt = 0;
      const wait = backoff(attempt++);
      ctx.logger.info(`${what}: reconnecting in ${wait} ms`);
      await sleep(wait, abort.signal);
    }
  })();
  return {
    async stop() {
      abort.abort();
      ctx.signal.removeEventListener('abort', onStop);
      await loop;
    },
  };
}

/** Resolves when `signal` aborts (a session's "run until stopped"). */
export function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((res) => signal.addEventListener('abort', () => res(), { once: true }));
}
