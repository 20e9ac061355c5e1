// PostgreSQL row-change trigger, the snapshot part (Debezium's snapshotMode) and slot housekeeping: a replication slot
// created with an exported snapshot on a replication connection, the captured tables read inside that snapshot
// (REPEATABLE READ + SET TRANSACTION SNAPSHOT) so that streaming the slot afterwards starts exactly where the rows were
// read; plus the plain-JSON conversion of row values shared with the change events.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { dictFrom } from '../../core/keyed.js';
import { sleep } from '../../faults.js';

const INT8 = 20;
const FETCH = 500;

function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plainValue);
  return v;
}

/**
 * Plain JSON values; int8 columns (text in pg's parsers) become numbers when they fit exactly (as Debezium's). The row
 * is prototype-free (column names are the database's).
 */
export function plainRow(row: Record<string, unknown> | null | undefined, int8: Set<string>): Record<string, unknown> | null {
  if (!row) return null;
  return dictFrom(Object.entries(row).map(([k, v]) => {
    if (int8.has(k) && typeof v === 'string' && Number.isSafeInteger(Number(v))) return [k, Number(v)] as const;
    return [k, plainValue(v)] as const;
  }));
}

export function int8Columns(columns: { name: string; typeOid?: number; dataTypeID?: number }[]): Set<string> {
  return new Set(columns.filter((c) => (c.typeOid ?? c.dataTypeID) === INT8).map((c) => c.name));
}

async function connected(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  client.on('error', () => { /* surfaced by the queries */ });
  await client.connect();
  return client;
}

/** Runs `fn` with a regular connection, closed afterwards. */
export async function withClient<T>(config: pg.ClientConfig, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = await connected(config);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Waits (bounded) until no backend holds the slot; a backend still exiting after its connection closed holds it briefly. */
export async function waitSlotInactive(c: pg.Client, slot: string, tries = 100): Promise<{ exists: boolean; activePid: number | null }> {
  for (let i = 0; ; i++) {
    const r = await c.query<{ active_pid: number | null }>('SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (r.rowCount === 0) return { exists: false, activePid: null };
    const pid = r.rows[0]!.active_pid;
    if (pid === null || i >= tries) return { exists: true, activePid: pid };
    await sleep(100);
  }
}

/** Drops the slot when it exists (a backend still holding it, e.g. a connection of a crashed session, is terminated). */
export async function dropSlot(config: pg.ClientConfig, slot: string): Promise<void> {
  await withClient(config, async (c) => {
    for (let i = 0; ; i++) {
      const s = await waitSlotInactive(c, slot, 20);
      if (!s.exists) return;
      if (s.activePid !== null) await c.query('SELECT pg_terminate_backend($1)', [s.activePid]);
      try {
        await c.query('SELECT pg_drop_replication_slot($1)', [slot]);
        return;
      } catch (err) {
        if (i >= 20) throw err;
        await sleep(200);
      }
    }
  });
}

export interface ExportedSlot {
  /** The slot's start: the first change streamed is the first committed after the snapshot. */
  consistentPoint: string;
  snapshotName: string;
  /** Ends the replication connection (the snapshot stays usable only until then). */
  close(): Promise<void>;
}

/**
 * Creates the logical slot (pgoutput) on a replication connection with an exported snapshot (PostgreSQL 15+ syntax;
 * EXPORT_SNAPSHOT before). The connection stays idle until `close`: the exported snapshot lives as long as that.
 * `slot` must already be a checked identifier. A temporary slot disappears with the connection.
 */
export async function createExportedSlot(config: pg.ClientConfig, slot: string, temporary: boolean): Promise<ExportedSlot> {
  const client = await connected({ ...config, replication: 'database' } as pg.ClientConfig);
  try {
    const version = Number((await client.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]?.server_version_num ?? 0);
    const how = version >= 150000 ? `(SNAPSHOT 'export')` : 'EXPORT_SNAPSHOT';
    const res = await client.query<{ consistent_point: string; snapshot_name: string }>(`CREATE_REPLICATION_SLOT ${slot}${temporary ? ' TEMPORARY' : ''} LOGICAL pgoutput ${how}`);
    const row = res.rows[0];
    if (!row?.snapshot_name) throw new Error(`slot ${slot} was created without an exported snapshot`);
    return { consistentPoint: row.consistent_point, snapshotName: row.snapshot_name, close: () => client.end().catch(() => undefined) };
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

export interface SnapshotRow {
  schema: string;
  table: string;
  row: Record<string, unknown>;
  /**
   * Stable identity of the row's content in the table: primary-key values plus a hash of every value (a row changed
   * between two snapshot attempts is a new event; an unchanged one is the same), or, without a primary key, the hash
   * and the occurrence of identical rows.
   */
  key: string;
}

const hash = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 32);

/** Reads every row of the publication's tables that `wanted` accepts, inside the exported snapshot, in order. */
export async function readSnapshot(
  config: pg.ClientConfig, snapshotName: string, publication: string,
  wanted: (schema: string, table: string) => boolean, onRow: (r: SnapshotRow) => Promise<void>, signal: AbortSignal,
): Promise<void> {
  await withClient(config, async (c) => {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await c.query(`SET TRANSACTION SNAPSHOT ${c.escapeLiteral(snapshotName)}`);
    const tables = await c.query<{ schemaname: string; tablename: string }>(
      'SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2', [publication]);
    for (const { schemaname: schema, tablename: table } of tables.rows) {
      if (!wanted(schema, table)) continue;
      const qualified = `${c.escapeIdentifier(schema)}.${c.escapeIdentifier(table)}`;
      const pk = (await c.query<{ attname: string }>(
        `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`, [qualified])).rows.map((r) => r.attname);
      const seen = new Map<string, number>();
      await c.query(`DECLARE flowpilot_snapshot NO SCROLL CURSOR FOR SELECT * FROM ${qualified}`);
      for (;;) {
        if (signal.aborted) throw new Error('trigger stopped during the snapshot');
        const page = await c.query(`FETCH ${FETCH} FROM flowpilot_snapshot`);
        const int8 = int8Columns(page.fields);
        for (const raw of page.rows as Record<string, unknown>[]) {
          const row = plainRow(raw, int8)!;
          const content = hash(row);
          let key: string;
          if (pk.length) key = `${JSON.stringify(pk.map((k) => row[k]))}:${content}`;
          else {
            const n = (seen.get(content) ?? 0) + 1;
            seen.set(content, n);
            key = `${content}#${n}`;
          }
          await onRow({ schema, table, row, key });
        }
        if (page.rows.length < FETCH) break;
      }
      await c.query('CLOSE flowpilot_snapshot');
    }
    await c.query('COMMIT');
  });
}
