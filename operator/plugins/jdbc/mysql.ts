// Kestra's jdbc.mysql.Query and Queries task types: SQL against MySQL or MariaDB with bound parameters and the four
// fetch modes; TLS through the URL (`useSSL`, `sslMode`). The driver loads when a task runs.
import { definePlugin } from '../define.js';
import type { RunContext } from '../types.js';
import { checkZone } from './cells.js';
import { QUERIES_OUTPUTS, QUERY_OUTPUTS } from './postgresql.js';
import { queriesProps, queryProps, runQueries, runQuery } from './run.js';
import type { SqlSession } from './session.js';
import { parseJdbcUrl } from './url.js';

function opener(ctx: RunContext, props: { url: string; username?: string; password?: string; timeZoneId?: string }): () => Promise<SqlSession> {
  const url = parseJdbcUrl(props.url, 'mysql');
  if (props.timeZoneId !== undefined) checkZone(props.timeZoneId);
  return async () => {
    const [{ connectMysql }, { limitsFromEnv }] = await Promise.all([import('./mysql-session.js'), import('../../core/limits.js')]);
    return connectMysql({
      url, username: props.username, password: props.password,
      connectTimeoutMs: limitsFromEnv(process.env).jdbcConnectTimeoutMs,
      warn: (m) => ctx.logger.warn(m),
    });
  };
}

const TYPES_NOTE = 'Values come as Kestra gives them: DATE and TIME as ISO text, DATETIME as a local date-time, TIMESTAMP as a UTC instant '
  + '(`...Z`), DECIMAL and BIGINT as numbers when a double holds them exactly (else their exact text), TINYINT(1) and BIT(1) as booleans, '
  + 'JSON as text, binary columns as base64. `LOAD DATA LOCAL INFILE` is refused (Kestra\'s `inputFile` is not supported).';

export const mysqlQuery = definePlugin({
  type: 'jdbc.mysql.Query',
  title: 'MySQL query',
  description: `Runs one SQL statement against MySQL or MariaDB (\`jdbc:mysql://\` or \`jdbc:mariadb://\`) and returns its rows (fetchType FETCH_ONE, FETCH), streams them to an internal-storage file (STORE, any size) or drops them (NONE). ${TYPES_NOTE} The task's \`timeout\` and a kill cancel the statement on the server (KILL QUERY). \`timeZoneId\` is accepted for Kestra compatibility and checked, but MySQL values carry no zone to convert.`,
  properties: queryProps,
  outputs: QUERY_OUTPUTS,
  examples: [{
    title: 'Store a whole table as an ION file',
    code: `id: mysql_query
namespace: company.team
tasks:
  - id: export
    type: io.kestra.plugin.jdbc.mysql.Query
    url: jdbc:mysql://127.0.0.1:3306/shop
    username: "{{ secret('MYSQL_USERNAME') }}"
    password: "{{ secret('MYSQL_PASSWORD') }}"
    sql: SELECT * FROM orders WHERE created > :since
    parameters:
      since: "{{ trigger.date ?? execution.startDate }}"
    fetchType: STORE
`,
  }],
  run: (ctx, props) => runQuery(ctx, props, 'mysql', opener(ctx, props)),
});

export const mysqlQueries = definePlugin({
  type: 'jdbc.mysql.Queries',
  title: 'MySQL queries',
  description: `Runs several SQL statements (separated by \`;\`) against MySQL or MariaDB in order, in one transaction rolled back on failure unless \`transaction: false\` (DDL statements commit implicitly in MySQL); each statement that returns rows adds an entry to \`outputs\` per \`fetchType\`. ${TYPES_NOTE}`,
  properties: { ...queryProps, ...queriesProps },
  outputs: QUERIES_OUTPUTS,
  examples: [{
    title: 'Insert and count in one transaction',
    code: `id: mysql_queries
namespace: company.team
tasks:
  - id: load
    type: io.kestra.plugin.jdbc.mysql.Queries
    url: jdbc:mysql://127.0.0.1:3306/shop
    username: "{{ secret('MYSQL_USERNAME') }}"
    password: "{{ secret('MYSQL_PASSWORD') }}"
    sql: |
      INSERT INTO visits(page) VALUES (:page);
      SELECT count(*) AS n FROM visits;
    parameters:
      page: home
    fetchType: FETCH_ONE
`,
  }],
  run: (ctx, props) => runQueries(ctx, props, 'mysql', opener(ctx, props)),
});
