// PostgreSQL sessions of the jdbc tasks (`pg` with `pg-cursor`): JDBC URL parameters and Kestra's ssl properties
// mapped to node-postgres and TLS options, statements run through a server-side portal read `fetchSize` rows at a
// time, and result values converted as Kestra's PostgresCellConverter does (cells.ts).
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import Cursor from 'pg-cursor';
import pgTypes from 'pg-types';
import {
  byteaBase64, exactNumber, floatValue, kestraInterval, localDateTime, localTime, zonedDateTime, zonedTime, type Row,
} from './cells.js';
import { connectError, type Endpoint, type Next, type SqlSession } from './session.js';
import { SSL_MODES, type SslMode } from './ssl-modes.js';
import { param, unknownParams, type JdbcUrl } from './url.js';


export interface PostgresTlsProps {
  ssl?: boolean;
  sslMode?: SslMode;
  sslRootCert?: string;
  sslCert?: string;
  sslKey?: string;
  sslKeyPassword?: string;
}

export interface PostgresConnect {
  url: JdbcUrl;
  username?: string;
  password?: string;
  zone: string;
  connectTimeoutMs: number;
  tls: PostgresTlsProps;
  warn(message: string): void;
}

/** URL parameters understood (pgjdbc's names); a file path parameter is refused (the flow gives PEM text instead). */
const KNOWN = ['user', 'password', 'ssl', 'sslmode', 'currentSchema', 'ApplicationName', 'connectTimeout'];
const FILE_PARAMS = ['sslrootcert', 'sslcert', 'sslkey', 'sslfactory', 'sslpasswordcallback'];

type Parser = (text: string) => unknown;

// pg-types' typings describe arrayParser as a function; the module exports `{ create(source, transform) }`.
const arrayParser = pgTypes.arrayParser as unknown as { create(source: string, transform: (x: string | null) => unknown): { parse(): unknown[] } };

/** Type OIDs and their converters; array types convert each element the same way. */
function parsers(zone: string): Map<number, Parser> {
  const json: Parser = (t) => JSON.parse(t);
  const id: Parser = (t) => t;
  const scalar: [number, number | undefined, Parser][] = [
    // [oid, array oid, converter]
    [16, 1000, (t) => t === 't' || t === 'true'],
    [21, 1005, (t) => Number(t)],
    [23, 1007, (t) => Number(t)],
    [20, 1016, exactNumber],
    [26, 1028, (t) => Number(t)],
    [700, 1021, floatValue],
    [701, 1022, floatValue],
    [1700, 1231, exactNumber],
    [1082, 1182, id],
    [1083, 1183, localTime],
    [1266, 1270, (t) => zonedTime(t, zone)],
    [1114, 1115, localDateTime],
    [1184, 1185, (t) => zonedDateTime(t, zone)],
    [1186, 1187, kestraInterval],
    [114, 199, json],
    [3802, 3807, json],
    [17, 1001, byteaBase64],
    [2950, 2951, id],
    [25, 1009, id],
    [1043, 1015, id],
    [1042, 1014, id],
    [2278, undefined, () => null],
  ];
  const out = new Map<number, Parser>();
  for (const [oid, arrayOid, fn] of scalar) {
    out.set(oid, fn);
    if (arrayOid !== undefined) out.set(arrayOid, (t) => arrayParser.create(t, (x: string | null) => (x === null ? null : fn(x))).parse());
  }
  return out;
}

/** The node TLS options for Kestra's ssl properties and the URL's `ssl`/`sslmode`; undefined: no TLS. */
export function tlsOptions(url: JdbcUrl, tls: PostgresTlsProps): { mode: SslMode; options?: ConnectionOptions } {
  for (const p of FILE_PARAMS) {
    if (param(url, p) !== undefined) throw new Error(`Property 'url': the '${p}' parameter names a file; give the PEM text in the task's ssl properties (sslRootCert, sslCert, sslKey) instead`);
  }
  const urlMode = param(url, 'sslmode');
  const urlSsl = param(url, 'ssl');
  let mode: SslMode | undefined = tls.sslMode;
  if (!mode && urlMode !== undefined) {
    const m = urlMode.toUpperCase().replace(/-/g, '_');
    if (!(SSL_MODES as readonly string[]).includes(m)) throw new Error(`Property 'url': sslmode must be one of ${SSL_MODES.map((x) => x.toLowerCase().replace('_', '-')).join(', ')}, got '${urlMode}'`);
    mode = m as SslMode;
  }
  // pgjdbc: ssl=true without a mode verifies the server fully; nothing said: PREFER.
  if (!mode) mode = tls.ssl === true || urlSsl === 'true' || urlSsl === '' ? 'VERIFY_FULL' : 'PREFER';
  if (mode === 'DISABLE') return { mode };
  const options: ConnectionOptions = {
    rejectUnauthorized: mode === 'VERIFY_CA' || mode === 'VERIFY_FULL',
    ...(tls.sslRootCert ? { ca: tls.sslRootCert } : {}),
    ...(tls.sslCert ? { cert: tls.sslCert } : {}),
    ...(tls.sslKey ? { key: tls.sslKey } : {}),
    ...(tls.sslKeyPassword ? { passphrase: tls.sslKeyPassword } : {}),
    ...(mode === 'VERIFY_CA' ? { checkServerIdentity: () => undefined } : {}),
  };
  return { mode, options };
}

