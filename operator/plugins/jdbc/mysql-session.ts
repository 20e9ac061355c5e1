// MySQL and MariaDB sessions of the jdbc tasks (`mysql2`): JDBC URL parameters mapped to mysql2 options, statements
// streamed row by row (text protocol without parameters, server-side prepared statements with them: values are bound
// by the server), and result values converted as Kestra's MysqlCellConverter does (cells.ts). `LOAD DATA LOCAL` is
// refused: the server could otherwise read files of the worker.
import mysql from 'mysql2';
import type { FieldPacket } from 'mysql2';
import { exactNumber, localDateTime, type Row } from './cells.js';
import { connectError, type Endpoint, type SqlSession } from './session.js';
import { param, unknownParams, type JdbcUrl } from './url.js';

export interface MysqlConnect {
  url: JdbcUrl;
  username?: string;
  password?: string;
  connectTimeoutMs: number;
  warn(message: string): void;
}

/** URL parameters understood (Connector/J's names); `allowMultiQueries` is moot (Queries splits the script itself). */
const KNOWN = ['user', 'password', 'useSSL', 'sslMode', 'requireSSL', 'connectTimeout', 'allowMultiQueries', 'characterEncoding', 'useUnicode'];
const SSL_MODES = ['DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'];
const BINARY_CHARSET = 63;
const T = mysql.Types as unknown as Record<string, number>;

type Convert = (v: unknown) => unknown;

const asBase64: Convert = (v) => (Buffer.isBuffer(v) ? v.toString('base64') : v);

/** The converter of one column, from its metadata. */
function columnConverter(f: FieldPacket): Convert {
  const type = f.columnType ?? f.type;
  const binary = f.characterSet === BINARY_CHARSET;
  switch (type) {
    case T.DECIMAL: case T.NEWDECIMAL: case T.LONGLONG:
      return (v) => (typeof v === 'string' ? exactNumber(v) : v);
    case T.TINY:
      // TINYINT(1) is Connector/J's boolean.
      return f.columnLength === 1 ? (v) => (typeof v === 'number' ? v !== 0 : v) : (v) => v;
    case T.BIT:
      return f.columnLength === 1 ? (v) => (Buffer.isBuffer(v) ? v[0] !== 0 : v) : asBase64;
    case T.DATETIME:
      return (v) => (typeof v === 'string' ? localDateTime(v) : v);
    case T.TIMESTAMP:
      // The session runs in UTC (time_zone '+00:00'): the value is the instant.
      return (v) => (typeof v === 'string' && /^\d{4}-/.test(v) ? `${localDateTime(v)}Z` : v);
    case T.JSON:
      return (v) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);
    case T.TINY_BLOB: case T.MEDIUM_BLOB: case T.LONG_BLOB: case T.BLOB: case T.VAR_STRING: case T.STRING: case T.GEOMETRY:
      return binary ? asBase64 : (v) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);
    default:
      return asBase64;
  }
}

function sslOptions(url: JdbcUrl): mysql.SslOptions | undefined {
  const mode = param(url, 'sslMode')?.toUpperCase();
  if (mode !== undefined && !SSL_MODES.includes(mode)) throw new Error(`Property 'url': sslMode must be one of ${SSL_MODES.join(', ')}, got '${param(url, 'sslMode')}'`);
  const useSsl = param(url, 'useSSL') ?? param(url, 'requireSSL');
  if (mode === 'DISABLED' || (mode === undefined && useSsl !== 'true')) return undefined;
  // Verified modes check the server against the system's CAs (no trust store property here); REQUIRED only encrypts.
  if (mode === 'VERIFY_CA') return { rejectUnauthorized: true, checkServerIdentity: () => undefined } as mysql.SslOptions;
  if (mode === 'VERIFY_IDENTITY') return { rejectUnauthorized: true };
  return { rejectUnauthorized: false };
}

function asPromise<T>(fn: (cb: (err: Error | null, v?: T) => void) => void): Promise<T> {
  return new Promise((res, rej) => fn((err, v) => (err ? rej(err) : res(v as T))));
}

export async function connectMysql(o: MysqlConnect): Promise<SqlSession> {
  const unknown = unknownParams(o.url, KNOWN);
  if (unknown.length) o.warn(`Ignored JDBC URL parameters (not supported here): ${unknown.join(', ')}`);
  const user = o.username ?? param(o.url, 'user');
  const password = o.password ?? param(o.url, 'password');
  const connectTimeout = Number(param(o.url, 'connectTimeout'));
  const config: mysql.ConnectionOptions = {
    host: o.url.host,
    port: o.url.port,
    database: o.url.database,
    user,
    password,
    ssl: sslOptions(o.url),
    connectTimeout: connectTimeout > 0 ? Math.min(connectTimeout, o.connectTimeoutMs) : o.connectTimeoutMs,
    charset: 'utf8mb4',
    timezone: 'Z',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    jsonStrings: true,
    multipleStatements: false,
    flags: ['-LOCAL_FILES'],
  };
  const endpoint: Endpoint = { what: 'MySQL', host: o.url.host, port: o.url.port, database: o.url.database, user };
  const open = async () => {
    const conn = mysql.createConnection(config);
    conn.on('error', () => { /* reported by the statement that fails */ });
    try {
      await asPromise<void>((cb) => conn.connect((err) => cb(err)));
      await asPromise((cb) => conn.query("SET time_zone = '+00:00'", cb));
      return conn;
    } catch (err) {
      conn.destroy();
      throw err;
    }
  };
  let conn: mysql.Connection;
  try { conn = await open(); } catch (err) { throw connectError(endpoint, err, password); }
  const c = conn;
  const simple = (sql: string) => asPromise((cb) => c.query(sql, cb)).then(() => undefined);
  return {
    async execute(sql, values, fetchSize, consume) {
      const cmd = values.length ? c.execute(sql, values.map(bindValue) as (string | number | Buffer | null)[]) : c.query({ sql });
      const stream = cmd.stream({ highWaterMark: fetchSize });
      let converters: [string, Convert][] | undefined;
      // A statement without a result set announces `fields` too, with none.
      stream.on('fields', (fields: FieldPacket[] | undefined) => { if (fields) converters = fields.map((f) => [f.name, columnConverter(f)]); });
      let batch: Row[] = [];
      let wanted = true;
      for await (const raw of stream) {
        // Statements without a result set stream one OK packet: not a row. Once the consumer stopped, the rest of the
        // result is read and dropped (the connection serves the next statement), never kept.
        if (!converters || !wanted) continue;
        const row: Row = {};
        for (const [name, fn] of converters) {
          const v = (raw as Row)[name];
          row[name] = v === null || v === undefined ? null : fn(v);
        }
        batch.push(row);
        if (batch.length >= fetchSize) {
          wanted = (await consume(batch)) === 'more';
          batch = [];
        }
      }
      if (converters && wanted && batch.length) await consume(batch);
      return converters !== undefined;
    },
    begin: () => simple('START TRANSACTION'),
    commit: () => simple('COMMIT'),
    rollback: () => simple('ROLLBACK'),
    async cancel() {
      const other = await open();
      try { await asPromise((cb) => other.query(`KILL QUERY ${Number(c.threadId)}`, cb)); } finally { other.destroy(); }
    },
    close: async () => {
      await asPromise<void>((cb) => c.end((err) => cb(err ?? null))).catch(() => c.destroy());
    },
  };
}

/** A parameter value for a prepared statement: lists and maps as JSON text, booleans as 1/0, the rest as is. */
function bindValue(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'object' && v !== null && !Buffer.isBuffer(v)) return JSON.stringify(v);
  return v;
}
