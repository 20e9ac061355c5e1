// Query-string helpers shared by the routes: repeatable values, bounded integers, paging and `k:v` labels.
// Invalid values give a 400 naming the parameter.
import type { Context } from 'koa';
import { reservedSegment } from '../operator/core/keyed.js';
import type { Label } from '../operator/core/types.js';
import { badRequest } from './errors.js';

/** Every value of a repeatable parameter (`?state=A&state=B`, also `state=A,B` unless `splitCommas` is false). */
export function queryList(ctx: Context, name: string, splitCommas = true): string[] {
  const raw = ctx.query[name];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.flatMap((v) => (splitCommas ? v.split(',') : [v])).map((v) => v.trim()).filter((v) => v !== '');
}

/** Last value of a parameter, undefined when absent or empty. */
export function queryOne(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  const v = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return v === undefined || v === '' ? undefined : v;
}

export function queryInt(ctx: Context, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = queryOne(ctx, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw badRequest(`Invalid '${name}': expected an integer between ${min} and ${max}, got '${v}'`, name);
  }
  return n;
}

export function queryBool(ctx: Context, name: string): boolean {
  const v = queryOne(ctx, name);
  return v !== undefined && v !== 'false' && v !== '0';
}

export interface Paging { page: number; size: number; limit: number; offset: number }

/** Kestra paging: `page` from 1, `size` (default 10, at most `maxSize`: 1000 unless told); the offset stays an exact integer. */
export function paging(ctx: Context, maxSize = 1000): Paging {
  const size = queryInt(ctx, 'size', 1, maxSize) ?? 10;
  const page = queryInt(ctx, 'page', 1, Math.floor(Number.MAX_SAFE_INTEGER / size)) ?? 1;
  return { page, size, limit: size, offset: (page - 1) * size };
}

/** Parses `key:value` labels; the value may itself contain colons. A key may not use a reserved name (`__proto__`...). */
export function parseLabels(values: string[], param = 'labels'): Label[] {
  return values.map((v) => {
    const i = v.indexOf(':');
    if (i <= 0) throw badRequest(`Invalid label '${v}': expected 'key:value'`, param);
    const key = v.slice(0, i);
    const reserved = reservedSegment(key);
    if (reserved !== undefined) throw badRequest(`Invalid label '${v}': the key '${key}' uses the reserved name '${reserved}'`, param);
    return { key, value: v.slice(i + 1) };
  });
}

export function labelsQuery(ctx: Context): Label[] {
  return parseLabels(queryList(ctx, 'labels', false));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON body's labels: a list of `{key, value}` (or a map, as Kestra also takes), each key a non-empty string that
 * is not a reserved name. Errors name `field` (and the item: `field[i]`). System labels are the caller's rule.
 */
export function parseLabelList(value: unknown, field: string): Label[] {
  const list = Array.isArray(value) ? value : isRecord(value) ? Object.entries(value).map(([key, v]) => ({ key, value: v })) : undefined;
  if (!list) throw badRequest(`\`${field}\` must be a list of {key, value} or a map`, field);
  return list.map((l: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(l) || typeof l.key !== 'string' || l.key === '') throw badRequest(`\`${at}\` needs a key`, at);
    const reserved = reservedSegment(l.key);
    if (reserved !== undefined) throw badRequest(`\`${l.key}\` uses the reserved name \`${reserved}\``, at);
    if (l.value !== undefined && l.value !== null && typeof l.value === 'object') throw badRequest(`\`${at}.value\` must be a string`, `${at}.value`);
    return { key: l.key, value: String(l.value ?? '') };
  });
}
