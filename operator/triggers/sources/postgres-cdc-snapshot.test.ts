// PostgreSQL row-change trigger, snapshotMode against a real PostgreSQL: INITIAL emits the existing rows as READ then
// the live changes, once across restarts and across a crash in the middle of the snapshot; ALWAYS snapshots at every
// start; NEVER only streams; INITIAL_ONLY snapshots once and leaves no slot; column filters; unsupported Debezium
// properties are rejected when the flow is saved, naming the field.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startPostgres, type Service } from '../../../test/support/services.js';
import type { Execution } from '../../core/types.js';
import { FlowValidationError, type ValidationIssue } from '../../model/errors.js';
import { parseFlow } from '../../model/index.js';
import { startTriggeredExecution } from '../create.js';
import { flowYaml, startHarness, waitFor, type Harness } from './test-harness.js';

let db: Service;
let client: pg.Client;
let h: Harness | undefined;

beforeAll(async () => {
  db = await startPostgres();
  client = new pg.Client({ host: '127.0.0.1', port: db.port, user: 'postgres', database: 'postgres' });
  await client.connect();
}, 120_000);
afterAll(async () => { await client.end(); await db.stop(); });
afterEach(async () => { await h?.close(); h = undefined; });

/** A table `name` (id primary key, item text) with rows 1..n. */
async function table(name: string, n: number, extra = ''): Promise<void> {
  await client.query(`CREATE TABLE ${name} (id int PRIMARY KEY, item text${extra})`);
  if (n) await client.query(`INSERT INTO ${name} (id, item) SELECT g, 'row' || g FROM generate_series(1, ${n}) g`);
}

const trigger = (slot: string, mode: string, more = '') => `id: cdc
type: io.kestra.plugin.debezium.postgres.RealtimeTrigger
hostname: 127.0.0.1
port: "${db.port}"
username: postgres
database: postgres
slotName: ${slot}
publicationName: ${slot}_pub
tables: [public.${slot}]
snapshotMode: ${mode}${more ? `\n${more}` : ''}`;

const vars = (e: Execution) => e.trigger!.variables! as { operation: string; table: string; data: Record<string, unknown>; before?: Record<string, unknown> };
const summary = (execs: Execution[]) => execs.map((e) => `${vars(e).operation}:${String(vars(e).data.id)}`).sort();
const count = (flowId: string, n: number, timeoutMs = 90_000) =>
  waitFor(async () => { const e = await h!.executions(flowId); return e.length >= n && e; }, `${n} executions of ${flowId}`, timeoutMs);
