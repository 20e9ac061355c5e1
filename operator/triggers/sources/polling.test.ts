// Polling triggers end to end with real services: a real node HTTP server, a real PostgreSQL, a real S3-protocol server
// (s3rver). Each found event becomes exactly one execution with the expected `trigger.*`; failing polls are logged with
// secrets masked and retried; objects are moved/deleted only after their execution exists.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'minio';
import pg from 'pg';
import S3rver from 's3rver';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startPostgres, testCertificates, type Service } from '../../../test/support/services.js';
import { startTriggeredExecution } from '../create.js';
import { bindParameters, pgConnectPlan } from './postgres-query.js';
import { flowYaml, startHarness, waitFor, type Harness } from './test-harness.js';

let h: Harness | undefined;
afterEach(async () => { await h?.close(); h = undefined; });

const count = async (flowId: string) => (await h!.executions(flowId)).length;
const settle = () => new Promise((r) => setTimeout(r, 700));

describe('HTTP trigger', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  let ready = false;
  const listen = () => new Promise<void>((res) => server.listen(port, '127.0.0.1', () => res()));
  beforeAll(async () => {
    port = await freePort();
    server = createServer((req, res) => {
      hits++;
      if (!ready) { res.writeHead(503).end('not yet'); return; }
      ready = false; // one success only
      res.writeHead(200, { 'content-type': 'application/json', 'x-seen-auth': String(req.headers.authorization) }).end('{"price":99}');
    });
    await listen();
  });
  afterAll(() => new Promise<void>((res) => server.close(() => res())));

  it('starts one execution when the condition holds, with body, code and headers; survives a server restart', async () => {
    h = await startHarness({ env: { SECRET_API_TOKEN: 'tok-123456' } });
    await h.save(flowYaml('http_poll', `id: http
type: io.kestra.plugin.core.http.Trigger
uri: http://127.0.0.1:${port}/price
headers:
  Authorization: "Bearer {{ secret('API_TOKEN') }}"
responseCondition: "{{ response.statusCode == 200 and json(response.body).price < 100 }}"
interval: PT0.1S`));
    await waitFor(() => hits >= 2, 'polls answered 503');
    expect(await count('http_poll')).toBe(0);
    ready = true;
    const [exec] = await waitFor(async () => { const e = await h!.executions('http_poll'); return e.length === 1 && e; }, 'one execution');
    const v = exec!.trigger!.variables!;
    expect(v.code).toBe(200);
    expect(v.statusCode).toBe(200);
    expect(JSON.parse(v.body as string)).toEqual({ price: 99 });
    expect((v.headers as Record<string, string[]>)['x-seen-auth']).toEqual(['Bearer tok-123456']);
    // Server gone: polls fail and are retried; back on the same port, the trigger fires again.
    await new Promise<void>((res) => { server.close(() => res()); server.closeAllConnections(); });
    await waitFor(() => h!.logs.some((l) => l.includes('poll failed')), 'a failed poll logged');
    await listen();
    ready = true;
    await waitFor(async () => (await count('http_poll')) === 2, 'execution after the server restart');
    expect(h.logs.join('\n')).not.toContain('tok-123456');
  });

  it('masks secrets in the logs of a failing poll and retries it next interval', async () => {
    h = await startHarness({ env: { SECRET_BAD: Buffer.from('bad\nsecret-value-42').toString('base64') } });
    await h.save(flowYaml('http_bad', `id: http
type: ai.service.plugin.core.http.Trigger
uri: http://127.0.0.1:${port}/
headers:
  X-Token: "{{ secret('BAD') }}"
interval: PT0.1S`));
    await waitFor(() => h!.logs.filter((l) => l.includes('poll failed')).length >= 2, 'two failed polls');
    const text = h.logs.join('\n');
    expect(text).toContain('******');
    expect(text).not.toContain('secret-value-42');
  });
});

