// PostgreSQL polling trigger (`jdbc.postgresql.Trigger`): runs `sql` at every interval and starts an execution when
// rows come back. fetchType FETCH_ONE → `trigger.row`, FETCH → `trigger.rows` (a file at `trigger.uri` when the rows
// are too large to travel inline), STORE → `trigger.uri`, NONE → only `trigger.size`. JDBC URLs are accepted.
// TLS by `sslMode` (see pgConnectPlan), `timeZoneId` as the session time zone, named `:parameters` bound as a
// prepared statement. `fetchSize` (a JDBC batch-size hint) changes no result and has no effect here.
import pg from 'pg';
import { dict } from '../../core/keyed.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { PollingTriggerPlugin, TriggerContext } from '../types.js';
import { type SslMaterial, type SslMode, pgSsl, sslMaterial, sslModeOf } from './pg-tls.js';
import { storeRows, str, tooLargeInline } from './util.js';

/** The trigger's TLS settings: the mode (or `ssl`, the JDBC switch) and the PEM material. */
export interface SslSettings extends SslMaterial { mode?: SslMode; ssl?: boolean }

/** A connection plan: the client settings, and for ALLOW/PREFER the settings to retry with when the first is refused. */
export interface PgConnectPlan { config: pg.ClientConfig; fallback?: pg.ClientConfig; mode: SslMode }

/**
 * `jdbc:postgresql://host:port/db?user=u&password=p` (or a postgres:// URL) → pg client settings and TLS plan.
 * The TLS mode is `sslMode` (or the URL's `sslmode`); without one, `ssl: true` (or the URL's `ssl=true`) means
 * VERIFY_FULL as in the PostgreSQL JDBC driver, otherwise PREFER (the driver's default). Modes: see pg-tls.ts.
 */
export function pgConnectPlan(url: string, username?: string, password?: string, ssl: SslSettings = {}): PgConnectPlan {
  const raw = url.trim().replace(/^jdbc:/, '');
  const u = new URL(raw.replace(/^postgresql:/, 'postgres:'));
  if (u.protocol !== 'postgres:') throw new Error(`url must be jdbc:postgresql://host:port/database (got protocol ${u.protocol})`);
  const config: pg.ClientConfig = { host: decodeURIComponent(u.hostname).replace(/^\[|\]$/g, '') || '127.0.0.1', port: u.port ? Number(u.port) : 5432, connectionTimeoutMillis: 10_000 };
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (database) config.database = database;
  const user = username ?? (u.username ? decodeURIComponent(u.username) : u.searchParams.get('user') ?? undefined);
  const pass = password ?? (u.password ? decodeURIComponent(u.password) : u.searchParams.get('password') ?? undefined);
  if (user) config.user = user;
  if (pass !== undefined && pass !== null) config.password = pass;
  const urlMode = u.searchParams.get('sslmode');
  const urlSsl = u.searchParams.get('ssl');
  const mode: SslMode = ssl.mode ?? (urlMode ? sslModeOf(urlMode, 'url sslmode')
    : ssl.ssl === true || (urlSsl !== null && urlSsl !== 'false') ? 'VERIFY_FULL'
      : ssl.ssl === false || urlSsl === 'false' ? 'DISABLE' : 'PREFER');
  const { ssl: first, fallback } = pgSsl(mode, ssl);
  return { config: { ...config, ssl: first }, ...(fallback !== undefined ? { fallback: { ...config, ssl: fallback } } : {}), mode };
}

/** Whether a failed first attempt of ALLOW/PREFER should be retried with the other transport. */
function shouldFallBack(mode: SslMode, err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  if (mode === 'PREFER') return message.includes('does not support SSL');
  // ALLOW: the server refused the plain connection (pg_hba has only hostssl entries for it).
  return mode === 'ALLOW' && /no encryption|pg_hba\.conf/i.test(message);
}