const slotActive = (slot: string) => waitFor(async () =>
  (await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active', [slot])).rowCount === 1, `slot ${slot} active`, 90_000);
const slotExists = async (slot: string) => (await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot])).rowCount === 1;
/** Lets stray events (that must not come) arrive before counting: not a timing assertion, only a settle delay. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

it('INITIAL: existing rows as READ, then the live changes; a restart neither snapshots again nor loses a change', async () => {
  await table('snap_initial', 3);
  h = await startHarness();
  await h.save(flowYaml('snap_initial', trigger('snap_initial', 'INITIAL')));
  const reads = await count('snap_initial', 3);
  expect(reads.map((e) => [vars(e).operation, vars(e).table, vars(e).data]).sort((a, b) => Number((a[2] as { id: number }).id) - Number((b[2] as { id: number }).id))).toEqual([
    ['READ', 'snap_initial', { id: 1, item: 'row1', deleted: false }],
    ['READ', 'snap_initial', { id: 2, item: 'row2', deleted: false }],
    ['READ', 'snap_initial', { id: 3, item: 'row3', deleted: false }],
  ]);
  expect(vars(reads[0]!)).toMatchObject({ database: 'postgres', schema: 'public' });
  await slotActive('snap_initial');
  await client.query(`INSERT INTO snap_initial VALUES (4, 'row4')`);
  await client.query(`UPDATE snap_initial SET item = 'one' WHERE id = 1`);
  await count('snap_initial', 5);
  await h.restartComponent();
  await client.query(`INSERT INTO snap_initial VALUES (5, 'row5')`); // committed while the listener may still be starting
  await count('snap_initial', 6);
  await settle();
  expect(summary(await h.executions('snap_initial'))).toEqual(['INSERT:4', 'INSERT:5', 'READ:1', 'READ:2', 'READ:3', 'UPDATE:1']);
}, 240_000);

it('INITIAL: a crash in the middle of the snapshot is redone on restart without duplicates', async () => {
  await table('snap_crash', 10);
  let allowed = 4;
  let crashes = 0;
  h = await startHarness({
    stopTimeoutMs: 3000,
    create: async (deps, start) => {
      if (allowed <= 0) { crashes++; throw new Error('crash in the middle of the snapshot'); }
      allowed--;
      return startTriggeredExecution(deps.stores, start, deps.renderer);
    },
  });
  await h.save(flowYaml('snap_crash', trigger('snap_crash', 'INITIAL')));
  await waitFor(() => crashes >= 1, 'the crash after 4 rows', 90_000);
  const first = await h.executions('snap_crash');
  expect(first.length).toBe(4);
  // A row already emitted changes before the restart: the redone snapshot emits its new content as a new READ.
  const changed = Number(vars(first[0]!).data.id);
  await client.query(`UPDATE snap_crash SET item = 'changed' WHERE id = $1`, [changed]);
  await h.restartComponent();
  await count('snap_crash', 11);
  await slotActive('snap_crash');
  await client.query(`INSERT INTO snap_crash VALUES (11, 'row11')`);
  await count('snap_crash', 12);
  await settle();
  const all = await h.executions('snap_crash');
  expect(summary(all)).toEqual([...Array.from({ length: 10 }, (_, i) => `READ:${i + 1}`), `READ:${changed}`, 'INSERT:11'].sort());
  expect(all.map(vars).filter((v) => v.data.id === changed).map((v) => v.data.item).sort()).toEqual(['changed', `row${changed}`]);
}, 240_000);

it('ALWAYS: every start snapshots again, then streams', async () => {
  await table('snap_always', 2);
  h = await startHarness();
  await h.save(flowYaml('snap_always', trigger('snap_always', 'ALWAYS')));
  await count('snap_always', 2);
  await slotActive('snap_always');
  await client.query(`INSERT INTO snap_always VALUES (3, 'row3')`);
  await count('snap_always', 3);
  await h.restartComponent();
  await count('snap_always', 6);
  await slotActive('snap_always');
  await client.query(`INSERT INTO snap_always VALUES (4, 'row4')`);
  await count('snap_always', 7);
  await settle();
  expect(summary(await h.executions('snap_always'))).toEqual(['INSERT:3', 'INSERT:4', 'READ:1', 'READ:1', 'READ:2', 'READ:2', 'READ:3']);
}, 240_000);

it('NEVER: no snapshot, only the changes', async () => {
  await table('snap_never', 2);
  h = await startHarness();
  await h.save(flowYaml('snap_never', trigger('snap_never', 'NEVER')));
  await slotActive('snap_never');
  await client.query(`INSERT INTO snap_never VALUES (3, 'row3')`);
  await count('snap_never', 1);
  await settle();
  expect(summary(await h.executions('snap_never'))).toEqual(['INSERT:3']);
}, 180_000);

it('excludedDatabases matching the database: neither snapshot rows nor changes', async () => {
  await table('snap_nodb', 2);
  h = await startHarness();
  await h.save(flowYaml('snap_nodb', trigger('snap_nodb', 'INITIAL', `excludedDatabases: ['post.*']`)));
  await slotActive('snap_nodb'); // streaming starts only after the (empty) snapshot
  await client.query(`INSERT INTO snap_nodb VALUES (3, 'row3')`);
  await settle();
  expect(await h.executions('snap_nodb')).toHaveLength(0);
}, 180_000);

it('INITIAL_ONLY: the rows once, then nothing and no slot left, also after a restart', async () => {
  await table('snap_only', 2);
  h = await startHarness();
  await h.save(flowYaml('snap_only', trigger('snap_only', 'INITIAL_ONLY')));
  await count('snap_only', 2);
  await waitFor(async () => !(await slotExists('snap_only')) && h!.logs.some((l) => l.includes('snapshot of publication')), 'the slot dropped', 90_000);
  await client.query(`INSERT INTO snap_only VALUES (3, 'row3')`);
  await h.restartComponent();
  await client.query(`INSERT INTO snap_only VALUES (4, 'row4')`);
  await settle();
  expect(summary(await h.executions('snap_only'))).toEqual(['READ:1', 'READ:2']);
  expect(await slotExists('snap_only')).toBe(false);
}, 180_000);

it('includedColumns / excludedColumns filter data and before of snapshot and change events', async () => {
  await table('snap_cols', 1, ', secret text, note text');
  await client.query('ALTER TABLE snap_cols REPLICA IDENTITY FULL');
  await client.query(`UPDATE snap_cols SET secret = 's1', note = 'n1'`);
  h = await startHarness();
  await h.save(flowYaml('snap_cols', trigger('snap_cols', 'INITIAL',
    `includedColumns: ['public\\.snap_cols\\.(id|item|secret)']\nexcludedColumns: ['.*\\.secret']`)));
  await count('snap_cols', 1);
  await slotActive('snap_cols');
  await client.query(`UPDATE snap_cols SET item = 'changed', secret = 's2', note = 'n2' WHERE id = 1`);
  const execs = await count('snap_cols', 2);
  const read = execs.map(vars).find((v) => v.operation === 'READ')!;
  const update = execs.map(vars).find((v) => v.operation === 'UPDATE')!;
  expect(read.data).toEqual({ id: 1, item: 'row1', deleted: false });
  expect(update.data).toEqual({ id: 1, item: 'changed', deleted: false });
  expect(update.before).toEqual({ id: 1, item: 'row1' });
}, 180_000);

function issuesOf(source: string): ValidationIssue[] {
  try { parseFlow(source); } catch (err) { if (err instanceof FlowValidationError) return err.errors; throw err; }
  throw new Error('flow was accepted');
}

it('Debezium properties the trigger cannot honour are rejected naming the field; supported values are accepted', () => {
  const base = 'id: t\ntype: io.kestra.plugin.debezium.postgres.RealtimeTrigger\nhostname: h\ndatabase: d';
  for (const [line, path] of [
    ['pluginName: DECODERBUFS', 'triggers[0].pluginName'], ['format: RAW', 'triggers[0].format'], ['key: DROP', 'triggers[0].key'],
    ['metadata: ADD_FIELD', 'triggers[0].metadata'], ['metadataFieldName: meta', 'triggers[0].metadataFieldName'],
    ['ignoreDdl: false', 'triggers[0].ignoreDdl'], ['splitTable: OFF', 'triggers[0].splitTable'], ['properties: { a: b }', 'triggers[0].properties'],
  ] as const) {
    const issues = issuesOf(flowYaml('f', `${base}\n${line}`));
    expect(issues.map((i) => i.path), line).toContain(path);
  }
  expect(() => parseFlow(flowYaml('f', `${base}\npluginName: PGOUTPUT\nformat: INLINE\nkey: ADD_FIELD\nmetadata: DROP
ignoreDdl: true\nsplitTable: TABLE\nsnapshotMode: INITIAL_ONLY\nstateName: s\nsslMode: DISABLE\nincludedDatabases: [d]
includedColumns: ['public\\.t\\..*']\nexcludedColumns: 'public\\.t\\.secret'`))).not.toThrow();
});