describe('HTTP trigger with hostile response headers', () => {
  it('response headers named `constructor` or `__proto__` are ordinary keys of trigger.headers', async () => {
    const hostile = createServer((_req, res) => {
      res.setHeader('constructor', 'c');
      res.setHeader('__proto__', 'p');
      res.end('ok');
    });
    const hostilePort = await freePort();
    await new Promise<void>((res) => hostile.listen(hostilePort, '127.0.0.1', () => res()));
    try {
      h = await startHarness();
      await h.save(flowYaml('http_hostile', `id: http
type: ai.service.plugin.core.http.Trigger
uri: http://127.0.0.1:${hostilePort}/
interval: PT0.1S`));
      const [exec] = await waitFor(async () => { const e = await h!.executions('http_hostile'); return e.length > 0 && e; }, 'an execution', 20_000);
      const headers = exec!.trigger!.variables!.headers as Record<string, string[]>;
      expect(headers.constructor).toEqual(['c']);
      expect(Object.keys(headers)).toContain('__proto__');
    } finally {
      await new Promise<void>((res) => { hostile.close(() => res()); hostile.closeAllConnections(); });
    }
  });
});

describe('HTTP trigger encryptBody', () => {
  it('encryptBody: true is refused when the flow is saved, naming the field', async () => {
    h = await startHarness();
    await expect(h.save(flowYaml('http_enc_literal', 'id: http\ntype: io.kestra.plugin.core.http.Trigger\nuri: http://127.0.0.1:1/\nencryptBody: true')))
      .rejects.toThrow(/triggers\[0\]\.encryptBody: encrypted trigger outputs are not supported/);
  });
});

