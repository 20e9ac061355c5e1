// jdbc.mysql.Query / Queries against a real MariaDB (Debian's, started by the test with its grant tables and an
// account with a password): Kestra's MySQL type mapping, bound parameters, fetch modes, the FETCH bound, STORE,
// transactions, kill by timeout on the server, and connection errors that never show the password.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMariaDB } from '../../../test/support/services.js';
import { makeTestContext, type TestContext } from '../testing.js';
import { mysqlQueries, mysqlQuery } from './mysql.js';

let db: Awaited<ReturnType<typeof startMariaDB>>;
const contexts: TestContext[] = [];

beforeAll(async () => { db = await startMariaDB(); }, 120_000);
afterAll(async () => { await db?.stop(); });
afterEach(async () => { for (const t of contexts.splice(0)) await t.cleanup(); });

async function run(def: typeof mysqlQuery, task: Record<string, unknown>, opts: { timeoutMs?: number } = {}) {
  const t = makeTestContext({ task: { id: 'q', type: def.type, url: db.url, username: db.user, password: db.password, ...task } });
  contexts.push(t);
  const timer = opts.timeoutMs ? setTimeout(() => t.controller.abort(), opts.timeoutMs) : undefined;
  try {
    return { result: await def.runnable.run(t.ctx), t };
  } finally {
    clearTimeout(timer);
  }
}

