// jdbc.postgresql.Query / Queries against a real PostgreSQL (Debian's, started by the test with password logins) and a
// second one that only accepts TLS with a certificate the test generates: Kestra's type mapping, bound parameters
// (an injection attempt stays a value), the fetch modes, the FETCH bound, STORE streaming, transactions, kill by
// timeout on the server, and connection errors that name host:port but never the password.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, testCertificates, type Service, type TestCertificates } from '../../../test/support/services.js';
import { makeTestContext, type TestContext } from '../testing.js';
import { postgresQueries, postgresQuery } from './postgresql.js';

let server: Service;
let tlsServer: Service;
let certs: TestCertificates;
const PASSWORD = 's3cr3t-Pa55';
let url: string;
let admin: pg.Client;
const contexts: TestContext[] = [];

beforeAll(async () => {
  certs = testCertificates();
  [server, tlsServer] = await Promise.all([
    startPostgres({ passwordAuth: true }),
    startPostgres({ tls: { cert: certs.cert, key: certs.key, hostsslOnly: true } }),
  ]);
  url = `jdbc:postgresql://127.0.0.1:${server.port}/postgres`;
  admin = new pg.Client({ host: '127.0.0.1', port: server.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE ROLE kestra LOGIN PASSWORD '${PASSWORD}' SUPERUSER`);
  await admin.query(`
    CREATE TABLE pgsql_types (
      concert_id int, available boolean, a char(4), b varchar(30), c text, d varchar(10), play_time smallint,
      library_record bigint, floatn_test float8, real_test real, numeric_test numeric, numeric_big numeric, date_type date,
      time_type time, timez_type timetz, timestamp_type timestamp, timestampz_type timestamptz, interval_type interval,
      pay_by_quarter int[], schedule text[][], json_type json, jsonb_type jsonb, blob_type bytea, uuid_type uuid);
    INSERT INTO pgsql_types VALUES (1, true, 'four', 'This is a varchar', 'This is a text column data', NULL, 32767,
      9223372036854775807, 9223372036854776000, 3.5, 2147483645.1234, 12345678901234567890.123456789, '2030-12-25',
      '04:05:30', '11:05:06+00', '2004-10-19 10:23:54.999999', '2004-10-19 10:23:54.25+04', '10 years 4 months 5 days 10 seconds',
      '{100,200,300}', '{{meeting,lunch},{training,presentation}}', '{"color":"red","value":"#f00"}',
      '{"color":"blue","value":"#0f0"}', '\\xDEADBEEF', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
    CREATE TABLE accounts (id int PRIMARY KEY, name text);
    INSERT INTO accounts VALUES (1, 'alice'), (2, 'bob');
  `);
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await Promise.all([server?.stop(), tlsServer?.stop()]);
});

afterEach(async () => {
  for (const t of contexts.splice(0)) await t.cleanup();
});

type Def = typeof postgresQuery;

async function run(def: Def, task: Record<string, unknown>, opts: { timeoutMs?: number } = {}) {
  const t = makeTestContext({ task: { id: 'q', type: def.type, url, username: 'kestra', password: PASSWORD, ...task } });
  contexts.push(t);
  const timer = opts.timeoutMs ? setTimeout(() => t.controller.abort(), opts.timeoutMs) : undefined;
  try {
    const result = await def.runnable.run(t.ctx);
    return { result, t };
  } finally {
    clearTimeout(timer);
  }
}

describe('jdbc.postgresql.Query', () => {
  it('maps result values as Kestra does (FETCH_ONE, timeZoneId)', async () => {
    const { result } = await run(postgresQuery, { sql: 'SELECT * FROM pgsql_types', fetchType: 'FETCH_ONE', timeZoneId: 'Europe/Paris' });
    expect(result.state).toBe('SUCCESS');
    expect(result.outputs!.size).toBe(1);
    expect(result.outputs!.row).toEqual({
      concert_id: 1, available: true, a: 'four', b: 'This is a varchar', c: 'This is a text column data', d: null, play_time: 32767,
      library_record: '9223372036854775807', floatn_test: 9223372036854776000, real_test: 3.5, numeric_test: 2147483645.1234,
      numeric_big: '12345678901234567890.123456789', date_type: '2030-12-25', time_type: '04:05:30',
      timez_type: '12:05:06', // 11:05:06 UTC in Paris on 1970-01-01 (winter time), as Kestra converts it
      timestamp_type: '2004-10-19T10:23:54.999999', timestampz_type: '2004-10-19T08:23:54.25+02:00',
      interval_type: 'P10Y4M5DT0H0M10S', pay_by_quarter: [100, 200, 300],
      schedule: [['meeting', 'lunch'], ['training', 'presentation']],
      json_type: { color: 'red', value: '#f00' }, jsonb_type: { color: 'blue', value: '#0f0' },
      blob_type: Buffer.from('deadbeef', 'hex').toString('base64'), uuid_type: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    });
    expect(result.metrics).toEqual([{ name: 'fetch.size', type: 'counter', value: 1, tags: { fetch: 'true', store: 'false' } }]);
  });

  it('binds parameters: an injection attempt is a value, `::` casts and quoted colons are left alone', async () => {
    const { result } = await run(postgresQuery, {
      sql: "SELECT id, name, ':not_a_param' AS lit, :id::text AS cast FROM accounts WHERE name = :name OR id = :id ORDER BY id",
      parameters: { name: "x' OR '1'='1", id: 2 }, fetchType: 'FETCH',
    });
    expect(result.error).toBeUndefined();
    expect(result.outputs!.rows).toEqual([{ id: 2, name: 'bob', lit: ':not_a_param', cast: '2' }]);
    const drop = await run(postgresQuery, { sql: 'SELECT :v AS v', parameters: { v: "'; DROP TABLE accounts; --" }, fetchType: 'FETCH_ONE' });
    expect(drop.result.outputs!.row).toEqual({ v: "'; DROP TABLE accounts; --" });
    expect((await admin.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n).toBe(2);
  });

  it('refuses a parameter the SQL uses but `parameters` lacks, and several statements', async () => {
    expect((await run(postgresQuery, { sql: 'SELECT :missing', parameters: {} })).result)
      .toEqual({ state: 'FAILED', error: "SQL uses the parameter ':missing' but 'parameters' does not set it" });
    const multi = await run(postgresQuery, { sql: 'SELECT 1; SELECT 2' });
    expect(multi.result.state).toBe('FAILED');
    expect(multi.result.error).toContain('Use the Queries task');
  });

  it('FETCH past JDBC_FETCH_MAX_BYTES fails naming the setting; STORE streams the same result to a row file', async () => {
    const sql = "SELECT g AS n, repeat('x', 200) AS pad FROM generate_series(1, 20000) g";
    const before = process.env.JDBC_FETCH_MAX_BYTES;
    process.env.JDBC_FETCH_MAX_BYTES = String(1024 * 1024);
    try {
      const fetched = await run(postgresQuery, { sql, fetchType: 'FETCH', fetchSize: 500 });
      expect(fetched.result.state).toBe('FAILED');
      expect(fetched.result.error).toMatch(/JDBC_FETCH_MAX_BYTES/);
      expect(fetched.result.error).toMatch(/fetchType STORE/);
      const stored = await run(postgresQuery, { sql, fetchType: 'STORE', fetchSize: 500 });
      expect(stored.result.state).toBe('SUCCESS');
      expect(stored.result.outputs!.size).toBe(20000);
      const text = (await stored.t.ctx.storage.get(stored.result.outputs!.uri as string)).toString('utf8');
      const lines = text.trimEnd().split('\n');
      expect(lines).toHaveLength(20000);
      expect(JSON.parse(lines[19999])).toEqual({ n: 20000, pad: 'x'.repeat(200) });
      expect(stored.result.outputs!.uri).toMatch(/^kestra:\/\/\/.*\.ion$/);
    } finally {
      if (before === undefined) delete process.env.JDBC_FETCH_MAX_BYTES; else process.env.JDBC_FETCH_MAX_BYTES = before;
    }
  });

  it('refuses a fetchSize over JDBC_MAX_FETCH_SIZE', async () => {
    const { result } = await run(postgresQuery, { sql: 'SELECT 1', fetchSize: 1_000_000 });
    expect(result.state).toBe('FAILED');
    expect(result.error).toMatch(/JDBC_MAX_FETCH_SIZE/);
  });

  it('reads the deprecated fetchOne/store booleans as Kestra does; NONE returns nothing', async () => {
    expect((await run(postgresQuery, { sql: 'SELECT id FROM accounts ORDER BY id', fetchOne: true })).result.outputs).toEqual({ row: { id: 1 }, size: 1 });
    expect((await run(postgresQuery, { sql: 'SELECT id FROM accounts' })).result.outputs).toEqual({});
    expect((await run(postgresQuery, { sql: 'SELECT id FROM accounts WHERE false', fetchType: 'FETCH_ONE' })).result.outputs).toEqual({ row: null, size: 0 });
  });

  it('cancels the statement on the server when the task times out', async () => {
    const { result } = await run(postgresQuery, { sql: 'SELECT pg_sleep(60)', fetchType: 'FETCH' }, { timeoutMs: 500 });
    expect(result).toEqual({ state: 'FAILED', error: 'Task killed' });
    // The backend stopped sleeping (cancelled), it did not run on after the task ended.
    for (let i = 0; ; i++) {
      const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'");
      if (rows[0].n === 0) break;
      if (i > 50) throw new Error('pg_sleep still running on the server');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('a wrong password fails naming host:port and the user, never the password', async () => {
    const { result, t } = await run(postgresQuery, { sql: 'SELECT 1', password: 'wrong-Pa55word' });
    expect(result.state).toBe('FAILED');
    expect(result.error).toContain(`PostgreSQL at 127.0.0.1:${server.port}/postgres as 'kestra'`);
    expect(result.error).toContain('password authentication failed');
    expect(result.error).not.toContain('wrong-Pa55word');
    expect(JSON.stringify(t.logs)).not.toContain('wrong-Pa55word');
    const refused = await run(postgresQuery, { sql: 'SELECT 1', url: 'jdbc:postgresql://127.0.0.1:1/db' });
    expect(refused.result.error).toMatch(/^Cannot connect to PostgreSQL at 127\.0\.0\.1:1\/db as 'kestra': .*ECONNREFUSED/);
  });

  it('refuses a URL of another database kind and file-path TLS parameters', async () => {
    expect((await run(postgresQuery, { url: 'jdbc:mysql://h/db', sql: 'SELECT 1' })).result.error).toMatch(/jdbc:mysql URL/);
    expect((await run(postgresQuery, { url: `${url}?sslrootcert=/etc/passwd`, sql: 'SELECT 1' })).result.error).toMatch(/names a file/);
  });
});

describe('jdbc.postgresql.Queries', () => {
  it('runs statements in one transaction with one output per result; a failure rolls all back', async () => {
    const ok = await run(postgresQueries, {
      sql: "CREATE TABLE q1 (id int); INSERT INTO q1 VALUES (:a), (:b); SELECT * FROM q1 ORDER BY id; SELECT 'semi;colon' AS s, $$a;b$$ AS d",
      parameters: { a: 1, b: 2 }, fetchType: 'FETCH',
    });
    expect(ok.result.state).toBe('SUCCESS');
    expect(ok.result.outputs).toEqual({ outputs: [{ rows: [{ id: 1 }, { id: 2 }], size: 2 }, { rows: [{ s: 'semi;colon', d: 'a;b' }], size: 1 }] });
    const bad = await run(postgresQueries, { sql: 'INSERT INTO q1 VALUES (3); SELECT * FROM no_such_table' });
    expect(bad.result.state).toBe('FAILED');
    expect(bad.result.error).toMatch(/Statement 2 of 2 failed: .*no_such_table/);
    expect((await admin.query('SELECT count(*)::int AS n FROM q1')).rows[0].n).toBe(2);
    const noTx = await run(postgresQueries, { sql: 'INSERT INTO q1 VALUES (3); SELECT * FROM no_such_table', transaction: false });
    expect(noTx.result.state).toBe('FAILED');
    expect((await admin.query('SELECT count(*)::int AS n FROM q1')).rows[0].n).toBe(3);
  });

  it('STORE writes one file per result statement', async () => {
    const { result, t } = await run(postgresQueries, { sql: 'SELECT 1 AS x; SELECT id FROM accounts ORDER BY id', fetchType: 'STORE' });
    const outs = (result.outputs as { outputs: { uri: string; size: number }[] }).outputs;
    expect(outs.map((o) => o.size)).toEqual([1, 2]);
    expect((await t.ctx.storage.get(outs[1].uri)).toString()).toBe('{"id":1}\n{"id":2}\n');
  });
});

describe('jdbc.postgresql TLS (self-signed CA generated by the test)', () => {
  const tlsUrl = (host: string) => `jdbc:postgresql://${host}:${tlsServer.port}/postgres`;
  const tlsRun = (task: Record<string, unknown>) => run(postgresQuery, { username: 'postgres', password: undefined, sql: 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()', fetchType: 'FETCH_ONE', ...task });

  it('VERIFY_FULL with the CA connects over TLS; another CA or a host name mismatch is refused', async () => {
    expect((await tlsRun({ url: tlsUrl('localhost'), sslMode: 'VERIFY_FULL', sslRootCert: certs.ca })).result.outputs).toEqual({ row: { ssl: true }, size: 1 });
    const wrongCa = await tlsRun({ url: tlsUrl('localhost'), sslMode: 'VERIFY_FULL', sslRootCert: certs.otherCa });
    expect(wrongCa.result.state).toBe('FAILED');
    expect(wrongCa.result.error).toMatch(/certificate/i);
    const wrongHost = await tlsRun({ url: tlsUrl('127.0.0.1'), sslMode: 'VERIFY_FULL', sslRootCert: certs.ca });
    expect(wrongHost.result.error).toMatch(/IP: 127\.0\.0\.1 is not in the cert's list|does not match/);
  });

  it('VERIFY_CA skips the host name; REQUIRE only encrypts; ssl=true in the URL verifies fully; DISABLE is refused by the server', async () => {
    expect((await tlsRun({ url: tlsUrl('127.0.0.1'), sslMode: 'VERIFY_CA', sslRootCert: certs.ca })).result.outputs).toEqual({ row: { ssl: true }, size: 1 });
    expect((await tlsRun({ url: tlsUrl('127.0.0.1'), sslMode: 'REQUIRE' })).result.outputs).toEqual({ row: { ssl: true }, size: 1 });
    expect((await tlsRun({ url: `${tlsUrl('127.0.0.1')}?ssl=true` })).result.state).toBe('FAILED');
    expect((await tlsRun({ url: `${tlsUrl('localhost')}?ssl=true`, sslRootCert: certs.ca })).result.outputs).toEqual({ row: { ssl: true }, size: 1 });
    const plain = await tlsRun({ url: tlsUrl('127.0.0.1'), sslMode: 'DISABLE' });
    expect(plain.result.error).toMatch(/no pg_hba\.conf entry.*no encryption/);
  });
});
