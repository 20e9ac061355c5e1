// Kestra's jdbc.postgresql.Query and Queries task types: SQL against PostgreSQL with bound parameters, the four fetch
// modes and TLS (ssl, sslMode, PEM root certificate and client certificate). The driver loads when a task runs.
import { definePlugin, p, type OutputDoc } from '../define.js';
import type { RunContext } from '../types.js';
import { checkZone } from './cells.js';
import { queriesProps, queryProps, runQueries, runQuery } from './run.js';
import type { SqlSession } from './session.js';
import { SSL_MODES } from './ssl-modes.js';
import { parseJdbcUrl } from './url.js';

const tlsProps = {
  ssl: p.boolean().describe('Use TLS (without `sslMode`: verify the server\'s certificate and host name, as pgjdbc does).'),
  sslMode: p.enum(SSL_MODES).describe('TLS mode (libpq\'s): DISABLE, ALLOW, PREFER (the default), REQUIRE (encrypt only), VERIFY_CA, VERIFY_FULL.'),
  sslRootCert: p.string().describe('PEM certificate(s) of the CA the server\'s certificate must chain to (VERIFY_CA, VERIFY_FULL).'),
  sslCert: p.string().describe('PEM client certificate, for servers that authenticate clients by certificate.'),
  sslKey: p.string().secret().describe('PEM private key of the client certificate.'),
  sslKeyPassword: p.string().secret().describe('Password of the client key.'),
};

const properties = { ...queryProps, ...tlsProps };

type Props = { url: string; username?: string; password?: string; timeZoneId?: string } & { [K in keyof typeof tlsProps]: unknown };

function opener(ctx: RunContext, props: Props): () => Promise<SqlSession> {
  const url = parseJdbcUrl(props.url, 'postgresql');
  const zone = props.timeZoneId ?? 'UTC';
  checkZone(zone);
  return async () => {
    const [{ connectPostgres }, { limitsFromEnv }] = await Promise.all([import('./postgres-session.js'), import('../../core/limits.js')]);
    return connectPostgres({
      url, username: props.username, password: props.password, zone,
      connectTimeoutMs: limitsFromEnv(process.env).jdbcConnectTimeoutMs,
      tls: props as Parameters<typeof connectPostgres>[0]['tls'],
      warn: (m) => ctx.logger.warn(m),
    });
  };
}

export const QUERY_OUTPUTS: Record<string, OutputDoc> = {
  row: { type: 'object', description: 'The first row (fetchType FETCH_ONE), null when there is none.' },
  rows: { type: 'array', description: 'All rows (fetchType FETCH).' },
  uri: { type: 'uri', description: 'The `.ion` file of the rows, one JSON object a line (fetchType STORE).' },
  size: { type: 'integer', description: 'Rows fetched (FETCH_ONE, FETCH, STORE).' },
};

export const QUERIES_OUTPUTS: Record<string, OutputDoc> = {
  outputs: { type: 'array', description: 'One entry per statement that returned rows, in order, each with `row`, `rows`, `uri` and `size` as for Query.' },
};

const TYPES_NOTE = 'Values come as Kestra gives them: dates, times and timestamps as ISO 8601 text (with a zone: in `timeZoneId`), '
  + 'numeric and bigint as numbers when a double holds them exactly (else their exact text), json/jsonb as values, arrays as lists, '
  + 'bytea as base64, intervals as `P1Y2M3DT4H5M6S`.';

export const postgresQuery = definePlugin({
  type: 'jdbc.postgresql.Query',
  title: 'PostgreSQL query',
  description: `Runs one SQL statement against PostgreSQL and returns its rows (fetchType FETCH_ONE, FETCH), streams them to an internal-storage file (STORE, any size) or drops them (NONE). ${TYPES_NOTE} The task's \`timeout\` and a kill cancel the statement on the server.`,
  properties,
  outputs: QUERY_OUTPUTS,
  examples: [{
    title: 'Fetch one row with a bound parameter',
    code: `id: pg_query
namespace: company.team
tasks:
  - id: fetch
    type: io.kestra.plugin.jdbc.postgresql.Query
    url: jdbc:postgresql://127.0.0.1:5432/shop
    username: "{{ secret('POSTGRES_USERNAME') }}"
    password: "{{ secret('POSTGRES_PASSWORD') }}"
    sql: SELECT id, name FROM customers WHERE id = :id
    parameters:
      id: 42
    fetchType: FETCH_ONE
`,
  }],
  run: (ctx, props) => runQuery(ctx, props, 'postgresql', opener(ctx, props)),
});

export const postgresQueries = definePlugin({
  type: 'jdbc.postgresql.Queries',
  title: 'PostgreSQL queries',
  description: `Runs several SQL statements (separated by \`;\`) against PostgreSQL in order, in one transaction rolled back on failure unless \`transaction: false\`; each statement that returns rows adds an entry to \`outputs\` per \`fetchType\`. ${TYPES_NOTE}`,
  properties: { ...properties, ...queriesProps },
  outputs: QUERIES_OUTPUTS,
  examples: [{
    title: 'Create a table, insert and read back in one transaction',
    code: `id: pg_queries
namespace: company.team
tasks:
  - id: init
    type: io.kestra.plugin.jdbc.postgresql.Queries
    url: jdbc:postgresql://127.0.0.1:5432/shop
    username: "{{ secret('POSTGRES_USERNAME') }}"
    password: "{{ secret('POSTGRES_PASSWORD') }}"
    sql: |
      CREATE TABLE IF NOT EXISTS products(id int PRIMARY KEY, name text);
      INSERT INTO products VALUES (1, 'lamp') ON CONFLICT (id) DO NOTHING;
      SELECT * FROM products;
    fetchType: FETCH
`,
  }],
  run: (ctx, props) => runQueries(ctx, props, 'postgresql', opener(ctx, props)),
});