describe('PostgreSQL query trigger', () => {
  let db: Service;
  let client: pg.Client;
  beforeAll(async () => {
    db = await startPostgres();
    client = new pg.Client({ host: '127.0.0.1', port: db.port, user: 'postgres', database: 'postgres' });
    await client.connect();
    await client.query('CREATE TABLE events (id serial PRIMARY KEY, name text, done boolean DEFAULT false, at timestamptz DEFAULT now())');
    await client.query('CREATE TABLE big (n int)');
  }, 120_000);
  afterAll(async () => { await client.end(); await db.stop(); });

  it('accepts JDBC URLs', () => {
    expect(pgConnectPlan('jdbc:postgresql://db.local:6543/app?user=u&password=p%40ss').config).toMatchObject({ host: 'db.local', port: 6543, database: 'app', user: 'u', password: 'p@ss' });
    expect(pgConnectPlan('jdbc:postgresql://127.0.0.1/', 'me', 'pw').config).toMatchObject({ host: '127.0.0.1', port: 5432, user: 'me', password: 'pw' });
  });

  it('fires once per batch of rows found (FETCH, FETCH_ONE, NONE), never when no row comes back', async () => {
    h = await startHarness();
    const url = `jdbc:postgresql://127.0.0.1:${db.port}/postgres`;
    const consume = (fetchType: string) => `id: watch
type: io.kestra.plugin.jdbc.postgresql.Trigger
url: ${url}
username: postgres
sql: UPDATE events SET done = true WHERE NOT done AND name LIKE '${fetchType}-%' RETURNING id, name, at
fetchType: ${fetchType}
interval: PT0.1S`;
    await h.save(flowYaml('pg_fetch', consume('FETCH')));
    await h.save(flowYaml('pg_one', consume('FETCH_ONE')));
    await h.save(flowYaml('pg_none', consume('NONE')));
    await settle();
    expect(await count('pg_fetch') + await count('pg_one') + await count('pg_none')).toBe(0);
    await client.query(`INSERT INTO events (name) VALUES ('FETCH-a'), ('FETCH-b'), ('FETCH_ONE-c'), ('NONE-d'), ('NONE-e'), ('NONE-f')`);
    const [fetch] = await waitFor(async () => { const e = await h!.executions('pg_fetch'); return e.length === 1 && e; }, 'FETCH execution');
    const rows = fetch!.trigger!.variables!.rows as { name: string; at: string }[];
    expect(rows.map((r) => r.name).sort()).toEqual(['FETCH-a', 'FETCH-b']);
    expect(typeof rows[0]!.at).toBe('string');
    expect(fetch!.trigger!.variables!.size).toBe(2);
    const [one] = await waitFor(async () => { const e = await h!.executions('pg_one'); return e.length === 1 && e; }, 'FETCH_ONE execution');
    expect((one!.trigger!.variables!.row as { name: string }).name).toBe('FETCH_ONE-c');
    const [none] = await waitFor(async () => { const e = await h!.executions('pg_none'); return e.length === 1 && e; }, 'NONE execution');
    expect(none!.trigger!.variables).toEqual({ size: 3 });
    await settle();
    expect([await count('pg_fetch'), await count('pg_one'), await count('pg_none')]).toEqual([1, 1, 1]);
  });

  it('stores large results as a file (trigger.uri) with FETCH above the inline limit and with STORE', async () => {
    h = await startHarness();
    await client.query('INSERT INTO big SELECT g FROM generate_series(1, 1500) g');
    await h.save(flowYaml('pg_big', `id: watch
type: ai.service.plugin.jdbc.postgresql.Trigger
url: postgres://127.0.0.1:${db.port}/postgres
username: postgres
sql: DELETE FROM big RETURNING n
fetchType: FETCH
interval: PT0.1S`));
    const [exec] = await waitFor(async () => { const e = await h!.executions('pg_big'); return e.length === 1 && e; }, 'big execution');
    const v = exec!.trigger!.variables!;
    expect(v.rows).toBeUndefined();
    expect(v.size).toBe(1500);
    const lines = (await h.stores.storage.get(v.uri as string)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { n: number });
    expect(lines.length).toBe(1500);
    expect(lines.map((l) => l.n).sort((a, b) => a - b)[1499]).toBe(1500);
    await client.query(`INSERT INTO events (name) VALUES ('STORE-x')`);
    await h.save(flowYaml('pg_store', `id: watch
type: ai.service.plugin.jdbc.postgresql.Trigger
url: jdbc:postgresql://127.0.0.1:${db.port}/postgres
username: postgres
sql: DELETE FROM events WHERE name = 'STORE-x' RETURNING name
fetchType: STORE
interval: PT0.1S`));
    const [stored] = await waitFor(async () => { const e = await h!.executions('pg_store'); return e.length === 1 && e; }, 'STORE execution');
    expect(stored!.trigger!.variables!.size).toBe(1);
    expect(JSON.parse((await h.stores.storage.get(stored!.trigger!.variables!.uri as string)).toString('utf8'))).toEqual({ name: 'STORE-x' });
  });
  it('timeZoneId is the session time zone; parameters are bound as a prepared statement', async () => {
    h = await startHarness();
    await h.save(flowYaml('pg_tz', `id: watch
type: io.kestra.plugin.jdbc.postgresql.Trigger
url: jdbc:postgresql://127.0.0.1:${db.port}/postgres
username: postgres
sql: "SELECT current_setting('TimeZone') AS tz, to_char(now(), 'OF') AS offset, :who::text AS who, ':who' AS literal WHERE :n::int = 2"
timeZoneId: Asia/Kolkata
parameters:
  who: "O'Brien"
  n: 2
fetchType: FETCH_ONE
interval: PT1H`));
    const [exec] = await waitFor(async () => { const e = await h!.executions('pg_tz'); return e.length === 1 && e; }, 'time zone execution');
    expect(exec!.trigger!.variables!.row).toEqual({ tz: 'Asia/Kolkata', offset: '+05:30', who: "O'Brien", literal: ':who' });
  });

  it('parameters: only known names outside quotes and casts are replaced; unknown ones are an error', () => {
    expect(bindParameters(`SELECT :a, ':a', "x:a", x::text, :b -- :a\n`, { a: 1, b: { k: 1 } })).toEqual({ text: `SELECT $1, ':a', "x:a", x::text, $2 -- :a\n`, values: [1, '{"k":1}'] });
    expect(() => bindParameters('SELECT 1', { a: 1 })).toThrow(/'a' not used in sql/);
  });
});

