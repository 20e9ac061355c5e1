// PostgreSQL row-change realtime trigger (`debezium.postgres.RealtimeTrigger` style, without Debezium): logical
// replication with the built-in `pgoutput` plugin on a replication slot. First, per `snapshotMode` (Debezium's, default
// INITIAL), one READ execution per existing row, read in the snapshot exported by the slot's creation (see
// ./postgres-cdc-snapshot.ts); then one execution per inserted, updated or deleted row. The slot's position (LSN) is
// confirmed only after every change of a transaction has its execution: after a crash PostgreSQL replays the
// unconfirmed transactions, and the dedupe key (transaction commit LSN + change index) makes the replayed changes find
// their executions instead of creating new ones. Column and database filters follow Debezium's include/exclude lists.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import { dictFrom } from '../../core/keyed.js';
import { regexTest } from '../../expr/index.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext, TriggerEvent } from '../types.js';
import { createExportedSlot, dropSlot, int8Columns, plainRow, readSnapshot, waitSlotInactive, withClient } from './postgres-cdc-snapshot.js';
import { pgSsl, sslMaterial, sslModeOf } from './pg-tls.js';
import { aborted, str, supervise } from './util.js';

const NAME = /^[a-z0-9_]{1,63}$/;
const OPERATIONS = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' } as const;
const SNAPSHOT_MODES = new Set(['INITIAL', 'ALWAYS', 'NEVER', 'INITIAL_ONLY']);
/** Trigger-state marks of completed initial snapshots (INITIAL, INITIAL_ONLY). */
export const SNAPSHOT_SCOPE = 'postgres-cdc-snapshot';

/** Default slot of a flow trigger: stable, and distinct per trigger (two triggers never share a position). */
export function defaultSlotName(ctx: Pick<TriggerContext, 'flow' | 'trigger'>): string {
  return `flowpilot_${createHash('sha256').update(`${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}`).digest('hex').slice(0, 24)}`;
}

function list(ctx: TriggerContext, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const v = ctx.render(value);
  return (Array.isArray(v) ? v : String(v).split(',')).map((s) => String(s).trim()).filter(Boolean);
}

/** Debezium include/exclude lists: anchored regular expressions. */
const patterns = (ctx: TriggerContext, value: unknown) => list(ctx, value).map((x) => regexTest(x)); // RE2: linear time

/** Creates the publication (for the listed tables, or all tables) when missing. */
async function ensurePublication(config: pg.ClientConfig, publication: string, tables: string[]): Promise<void> {
  await withClient(config, async (client) => {
    const pub = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [publication]);
    if (pub.rowCount !== 0) return;
    const target = tables.length ? `TABLE ${tables.map((t) => t.split('.').map((p) => client.escapeIdentifier(p)).join('.')).join(', ')}` : 'ALL TABLES';
    await client.query(`CREATE PUBLICATION ${client.escapeIdentifier(publication)} FOR ${target}`);
  });
}

/** Creates the slot when missing and waits (bounded) until no exiting backend holds it; the slot's confirmed LSN. */
async function ensureSlot(config: pg.ClientConfig, slot: string): Promise<string | undefined> {
  return withClient(config, async (client) => {
    const s = await waitSlotInactive(client, slot);
    if (!s.exists) await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    const lsn = await client.query<{ lsn: string | null }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    return lsn.rows[0]?.lsn ?? undefined;
  });
}