/** Connects following the plan (a second attempt for ALLOW/PREFER); `timeZoneId` becomes the session time zone. */
export async function connectPg(plan: PgConnectPlan, timeZoneId?: string): Promise<pg.Client> {
  const open = async (config: pg.ClientConfig) => {
    const client = new pg.Client(config);
    client.on('error', () => { /* a dropped connection fails the query */ });
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return client;
  };
  let client: pg.Client;
  try {
    client = await open(plan.config);
  } catch (err) {
    if (!plan.fallback || !shouldFallBack(plan.mode, err)) throw err;
    client = await open(plan.fallback);
  }
  if (timeZoneId) {
    try {
      await client.query(`SELECT set_config('TimeZone', $1, false)`, [timeZoneId]);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new Error(`timeZoneId '${timeZoneId}': ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return client;
}

function sslSettings(ctx: TriggerContext): SslSettings {
  const t = ctx.trigger;
  const out: SslSettings = sslMaterial(ctx);
  const mode = str(ctx, t.sslMode, 'sslMode', false);
  if (mode) out.mode = sslModeOf(mode, `triggers.${t.id}.sslMode`);
  if (t.ssl !== undefined && t.ssl !== null) out.ssl = String(ctx.render(t.ssl)) === 'true';
  return out;
}

function parametersOf(ctx: TriggerContext, field: string): Record<string, unknown> {
  if (ctx.trigger.parameters === undefined || ctx.trigger.parameters === null) return {};
  const rendered = ctx.render(ctx.trigger.parameters) as unknown;
  if (typeof rendered !== 'object' || rendered === null || Array.isArray(rendered)) throw new Error(`${field} must be a map of name → value`);
  return rendered as Record<string, unknown>;
}

/**
 * Named parameters (`:name` in `sql`, values from `parameters`) → a PostgreSQL prepared statement with `$n`
 * placeholders: values are bound, never pasted into the SQL. Only names present in `parameters` are replaced, and
 * never inside quoted strings or identifiers, comments, or `::type` casts.
 */
export function bindParameters(sql: string, parameters: Record<string, unknown>): { text: string; values: unknown[] } {
  const names = Object.keys(parameters);
  if (names.length === 0) return { text: sql, values: [] };
  const index = new Map<string, number>();
  const values: unknown[] = [];
  const token = /'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|::|:([A-Za-z_][A-Za-z0-9_]*)/g;
  const text = sql.replace(token, (match, name: string | undefined) => {
    if (!name || !Object.hasOwn(parameters, name)) return match; // own keys only: `:constructor` is not a parameter
    let n = index.get(name);
    if (n === undefined) {
      const v = parameters[name];
      values.push(v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v);
      n = values.length;
      index.set(name, n);
    }
    return `$${n}`;
  });
  const unused = names.filter((n) => !index.has(n));
  if (unused.length) throw new Error(`parameters ${unused.map((n) => `'${n}'`).join(', ')} not used in sql (write :${unused[0]})`);
  return { text, values };
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

/** Dates as ISO strings, bytes as base64: rows become plain JSON (prototype-free: the query chose the column names). */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  const out = dict();
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
    const field = (name: string) => `triggers.${t.id}.${name}`;
    const plan = pgConnectPlan(str(ctx, t.url, 'url')!, str(ctx, t.username, 'username', false), str(ctx, t.password, 'password', false), sslSettings(ctx));
    const { text, values } = bindParameters(str(ctx, t.sql, 'sql')!, parametersOf(ctx, field('parameters')));
    const timeZoneId = str(ctx, t.timeZoneId, 'timeZoneId', false);
    // fetchSize is the JDBC driver's batch-size hint: every row is read in any case, so it changes no result and is
    // accepted without effect (node-postgres reads a result in one go).
    if (ctx.signal.aborted) return undefined;
    const client = await connectPg(plan, timeZoneId);
    const onAbort = () => { void client.end(); };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let rows: Record<string, unknown>[];
    try {
      rows = (await client.query(text, values)).rows.map(plain);
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