describe('PostgreSQL query trigger over TLS', () => {
  let db: Service;
  let ca: string;
  let otherCa: string;
  beforeAll(async () => {
    // The certificate names localhost only: connecting to 127.0.0.1 fails the host name check (not the chain).
    const certs = testCertificates();
    ({ ca, otherCa } = certs);
    db = await startPostgres({ tls: { cert: certs.cert, key: certs.key, hostsslOnly: true } });
  }, 120_000);
  afterAll(async () => { await db?.stop(); });

  const env = () => ({ SECRET_PG_CA: Buffer.from(ca).toString('base64'), SECRET_OTHER_CA: Buffer.from(otherCa).toString('base64') });
  const trig = (host: string, extra: string) => `id: watch
type: io.kestra.plugin.jdbc.postgresql.Trigger
url: jdbc:postgresql://${host}:${db.port}/postgres
username: postgres
sql: SELECT ssl::text AS ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()
fetchType: FETCH_ONE
interval: PT0.2S
${extra}`;
  const fired = async (flowId: string) => {
    const [e] = await waitFor(async () => { const x = await h!.executions(flowId); return x.length > 0 && x; }, `${flowId} execution`, 60_000);
    expect(e!.trigger!.variables!.row).toEqual({ ssl: 'true' });
  };
  const failsWith = async (flowId: string, pattern: RegExp) => {
    await waitFor(() => h!.logs.some((l) => l.includes('poll failed') && pattern.test(l)), `${flowId} failure ${String(pattern)}`, 60_000);
    expect(await count(flowId)).toBe(0);
  };

  it('VERIFY_FULL with the right CA and host name connects and fires; a wrong CA or a host name not in the certificate fails and creates nothing', async () => {
    h = await startHarness({ env: env() });
    await h.save(flowYaml('tls_full_ok', trig('localhost', `sslMode: VERIFY_FULL\nsslRootCert: "{{ secret('PG_CA') }}"`)));
    await h.save(flowYaml('tls_full_wrong_ca', trig('localhost', `sslMode: VERIFY_FULL\nsslRootCert: "{{ secret('OTHER_CA') }}"`)));
    await h.save(flowYaml('tls_full_wrong_host', trig('127.0.0.1', `sslMode: VERIFY_FULL\nsslRootCert: "{{ secret('PG_CA') }}"`)));
    await fired('tls_full_ok');
    await failsWith('tls_full_wrong_ca', /self[- ]signed|unable to (get|verify)/i);
    await failsWith('tls_full_wrong_host', /127\.0\.0\.1 is not in the cert's list|does not match/i);
    expect(h.logs.join('\n')).not.toContain('BEGIN CERTIFICATE');
  }, 120_000);

  it('VERIFY_CA checks the chain but not the host name; REQUIRE and PREFER do not verify; DISABLE is refused by a hostssl-only server; ALLOW falls back to TLS', async () => {
    h = await startHarness({ env: env() });
    await h.save(flowYaml('tls_ca_ok', trig('127.0.0.1', `sslMode: VERIFY_CA\nsslRootCert: "{{ secret('PG_CA') }}"`)));
    await h.save(flowYaml('tls_ca_wrong', trig('127.0.0.1', `sslMode: VERIFY_CA\nsslRootCert: "{{ secret('OTHER_CA') }}"`)));
    await h.save(flowYaml('tls_require', trig('127.0.0.1', 'sslMode: REQUIRE')));
    await h.save(flowYaml('tls_prefer', trig('127.0.0.1', 'sslMode: PREFER')));
    await h.save(flowYaml('tls_allow', trig('127.0.0.1', 'sslMode: ALLOW')));
    await h.save(flowYaml('tls_disable', trig('127.0.0.1', 'sslMode: DISABLE')));
    for (const f of ['tls_ca_ok', 'tls_require', 'tls_prefer', 'tls_allow']) await fired(f);
    await failsWith('tls_ca_wrong', /self[- ]signed|unable to (get|verify)/i);
    await failsWith('tls_disable', /no pg_hba\.conf entry.*no encryption/i);
  }, 120_000);

  it('ssl: true without sslMode verifies fully (the JDBC driver\'s meaning); PEM fields must be PEM', () => {
    const plan = pgConnectPlan(`jdbc:postgresql://db.local/app`, 'u', 'p', { ssl: true, rootCert: ca, cert: 'C', key: 'K', keyPassword: 'pw' });
    expect(plan.mode).toBe('VERIFY_FULL');
    expect(plan.config.ssl).toMatchObject({ rejectUnauthorized: true, ca, cert: 'C', key: 'K', passphrase: 'pw' });
    expect(pgConnectPlan('jdbc:postgresql://db.local/app?sslmode=verify-ca').mode).toBe('VERIFY_CA');
    expect(pgConnectPlan('jdbc:postgresql://db.local/app').mode).toBe('PREFER');
    expect(pgConnectPlan('jdbc:postgresql://db.local/app', undefined, undefined, { mode: 'DISABLE' }).config.ssl).toBe(false);
  });

  it('a non-PEM sslRootCert fails the poll naming the field', async () => {
    h = await startHarness();
    await h.save(flowYaml('tls_path', trig('127.0.0.1', 'sslMode: VERIFY_FULL\nsslRootCert: /etc/ssl/ca.pem')));
    await failsWith('tls_path', /triggers\.watch\.sslRootCert must be PEM content/);
  });
});

describe('S3 (minio) trigger', () => {
  let s3: S3rver;
  let dir: string;
  let endpoint: string;
  let s3c: Client;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 's3rver-'));
    s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: 'inbox' }, { name: 'archive' }] });
    const addr = await s3.run();
    endpoint = `http://127.0.0.1:${addr.port}`;
    s3c = new Client({ endPoint: '127.0.0.1', port: addr.port, useSSL: false, accessKey: 'S3RVER', secretKey: 'S3RVER', pathStyle: true, region: 'us-east-1' });
  });
  afterAll(async () => { await s3.close(); rmSync(dir, { recursive: true, force: true }); });

  const keys = async (bucket: string, prefix = '') => {
    const out: string[] = [];
    for await (const item of s3c.listObjectsV2(bucket, prefix, true)) out.push((item as { name: string }).name);
    return out.sort();
  };
  const trig = (action: string, prefix: string, extra = '') => `id: files
type: io.kestra.plugin.minio.Trigger
endpoint: ${endpoint}
accessKeyId: S3RVER
secretKeyId: "{{ secret('S3_SECRET') }}"
region: us-east-1
bucket: inbox
prefix: ${prefix}
action: ${action}
interval: PT0.1S
${extra}`;

  it('MOVE: one execution per batch of new objects, moved only after it exists; an object uploaded again fires again', async () => {
    h = await startHarness({ env: { SECRET_S3_SECRET: 'S3RVER' } });
    await s3c.putObject('inbox', 'move/a.csv', Buffer.from('a,1\n'));
    await s3c.putObject('inbox', 'move/b.csv', Buffer.from('b,2\n'));
    await h.save(flowYaml('s3_move', trig('MOVE', 'move/', 'moveTo:\n  bucket: archive\n  key: done')));
    const [exec] = await waitFor(async () => { const e = await h!.executions('s3_move'); return e.length === 1 && e; }, 'MOVE execution');
    const objects = exec!.trigger!.variables!.objects as { key: string; size: number; uri: string; etag: string }[];
    expect(objects.map((o) => o.key).sort()).toEqual(['move/a.csv', 'move/b.csv']);
    expect(objects.every((o) => o.size === 4 && o.etag)).toBe(true);
    expect((await h.stores.storage.get(objects.find((o) => o.key === 'move/a.csv')!.uri)).toString()).toBe('a,1\n');
    // MOVE is a copy then a delete per object: wait for both halves of the last one.
    await waitFor(async () => (await keys('archive', 'done/')).length === 2 && (await keys('inbox', 'move/')).length === 0, 'objects moved');
    expect(await keys('archive', 'done/')).toEqual(['done/a.csv', 'done/b.csv']);
    // The same object uploaded again (same key, same content, so the same etag) is a new event.
    await s3c.putObject('inbox', 'move/a.csv', Buffer.from('a,1\n'));
    const execs = await waitFor(async () => { const e = await h!.executions('s3_move'); return e.length === 2 && e; }, 'second execution');
    const second = execs.find((e) => e.id !== exec!.id)!;
    expect((second.trigger!.variables!.objects as { key: string }[]).map((o) => o.key)).toEqual(['move/a.csv']);
  });

  it('a crash between create and MOVE: the restarted trigger finds the same execution and only then moves', async () => {
    let crashes = 0;
    h = await startHarness({
      env: { SECRET_S3_SECRET: 'S3RVER' },
      create: async (deps, start) => {
        await startTriggeredExecution(deps.stores, start, deps.renderer);
        crashes++;
        throw new Error('crash after create');
      },
    });
    await s3c.putObject('inbox', 'crash/z.csv', Buffer.from('z'));
    await h.save(flowYaml('s3_crash', trig('MOVE', 'crash/', 'moveTo:\n  key: crashed')));
    await waitFor(() => crashes >= 2, 'crashing polls');
    expect(await keys('inbox', 'crash/')).toEqual(['crash/z.csv']);
    await h.restartComponent();
    await waitFor(async () => (await keys('inbox', 'crashed/')).length === 1 && (await keys('inbox', 'crash/')).length === 0, 'moved after restart');
    expect(await count('s3_crash')).toBe(1);
  });

  it('DELETE removes the objects after creation (an upload again fires again); NONE leaves them and never fires twice for one object', async () => {
    h = await startHarness({ env: { SECRET_S3_SECRET: 'S3RVER' } });
    await s3c.putObject('inbox', 'del/x.txt', Buffer.from('x'));
    await s3c.putObject('inbox', 'keep/y.txt', Buffer.from('y'));
    await h.save(flowYaml('s3_delete', trig('DELETE', 'del/')));
    await h.save(flowYaml('s3_none', trig('NONE', 'keep/')));
    await waitFor(async () => (await count('s3_delete')) === 1 && (await count('s3_none')) === 1, 'both executions');
    await waitFor(async () => (await keys('inbox', 'del/')).length === 0, 'deleted');
    await settle();
    expect(await keys('inbox', 'keep/')).toEqual(['keep/y.txt']);
    expect([await count('s3_delete'), await count('s3_none')]).toEqual([1, 1]);
    // The same object uploaded again after its DELETE is a new event (S3 dates have second resolution: a later second).
    await new Promise((r) => setTimeout(r, 1_100));
    await s3c.putObject('inbox', 'del/x.txt', Buffer.from('x'));
    await waitFor(async () => (await count('s3_delete')) === 2 && (await keys('inbox', 'del/')).length === 0, 'the re-upload triggered and deleted');
  });

  it('marker (start after), delimiter (only directly under the prefix) and filter (FILES, DIRECTORY) select the objects', async () => {
    h = await startHarness({ env: { SECRET_S3_SECRET: 'S3RVER' } });
    for (const k of ['mk/a.txt', 'mk/b.txt', 'mk/c.txt', 'mk/sub/d.txt']) await s3c.putObject('inbox', k, Buffer.from(k));
    await s3c.putObject('inbox', 'mk/dir/', Buffer.alloc(0));
    await h.save(flowYaml('s3_marker', trig('NONE', 'mk/', 'marker: mk/a.txt\ndelimiter: /\nfilter: FILES')));
    await h.save(flowYaml('s3_dirs', trig('NONE', 'mk/', 'filter: DIRECTORY')));
    await h.save(flowYaml('s3_both', trig('NONE', 'mk/')));
    const keysOf = async (flowId: string) => {
      const [e] = await waitFor(async () => { const x = await h!.executions(flowId); return x.length === 1 && x; }, `${flowId} execution`);
      return (e!.trigger!.variables!.objects as { key: string }[]).map((o) => o.key).sort();
    };
    expect(await keysOf('s3_marker')).toEqual(['mk/b.txt', 'mk/c.txt']);
    expect(await keysOf('s3_dirs')).toEqual(['mk/dir/']);
    expect(await keysOf('s3_both')).toEqual(['mk/a.txt', 'mk/b.txt', 'mk/c.txt', 'mk/dir/', 'mk/sub/d.txt']);
  });

  it('a MOVE trigger without moveTo is rejected when the flow is saved, naming the field', async () => {
    h = await startHarness();
    await expect(h.save(flowYaml('s3_invalid', trig('MOVE', 'x/')))).rejects.toThrow(/moveTo/);
    await expect(h.save(flowYaml('s3_invalid', trig('EXPLODE', 'x/')))).rejects.toThrow(/action/);
  });
});
