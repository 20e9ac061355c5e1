// PostgreSQL row-change realtime trigger (`debezium.postgres.RealtimeTrigger` style, without Debezium): logical
// replication with the built-in `pgoutput` plugin on a replication slot. One execution per inserted, updated or deleted
// row. The slot's position (LSN) is confirmed only after every change of a transaction has its execution: after a
// crash PostgreSQL replays the unconfirmed transactions, and the dedupe key (transaction commit LSN + change index)
// makes the replayed changes find their executions instead of creating new ones.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import type { RealtimeTriggerPlugin, TriggerContext, TriggerEvent } from '../types.js';
import { str, supervise } from './util.js';

const NAME = /^[a-z0-9_]{1,63}$/;
const OPERATIONS = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' } as const;

/** Default slot of a flow trigger: stable, and distinct per trigger (two triggers never share a position). */
export function defaultSlotName(ctx: Pick<TriggerContext, 'flow' | 'trigger'>): string {
  return `flowpilot_${createHash('sha256').update(`${ctx.flow.namespace}/${ctx.flow.id}/${ctx.trigger.id}`).digest('hex').slice(0, 24)}`;
}

function list(ctx: TriggerContext, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const v = ctx.render(value);
  return (Array.isArray(v) ? v : String(v).split(',')).map((s) => String(s).trim()).filter(Boolean);
}

function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plainValue);
  return v;
}
const INT8 = 20;

/** Plain JSON values; int8 columns (text in pg's parsers) become numbers when they fit exactly (as Debezium's). */
function plainRow(row: Record<string, unknown> | null | undefined, relation: Pgoutput.MessageRelation): Record<string, unknown> | null {
  if (!row) return null;
  const int8 = new Set(relation.columns.filter((c) => c.typeOid === INT8).map((c) => c.name));
  return Object.fromEntries(Object.entries(row).map(([k, v]) => {
    if (int8.has(k) && typeof v === 'string' && Number.isSafeInteger(Number(v))) return [k, Number(v)];
    return [k, plainValue(v)];
  }));
}

/** Creates the publication (for the listed tables, or all tables) and the slot when missing; the slot's confirmed LSN. */
async function ensureSlot(config: pg.ClientConfig, slot: string, publication: string, tables: string[]): Promise<string | undefined> {
  const client = new pg.Client(config);
  client.on('error', () => { /* surfaced by the queries */ });
  await client.connect();
  try {
    const pub = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [publication]);
    if (pub.rowCount === 0) {
      const target = tables.length ? `TABLE ${tables.map((t) => t.split('.').map((p) => client.escapeIdentifier(p)).join('.')).join(', ')}` : 'ALL TABLES';
      await client.query(`CREATE PUBLICATION ${client.escapeIdentifier(publication)} FOR ${target}`);
    }
    const s = await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (s.rowCount === 0) await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    const lsn = await client.query<{ lsn: string | null }>('SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    return lsn.rows[0]?.lsn ?? undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
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
    };
    const user = str(ctx, t.username, 'username', false);
    const password = str(ctx, t.password, 'password', false);
    if (user) config.user = user;
    if (password !== undefined) config.password = password;
    const slot = str(ctx, t.slotName, 'slotName', false) ?? defaultSlotName(ctx);
    const publication = str(ctx, t.publicationName, 'publicationName', false) ?? 'flowpilot_publication';
    if (!NAME.test(slot)) throw new Error(`slotName '${slot}' must match ${NAME.source}`);
    if (!NAME.test(publication)) throw new Error(`publicationName '${publication}' must match ${NAME.source}`);
    const tables = [...list(ctx, t.tables), ...list(ctx, t.includedTables)];
    const included = tables.map((x) => new RegExp(`^(?:${x.includes('.') ? x : `public\\.${x}`})$`));
    const excluded = list(ctx, t.excludedTables).map((x) => new RegExp(`^(?:${x})$`));
    const deleted = String(ctx.render(t.deleted ?? 'ADD_FIELD'));
    const deletedField = String(ctx.render(t.deletedFieldName ?? 'deleted'));
    const wanted = (schema: string, table: string) => {
      const name = `${schema}.${table}`;
      return (included.length === 0 || included.some((r) => r.test(name))) && !excluded.some((r) => r.test(name));
    };

    return supervise(ctx, `postgres slot ${slot}`, async (signal, ready) => {
      let confirmed = await ensureSlot(config, slot, publication, tables.filter((x) => /^[\w.]+$/.test(x)));
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
            if (!wanted(msg.relation.schema, msg.relation.name)) return;
            if (msg.tag === 'delete' && deleted === 'DROP') return;
            let data = plainRow(msg.tag === 'delete' ? (msg.old ?? msg.key) : msg.new, msg.relation) ?? {};
            if (msg.tag === 'delete') data = deleted === 'NULL' ? Object.fromEntries(Object.keys(data).map((k) => [k, null])) : { ...data, [deletedField]: true };
            else if (deleted === 'ADD_FIELD') data = { ...data, [deletedField]: false };
            const event: TriggerEvent = {
              dedupeKey: `${slot}:${tx.key}:${index}`,
              variables: {
                data, operation: OPERATIONS[msg.tag], database, schema: msg.relation.schema, table: msg.relation.name, lsn,
                ...(msg.tag === 'update' && msg.old ? { before: plainRow(msg.old, msg.relation) } : {}),
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
    });
  },
};
