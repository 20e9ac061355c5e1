// Large JSON answers written in slices across event-loop turns: the JSON of an execution with 100,000 task runs is
// ~80 MB, and one JSON.stringify of it plus one socket write of the text blocked the server for about a second (no
// /healthz, no other request meanwhile). An object whose list property is long is sent as a stream instead: the
// properties around the list once, then the list's items a slice at a time, one slice per turn. The text is the same
// JSON (same keys in the same order) as JSON.stringify of the object.
import { Readable } from 'node:stream';
import type { Context } from 'koa';

/** Lists shorter than this are sent in one piece (the stream costs more than it saves). */
export const STREAM_LIST_FROM = 2_000;
/** Items serialised per turn of the event loop (~0.4 MB of task runs, a few ms). */
const ITEMS_PER_SLICE = 500;

/**
 * The answer body of `value`: `value` itself (Koa serialises it) unless its property `key` is an array of at least
 * `STREAM_LIST_FROM` items; then a stream of the same JSON text, the items serialised `ITEMS_PER_SLICE` per turn.
 */
export function jsonBody<T extends object>(value: T, key: keyof T & string): T | Readable {
  const list = (value as Record<string, unknown>)[key];
  if (!Array.isArray(list) || list.length < STREAM_LIST_FROM) return value;
  return listStream(value, key, list.length, (i) => JSON.stringify(list[i]) ?? 'null');
}

/** Items bytes from which `jsonBytesBody` sends three chunks instead of copying them into one buffer. */
const COPY_BYTES_MAX = 8 * 2 ** 20;

/**
 * The JSON of `value` with its list property `key` made of `items`: the UTF-8 JSON texts of the items, separated by
 * commas (what goes between the list's brackets), as a store holds them: the same text as JSON.stringify of `value`
 * with the parsed items in `key`, no item parsed, serialised or encoded again. One buffer, or, from 8 MiB of items on,
 * a stream of three chunks (the text before the list, the items as they are, the text after it): no copy of them.
 */
export function jsonBytesBody<T extends object>(value: T, key: keyof T & string, items: Buffer): Buffer | Readable {
  const { head, tail } = around(value, key);
  const parts = [Buffer.from(head), items, Buffer.from(tail)];
  return items.length < COPY_BYTES_MAX ? Buffer.concat(parts) : Readable.from(parts, { objectMode: false });
}

/** The JSON text of `value` before the items of its property `key` (up to its `[`) and after them (from its `]`). */
function around(value: object, key: string): { head: string; tail: string } {
  const keys = Object.keys(value);
  const at = keys.indexOf(key);
  const pick = (from: string[]) => Object.fromEntries(from.map((k) => [k, (value as Record<string, unknown>)[k]]));
  const before = JSON.stringify(pick(keys.slice(0, at))).slice(0, -1); // '{...' without its '}'
  const after = JSON.stringify(pick(keys.slice(at + 1))).slice(1); // '...}' without its '{'
  return {
    head: `${before}${before.length > 1 ? ',' : ''}${JSON.stringify(key)}:[`,
    tail: `]${after.length > 1 ? ',' : ''}${after}`,
  };
}

/** `value` as a stream of JSON text, the `count` items of its list `key` (`item(i)` their texts) a slice per turn. */
function listStream(value: object, key: string, count: number, item: (i: number) => string): Readable {
  const { head, tail } = around(value, key);
  let next = 0;
  const slice = (): string => {
    const end = Math.min(count, next + ITEMS_PER_SLICE);
    const parts: string[] = [];
    for (let i = next; i < end; i++) parts.push(item(i));
    const text = `${next === 0 ? head : ','}${parts.join(',')}${end === count ? tail : ''}`;
    next = end;
    return text;
  };
  let first = true;
  return new Readable({
    read() {
      if (next >= count) { this.push(null); return; }
      if (first) { first = false; this.push(slice()); return; }
      // The next slice on the next turn: whatever waits (requests, timers, I/O) runs in between.
      setImmediate(() => { this.push(next >= count ? null : slice()); });
    },
  });
}

/** Answers `value` as JSON, streamed when its list `key` is long (jsonBody). */
export function sendJson<T extends object>(ctx: Pick<Context, 'body' | 'type'>, value: T, key: keyof T & string): void {
  const body = jsonBody(value, key);
  ctx.body = body;
  if (body instanceof Readable) ctx.type = 'application/json; charset=utf-8';
}

/** Answers `value` with the serialised `items` (UTF-8 JSON texts joined by commas) as its list `key` (jsonBytesBody). */
export function sendJsonBytes<T extends object>(ctx: Pick<Context, 'body' | 'type'>, value: T, key: keyof T & string, items: Buffer): void {
  ctx.body = jsonBytesBody(value, key, items);
  ctx.type = 'application/json; charset=utf-8';
}
