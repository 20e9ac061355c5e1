// The jdbc task types used from flows (flows/*.yaml) through the whole embedded service (API, controller, engine,
// runner) against a real PostgreSQL and a real MariaDB started by the test: outputs of one task feed the next.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMariaDB, startPostgres, type Service } from '../../../test/support/services.js';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';

const flow = (name: string) => readFileSync(new URL(`./flows/${name}`, import.meta.url), 'utf8');
const PASSWORD = 'flow-Pa55';

let e: Embedded;
let pgServer: Service;
let maria: Awaited<ReturnType<typeof startMariaDB>>;

beforeAll(async () => {
  [pgServer, maria] = await Promise.all([startPostgres({ passwordAuth: true }), startMariaDB()]);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  e = await startEmbedded({ PATH: process.env.PATH, SECRET_POSTGRES_PASSWORD: b64(PASSWORD), SECRET_MYSQL_PASSWORD: b64(maria.password) });
  const admin = new pg.Client({ host: '127.0.0.1', port: pgServer.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE ROLE kestra LOGIN PASSWORD '${PASSWORD}' SUPERUSER`);
  await admin.end();
}, 120_000);

afterAll(async () => {
  await e?.close();
  await Promise.all([pgServer?.stop(), maria?.stop()]);
});

const task = (exec: { taskRunList: { taskId: string; outputs?: Record<string, unknown> }[] }, id: string) =>
  exec.taskRunList.find((t) => t.taskId === id)!;

async function logMessages(id: string): Promise<string[]> {
  const { body } = await e.json(`/logs/${id}`);
  return (body as { message: string }[]).map((l) => l.message);
}

describe('jdbc tasks in flows (embedded engine)', () => {
  it('PostgreSQL: Queries, Query FETCH_ONE with a parameter from an output, a Log, Query STORE', async () => {
    await e.createFlow(flow('postgres-flow.yaml'));
    const started = await e.execute('company.jdbc', 'jdbc-postgres', 'create', { url: `jdbc:postgresql://127.0.0.1:${pgServer.port}/postgres` });
    const done = await e.waitFor(started.id, (x) => ['SUCCESS', 'FAILED', 'WARNING'].includes(x.state.current), 60_000);
    expect(done.state.current).toBe('SUCCESS');
    expect(task(done, 'setup').outputs).toEqual({ outputs: [{ row: { n: 2 }, size: 1 }] });
    expect(task(done, 'one').outputs).toEqual({ row: { name: 'desk', price: 120, added: '2024-03-02T09:30:00+01:00' }, size: 1 });
    expect(await logMessages(started.id)).toContain('desk costs 120');
    const all = task(done, 'all').outputs as { uri: string; size: number };
    expect(all.size).toBe(2);
    expect((await e.stores.storage.get(all.uri)).toString()).toBe('{"id":1,"name":"lamp"}\n{"id":2,"name":"desk"}\n');
    // The password (a secret, rendered into a secret property) never shows in what the execution wrote.
    expect(JSON.stringify(await logMessages(started.id))).not.toContain(PASSWORD);
  });

  it('MariaDB: Queries with parameters, Query FETCH, a Log', async () => {
    await e.createFlow(flow('mysql-flow.yaml'));
    const started = await e.execute('company.jdbc', 'jdbc-mysql', 'create', { url: maria.url, username: maria.user });
    const done = await e.waitFor(started.id, (x) => ['SUCCESS', 'FAILED', 'WARNING'].includes(x.state.current), 60_000);
    expect(done.state.current).toBe('SUCCESS');
    expect(task(done, 'setup').outputs).toEqual({ outputs: [] });
    expect(task(done, 'rows').outputs).toEqual({ rows: [{ id: 1, page: 'home' }, { id: 2, page: 'home' }], size: 2 });
    expect(await logMessages(started.id)).toContain('2 visits of home');
  });
});