describe('jdbc.mysql against MariaDB', () => {
  it('creates tables and maps result values as Kestra does', async () => {
    const setup = await run(mysqlQueries, {
      sql: `CREATE TABLE mysql_types (id int, flag tinyint(1), bit1 bit(1), small smallint, big bigint, huge bigint unsigned,
              dec_v decimal(14,4), dbl double, d date, t time, dt datetime(6), ts timestamp(3) NULL, txt text, bin varbinary(8),
              js json, yr year);
            INSERT INTO mysql_types VALUES (1, 1, b'1', -5, 9007199254740993, 18446744073709551615, 2147483645.1234, 1.5,
              '2030-12-25', '04:05:30', '2004-10-19 10:23:54.999999', '2004-10-19 10:23:54.250', 'é text', X'DEADBEEF',
              '{"a": [1, 2]}', 2024);`,
      transaction: false,
    });
    expect(setup.result.error).toBeUndefined();
    const { result } = await run(mysqlQuery, { sql: 'SELECT * FROM mysql_types', fetchType: 'FETCH_ONE' });
    expect(result.outputs).toEqual({
      size: 1,
      row: {
        id: 1, flag: true, bit1: true, small: -5, big: '9007199254740993', huge: '18446744073709551615', dec_v: 2147483645.1234,
        dbl: 1.5, d: '2030-12-25', t: '04:05:30', dt: '2004-10-19T10:23:54.999999', ts: '2004-10-19T10:23:54.25Z', txt: 'é text',
        bin: Buffer.from('deadbeef', 'hex').toString('base64'), js: expect.stringMatching(/^\{"a": ?\[1, ?2\]\}$/), yr: 2024,
      },
    });
  });

  it('binds parameters through server-side prepared statements: an injection attempt is a value', async () => {
    await run(mysqlQueries, { sql: "CREATE TABLE accounts (id int PRIMARY KEY, name varchar(40)); INSERT INTO accounts VALUES (1, 'alice'), (2, 'bob')", transaction: false });
    const { result } = await run(mysqlQuery, {
      sql: "SELECT id, name, ':lit' AS lit FROM accounts WHERE name = :name OR id = :id ORDER BY id", parameters: { name: "x' OR '1'='1", id: 2 }, fetchType: 'FETCH',
    });
    expect(result.outputs).toEqual({ rows: [{ id: 2, name: 'bob', lit: ':lit' }], size: 1 });
    const drop = await run(mysqlQuery, { sql: 'SELECT :v AS v', parameters: { v: "'; DROP TABLE accounts; -- " }, fetchType: 'FETCH_ONE' });
    expect(drop.result.outputs).toEqual({ row: { v: "'; DROP TABLE accounts; -- " }, size: 1 });
    expect((await run(mysqlQuery, { sql: 'SELECT count(*) AS n FROM accounts', fetchType: 'FETCH_ONE' })).result.outputs).toEqual({ row: { n: 2 }, size: 1 });
  });

  it('FETCH past JDBC_FETCH_MAX_BYTES fails naming the setting; STORE streams all rows to a file', async () => {
    const sql = "SELECT seq AS n, REPEAT('x', 200) AS pad FROM seq_1_to_20000";
    const before = process.env.JDBC_FETCH_MAX_BYTES;
    process.env.JDBC_FETCH_MAX_BYTES = String(1024 * 1024);
    try {
      const fetched = await run(mysqlQuery, { sql, fetchType: 'FETCH', fetchSize: 500 });
      expect(fetched.result.state).toBe('FAILED');
      expect(fetched.result.error).toMatch(/JDBC_FETCH_MAX_BYTES/);
      const stored = await run(mysqlQuery, { sql, fetchType: 'STORE', fetchSize: 500 });
      expect(stored.result.outputs!.size).toBe(20000);
      const lines = (await stored.t.ctx.storage.get(stored.result.outputs!.uri as string)).toString().trimEnd().split('\n');
      expect(lines).toHaveLength(20000);
      expect(JSON.parse(lines[0])).toEqual({ n: 1, pad: 'x'.repeat(200) });
    } finally {
      if (before === undefined) delete process.env.JDBC_FETCH_MAX_BYTES; else process.env.JDBC_FETCH_MAX_BYTES = before;
    }
  });

  it('Queries: a failure rolls the transaction back; FETCH_ONE then more statements on the same connection', async () => {
    await run(mysqlQueries, { sql: 'CREATE TABLE t1 (id int) ENGINE=InnoDB', transaction: false });
    const bad = await run(mysqlQueries, { sql: 'INSERT INTO t1 VALUES (1); SELECT * FROM no_such_table' });
    expect(bad.result.state).toBe('FAILED');
    expect(bad.result.error).toMatch(/Statement 2 of 2 failed: .*no_such_table/);
    const ok = await run(mysqlQueries, { sql: 'INSERT INTO t1 VALUES (1), (2); SELECT id FROM t1 ORDER BY id; SELECT count(*) AS n FROM t1', fetchType: 'FETCH_ONE' });
    expect(ok.result.outputs).toEqual({ outputs: [{ row: { id: 1 }, size: 1 }, { row: { n: 2 }, size: 1 }] });
  });

  it('cancels the statement on the server when the task times out', async () => {
    const { result } = await run(mysqlQuery, { sql: 'SELECT SLEEP(60)', fetchType: 'FETCH' }, { timeoutMs: 500 });
    expect(result).toEqual({ state: 'FAILED', error: 'Task killed' });
    for (let i = 0; ; i++) {
      const { result: r } = await run(mysqlQuery, { sql: "SELECT count(*) AS n FROM information_schema.processlist WHERE info = 'SELECT SLEEP(60)'", fetchType: 'FETCH_ONE' });
      if ((r.outputs!.row as { n: number }).n === 0) break;
      if (i > 50) throw new Error('SLEEP still running on the server');
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  it('a wrong password fails naming host:port and the user, never the password; LOAD DATA LOCAL is refused', async () => {
    const { result, t } = await run(mysqlQuery, { sql: 'SELECT 1', password: 'wrong-Pa55word' });
    expect(result.state).toBe('FAILED');
    expect(result.error).toContain(`MySQL at 127.0.0.1:${db.port}/${db.database} as '${db.user}'`);
    expect(result.error).toMatch(/Access denied/);
    expect(result.error).not.toContain('wrong-Pa55word');
    expect(JSON.stringify(t.logs)).not.toContain('wrong-Pa55word');
    const local = await run(mysqlQuery, { sql: "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t1" });
    expect(local.result.state).toBe('FAILED');
  });
});
