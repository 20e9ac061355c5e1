// PostgreSQL polling trigger (`jdbc.postgresql.Trigger`): runs `sql` at every interval and starts an execution when
// rows come back. fetchType FETCH_ONE → `trigger.row`, FETCH → `trigger.rows` (a file at `trigger.uri` when the rows
// are too large to travel inline), STORE → `trigger.uri`, NONE → only `trigger.size`. JDBC URLs are accepted.
import pg from 'pg';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { PollingTriggerPlugin, TriggerContext } from '../types.js';
import { storeRows, str, tooLargeInline } from './util.js';

/** `jdbc:postgresql://host:port/db?user=u&password=p` (or a postgres:// URL) → pg client settings. */
export function pgClientConfig(url: string, username?: string, password?: string): pg.ClientConfig {
  const raw = url.trim().replace(/^jdbc:/, '');
  const u = new URL(raw.replace(/^postgresql:/, 'postgres:'));
  if (u.protocol !== 'postgres:') throw new Error(`url must be jdbc:postgresql://host:port/database (got protocol ${u.protocol})`);
  const config: pg.ClientConfig = { host: decodeURIComponent(u.hostname) || '127.0.0.1', port: u.port ? Number(u.port) : 5432, connectionTimeoutMillis: 10_000 };
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (database) config.database = database;
  const user = username ?? (u.username ? decodeURIComponent(u.username) : u.searchParams.get('user') ?? undefined);
  const pass = password ?? (u.password ? decodeURIComponent(u.password) : u.searchParams.get('password') ?? undefined);
  if (user) config.user = user;
  if (pass !== undefined && pass !== null) config.password = pass;
  const ssl = u.searchParams.get('sslmode') ?? u.searchParams.get('ssl');
  if (ssl && ssl !== 'disable' && ssl !== 'false') config.ssl = { rejectUnauthorized: ssl === 'verify-full' || ssl === 'verify-ca' };
  return config;
}

export type FetchType = 'FETCH_ONE' | 'FETCH' | 'STORE' | 'NONE';

export function fetchTypeOf(ctx: TriggerContext): FetchType {
  const t = ctx.trigger;
  if (t.fetchType !== undefined) return String(ctx.render(t.fetchType)).toUpperCase() as FetchType;
  if (t.fetchOne === true) return 'FETCH_ONE';
  if (t.store === true) return 'STORE';
  if (t.fetch === true) return 'FETCH';
  return 'NONE';
}

/** Dates as ISO strings, bytes as base64: rows become plain JSON. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Date ? v.toISOString() : Buffer.isBuffer(v) ? v.toString('base64') : v;
  return out;
}

export const postgresQueryTrigger: PollingTriggerPlugin = {
  kind: 'polling',
  type: PLUGIN_TRIGGER_TYPES.postgresQuery,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.postgresQuery),
  defaultInterval: 'PT60S',
  async poll(ctx) {
    const t = ctx.trigger;
    const config = pgClientConfig(str(ctx, t.url, 'url')!, str(ctx, t.username, 'username', false), str(ctx, t.password, 'password', false));
    const sql = str(ctx, t.sql, 'sql')!;
    const client = new pg.Client(config);
    client.on('error', () => { /* a dropped connection fails the query below */ });
    const onAbort = () => { void client.end(); };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let rows: Record<string, unknown>[];
    try {
      await client.connect();
      rows = (await client.query(sql)).rows.map(plain);
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      await client.end().catch(() => undefined);
    }
    if (rows.length === 0) return undefined;
    const fetchType = fetchTypeOf(ctx);
    const variables: Record<string, unknown> = { size: rows.length };
    if (fetchType === 'FETCH_ONE') variables.row = rows[0];
    else if (fetchType === 'STORE' || (fetchType === 'FETCH' && tooLargeInline(rows))) variables.uri = await storeRows(ctx, rows);
    else if (fetchType === 'FETCH') variables.rows = rows;
    return { event: { variables } };
  },
};