export const postgresCdcTrigger: RealtimeTriggerPlugin = {
  kind: 'realtime',
  type: PLUGIN_TRIGGER_TYPES.postgresCdc,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.postgresCdc),
  async listen(ctx, emit) {
    const t = ctx.trigger;
    const database = str(ctx, t.database, 'database')!;
    const config: pg.ClientConfig = {
      host: str(ctx, t.hostname, 'hostname')!, port: Number(ctx.render(t.port ?? 5432)), database, connectionTimeoutMillis: 10_000,
      ssl: pgSsl(sslModeOf(String(ctx.render(t.sslMode ?? 'DISABLE')), `triggers.${t.id}.sslMode`), sslMaterial(ctx)).ssl,
    };
    const user = str(ctx, t.username, 'username', false);
    const password = str(ctx, t.password, 'password', false);
    if (user) config.user = user;
    if (password !== undefined) config.password = password;
    const slot = str(ctx, t.slotName, 'slotName', false) ?? defaultSlotName(ctx);
    const publication = str(ctx, t.publicationName, 'publicationName', false) ?? 'flowpilot_publication';
    if (!NAME.test(slot)) throw new Error(`slotName '${slot}' must match ${NAME.source}`);
    if (!NAME.test(publication)) throw new Error(`publicationName '${publication}' must match ${NAME.source}`);
    const mode = String(ctx.render(t.snapshotMode ?? 'INITIAL'));
    if (!SNAPSHOT_MODES.has(mode)) throw new Error(`snapshotMode '${mode}' is not one of ${[...SNAPSHOT_MODES].join(', ')}`);
    const stateName = str(ctx, t.stateName, 'stateName', false) ?? 'debezium-state';
    const tables = [...list(ctx, t.tables), ...list(ctx, t.includedTables)];
    const included = tables.map((x) => regexTest(x.includes('.') ? x : `public\\.${x}`));
    const excluded = patterns(ctx, t.excludedTables);
    const dbIncluded = patterns(ctx, t.includedDatabases);
    const dbExcluded = patterns(ctx, t.excludedDatabases);
    const databaseWanted = (dbIncluded.length === 0 || dbIncluded.some((r) => r.test(database))) && !dbExcluded.some((r) => r.test(database));
    const colIncluded = patterns(ctx, t.includedColumns);
    const colExcluded = patterns(ctx, t.excludedColumns);
    const deleted = String(ctx.render(t.deleted ?? 'ADD_FIELD'));
    const deletedField = String(ctx.render(t.deletedFieldName ?? 'deleted'));
    const wanted = (schema: string, table: string) => {
      const name = `${schema}.${table}`;
      return databaseWanted && (included.length === 0 || included.some((r) => r.test(name))) && !excluded.some((r) => r.test(name));
    };
    /** Debezium's column filters, on `schema.table.column`. */
    const columns = (schema: string, table: string, row: Record<string, unknown>) => (colIncluded.length || colExcluded.length
      ? dictFrom(Object.entries(row).filter(([c]) => {
        const name = `${schema}.${table}.${c}`;
        return (colIncluded.length === 0 || colIncluded.some((r) => r.test(name))) && !colExcluded.some((r) => r.test(name));
      }))
      : row);
    /** `data` of an event: filtered columns, then the deleted field (READ and INSERT/UPDATE alike: not deleted). */
    const shape = (schema: string, table: string, row: Record<string, unknown>, isDelete: boolean) => {
      const data = columns(schema, table, row);
      if (isDelete) return dictFrom(deleted === 'NULL' ? Object.keys(data).map((k) => [k, null]) : [...Object.entries(data), [deletedField, true]]);
      return deleted === 'ADD_FIELD' ? dictFrom([...Object.entries(data), [deletedField, false]]) : data;
    };
    // Where the completed initial snapshot is recorded (durably, in the trigger state store).
    const markKey = `${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}/${stateName}/${slot}`;
    let always: { point: string; done: boolean } | undefined; // ALWAYS: this start's snapshot (redone after a failure)

    /** The snapshot of the captured tables as READ events, on a fresh slot whose stream continues right after it. */
    const snapshot = async (signal: AbortSignal, ready: () => void) => {
      await dropSlot(config, slot);
      const exported = await createExportedSlot(config, slot, mode === 'INITIAL_ONLY');
      try {
        ready();
        ctx.logger.info(`snapshot of publication ${publication} at ${exported.consistentPoint}`);
        if (mode === 'ALWAYS') always ??= { point: exported.consistentPoint, done: false };
        const prefix = mode === 'ALWAYS' ? `${slot}:snapshot:${always!.point}` : `${slot}:snapshot:${stateName}`;
        await readSnapshot(config, exported.snapshotName, publication, wanted, async (r) => {
          await emit({
            dedupeKey: `${prefix}:${r.schema}.${r.table}:${r.key}`,
            variables: { data: shape(r.schema, r.table, r.row, false), operation: 'READ', database, schema: r.schema, table: r.table },
          });
        }, signal);
        if (always) always.done = true;
        else await ctx.stores.triggers.mark(SNAPSHOT_SCOPE, markKey);
      } finally {
        await exported.close();
      }
    };

    return supervise(ctx, `postgres slot ${slot}`, async (signal, ready) => {
      await ensurePublication(config, publication, tables.filter((x) => /^[\w.]+$/.test(x)));
      const snapshotDue = mode === 'ALWAYS' ? !always?.done : mode !== 'NEVER' && !(await ctx.stores.triggers.isMarked(SNAPSHOT_SCOPE, markKey));
      if (snapshotDue) await snapshot(signal, ready);
      if (mode === 'INITIAL_ONLY') { // the rows once, then nothing: no slot kept (it would hold WAL forever)
        await dropSlot(config, slot);
        ready();
        await aborted(signal);
        return;
      }
      await stream(signal, ready);
    });

    /** Streams the slot: one event per row change; the position is confirmed after each whole transaction. */
    async function stream(signal: AbortSignal, ready: () => void): Promise<void> {
      let confirmed = await ensureSlot(config, slot);
      const service = new LogicalReplicationService(config, { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } });
      let failure: unknown;
      let tx = { key: '', index: 0 };
      const fail = (err: unknown) => { failure ??= err; void service.stop(); };
      service.on('error', fail);
      // Keepalives that ask for an answer get the last confirmed position (never a position not yet created).
      service.on('heartbeat', (_lsn, _ts, shouldRespond) => { if (shouldRespond && confirmed) void service.acknowledge(confirmed); });
      service.on('start', ready);
      service.on('data', async (lsn: string, msg: Pgoutput.Message) => {
        if (failure !== undefined) return; // after a failed create nothing is created or confirmed: replayed next session
        try {
          if (msg.tag === 'begin') tx = { key: msg.commitLsn ?? lsn, index: 0 };
          else if (msg.tag === 'commit') {
            confirmed = msg.commitEndLsn ?? lsn;
            await service.acknowledge(confirmed);
          } else if (msg.tag === 'insert' || msg.tag === 'update' || msg.tag === 'delete') {
            const index = tx.index++;
            const { schema, name: table } = msg.relation;
            if (!wanted(schema, table)) return;
            if (msg.tag === 'delete' && deleted === 'DROP') return;
            const int8 = int8Columns(msg.relation.columns);
            const row = plainRow(msg.tag === 'delete' ? (msg.old ?? msg.key) : msg.new, int8) ?? {};
            const before = msg.tag === 'update' && msg.old ? plainRow(msg.old, int8) : null;
            const event: TriggerEvent = {
              dedupeKey: `${slot}:${tx.key}:${index}`,
              variables: {
                data: shape(schema, table, row, msg.tag === 'delete'), operation: OPERATIONS[msg.tag], database, schema, table, lsn,
                ...(before ? { before: columns(schema, table, before) } : {}),
              },
            };
            await emit(event);
          }
        } catch (err) {
          fail(err);
        }
      });
      const onAbort = () => { void service.stop(); };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        await service.subscribe(new PgoutputPlugin({ protoVersion: 1, publicationNames: [publication] }), slot);
      } finally {
        signal.removeEventListener('abort', onAbort);
        await service.destroy().catch(() => undefined);
      }
      if (failure !== undefined) throw failure;
    }
  },
};
