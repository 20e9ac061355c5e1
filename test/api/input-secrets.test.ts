// A password given as a plain STRING input (as Kestra users do) and used by several tasks: once the first task declares
// it a credential, the record stores it sealed, never in clear nor masked, so later tasks (and replays) still read it.
// The whole embedded service against a real PostgreSQL with password logins: the second Query fails to log in if it
// gets `******`.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPostgres, type Service } from '../support/services.js';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const PASSWORD = 'str1ng-input-Pa55';
const NS = 'company.inputs';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const isTerminal = (x: any) => ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(x?.state?.current);

let e: Embedded;
let db: Service;

beforeAll(async () => {
  db = await startPostgres({ passwordAuth: true });
  const admin = new pg.Client({ host: '127.0.0.1', port: db.port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE ROLE app LOGIN PASSWORD '${PASSWORD}'`);
  await admin.end();
  e = await startEmbedded();
  await e.createFlow(`id: two-queries
namespace: ${NS}
inputs:
  - id: url
    type: STRING
  - id: password
    type: STRING
  - id: settings
    type: JSON
tasks:
  - id: first
    type: io.kestra.plugin.jdbc.postgresql.Query
    url: "{{ inputs.url }}"
    username: app
    password: "{{ inputs.password }}"
    sql: SELECT 1 AS n
    fetchType: FETCH_ONE
  - id: second
    type: io.kestra.plugin.jdbc.postgresql.Query
    url: "{{ inputs.url }}"
    username: app
    password: "{{ inputs.password }}"
    sql: SELECT current_user AS who
    fetchType: FETCH_ONE
  - id: nested
    type: io.kestra.plugin.jdbc.postgresql.Query
    url: "{{ inputs.url }}"
    username: app
    password: "{{ inputs.settings.db.password }}"
    sql: SELECT 2 AS n
    fetchType: FETCH_ONE
  - id: script
    type: io.kestra.plugin.scripts.shell.Commands
    env:
      PW: "{{ inputs.password }}"
    commands:
      - echo "::{\\"outputs\\":{\\"pwSha\\":\\"$(printf %s "$PW" | sha256sum | cut -d' ' -f1)\\"}}::"
  - id: log
    type: io.kestra.plugin.core.log.Log
    message: "password={{ inputs.password }}"
  - id: echo
    type: io.kestra.plugin.core.debug.Return
    format: "{{ inputs.password }}"
`);
}, 120_000);

afterAll(async () => {
  await e?.close();
  await db?.stop();
});

async function run(body: Record<string, unknown>): Promise<any> {
  const started = await e.execute(NS, 'two-queries', 'create', body);
  return e.waitFor(started.id, isTerminal, 60_000);
}

const runOf = (exec: any, id: string) => exec.taskRunList.find((r: any) => r.taskId === id);

it('later tasks read the STRING input in clear; the record, the API and the logs never show it', async () => {
  const settings = { db: { user: 'app', password: PASSWORD }, pool: 2 };
  const done = await run({ url: `jdbc:postgresql://127.0.0.1:${db.port}/postgres`, password: PASSWORD, settings });
  const json = JSON.stringify(done);
  expect(done.state.current, json).toBe('SUCCESS');
  expect(runOf(done, 'second').outputs).toEqual({ row: { who: 'app' }, size: 1 });
  expect(runOf(done, 'nested').outputs).toEqual({ row: { n: 2 }, size: 1 });
  expect(runOf(done, 'script').outputs.vars.pwSha).toBe(sha(PASSWORD));

  // The API shows the sealed form of what held the password; the rest of the input as given.
  expect(json).not.toContain(PASSWORD);
  expect(done.inputs.password).toMatch(/^fpenc1:/);
  expect(done.inputs.settings).toMatchObject({ db: { user: 'app', password: expect.stringMatching(/^fpenc1:/) }, pool: 2 });
  // Outputs holding it stay masked (they are never read back as inputs).
  expect(runOf(done, 'echo').outputs).toEqual({ value: '******' });
  // What is stored (the store under the masking layer hands back the stored record).
  expect(JSON.stringify((await e.stores.executions.get(done.id))!.execution)).not.toContain(PASSWORD);
  await e.stores.logs.flush();
  const logs = JSON.stringify((await e.json(`/logs/${done.id}`)).body);
  expect(logs).toContain('password=******');
  expect(logs).not.toContain(PASSWORD);
});

it('a replay (sealed inputs copied, same original id) still logs in', async () => {
  const first = await run({ url: `jdbc:postgresql://127.0.0.1:${db.port}/postgres`, password: PASSWORD, settings: { db: { password: PASSWORD } } });
  expect(first.state.current).toBe('SUCCESS');
  const replay = await e.json(`/executions/${first.id}/replay?taskRunId=${runOf(first, 'second').id}`, { method: 'POST' });
  expect(replay.status, JSON.stringify(replay.body)).toBe(200);
  const done = await e.waitFor(replay.body.id, isTerminal, 60_000);
  expect(done.state.current, JSON.stringify(done)).toBe('SUCCESS');
  expect(done.inputs.password).toBe(first.inputs.password);
  expect(runOf(done, 'second').outputs).toEqual({ row: { who: 'app' }, size: 1 });
  expect(JSON.stringify(done)).not.toContain(PASSWORD);
});