function clientConfig(o: PostgresConnect, ssl: ConnectionOptions | false): pg.ClientConfig {
  const schema = param(o.url, 'currentSchema');
  const connectTimeout = param(o.url, 'connectTimeout');
  // Sessions in UTC with ISO output: cells.ts converts timestamps with a zone into the task's timeZoneId.
  const options = ['-c TimeZone=UTC', '-c DateStyle=ISO', '-c IntervalStyle=iso_8601', '-c bytea_output=hex'];
  if (schema) options.push(`-c search_path=${schema.replace(/[^A-Za-z0-9_,$"]/g, '')}`);
  return {
    host: o.url.host,
    port: o.url.port,
    database: o.url.database ?? param(o.url, 'user') ?? o.username,
    user: o.username ?? param(o.url, 'user'),
    password: o.password ?? param(o.url, 'password'),
    ssl,
    application_name: param(o.url, 'ApplicationName') ?? 'flowpilot',
    connectionTimeoutMillis: connectTimeout ? Math.min(Number(connectTimeout) * 1000 || o.connectTimeoutMs, o.connectTimeoutMs) : o.connectTimeoutMs,
    options: options.join(' '),
  };
}

async function open(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  client.on('error', () => { /* reported by the query that fails */ });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
}

const notSsl = (err: unknown) => /does not support SSL/i.test(String((err as Error)?.message));
const needsSsl = (err: unknown) => /no pg_hba\.conf entry|SSL/i.test(String((err as Error)?.message));

export async function connectPostgres(o: PostgresConnect): Promise<SqlSession> {
  const unknown = unknownParams(o.url, [...KNOWN, ...FILE_PARAMS]);
  if (unknown.length) o.warn(`Ignored JDBC URL parameters (not supported here): ${unknown.join(', ')}`);
  const { mode, options } = tlsOptions(o.url, o.tls);
  const password = o.password ?? param(o.url, 'password');
  const base = clientConfig(o, options ?? false);
  const endpoint: Endpoint = { what: 'PostgreSQL', host: o.url.host, port: o.url.port, database: base.database, user: base.user };
  let config = base;
  let client: pg.Client;
  try {
    if (mode === 'ALLOW') {
      // libpq's allow: without TLS first, with it if the server insists.
      try { client = await open(config = { ...base, ssl: false }); } catch (err) {
        if (!needsSsl(err)) throw err;
        client = await open(config = { ...base, ssl: { ...options, rejectUnauthorized: false } });
      }
    } else if (mode === 'PREFER') {
      try { client = await open(config = { ...base, ssl: { ...options, rejectUnauthorized: false } }); } catch (err) {
        if (!notSsl(err)) throw err;
        client = await open(config = { ...base, ssl: false });
      }
    } else {
      client = await open(config);
    }
  } catch (err) {
    throw connectError(endpoint, err, password);
  }
  const types = { getTypeParser: typeParser(o.zone) };
  const c = client;
  return {
    async execute(sql, values, fetchSize, consume) {
      const cursor = c.query(new Cursor(sql, values.length ? values : undefined, { types }));
      let isResult = false;
      let ended = false; // the server ended the portal with an error: closing it again would wait forever
      try {
        for (;;) {
          const { rows, fields } = await new Promise<{ rows: Row[]; fields: number }>((res, rej) => {
            cursor.read(fetchSize, (err, rows, result) => {
              if (err) { ended = true; rej(err); } else res({ rows: rows as Row[], fields: result?.fields?.length ?? 0 });
            });
          });
          if (fields > 0) isResult = true;
          if (rows.length === 0) break;
          const next: Next = await consume(rows);
          if (next === 'stop' || rows.length < fetchSize) break;
        }
      } finally {
        if (!ended) await cursor.close().catch(() => {});
      }
      return isResult;
    },
    begin: async () => { await c.query('BEGIN'); },
    commit: async () => { await c.query('COMMIT'); },
    rollback: async () => { await c.query('ROLLBACK'); },
    async cancel() {
      const pid = (c as unknown as { processID?: number }).processID;
      if (!pid) return;
      const other = await open({ ...config, connectionTimeoutMillis: 5_000 });
      try { await other.query('SELECT pg_cancel_backend($1)', [pid]); } finally { await other.end().catch(() => {}); }
    },
    close: () => c.end().catch(() => {}),
  };
}

function typeParser(zone: string) {
  const table = parsers(zone);
  return (oid: number, format?: string) => {
    const fn = table.get(oid);
    if (fn && format !== 'binary') return (text: string) => fn(text);
    return pgTypes.getTypeParser(oid, (format ?? 'text') as 'text');
  };
}
