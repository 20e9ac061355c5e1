// Execution history on PostgreSQL (cluster mode): the full record of each finished execution, gzip'd, beside the columns
// searches filter and sort on (flow namespace, flow id, state, start/end dates, labels as jsonb with a GIN index, id).
// One row per execution id; a write of an older resource version never replaces a newer one, so re-archiving after a
// crash (or by a replica that lost the lead) writes the same row once. Schema created at start like the log store's.
import { withSchemaLock } from '../../store/postgres/schema-lock.js';
import { gunzip, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Pool } from 'pg';
import type { Execution } from '../../core/types.js';
import { type SqlTarget, filtersSql, postgresDialect } from '../../store/filters.js';
import type { DailyStatsQuery, DailyStatsRow, ExecutionQuery } from '../../store/types.js';
import type { ArchivedFrom, ArchivePage, ExecutionArchive } from './types.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export interface PgExecutionArchiveOptions {
  /** Table name (default `flowpilot_executions`): configuration, never user input; must be a plain identifier. */
  table?: string;
}

/** PostgreSQL text and jsonb cannot hold NUL characters. */
const clean = (s: string): string => (s.includes('\0') ? s.replace(/\0/g, '\uFFFD') : s);
const date = (s: string | undefined): Date | null => {
  const ms = s ? Date.parse(s) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : null;
};
/** Labels as the searches compare them (every value a string), for `labels @> [{key, value}]`. */
const labelsJson = (e: Execution): string =>
  JSON.stringify((e.labels ?? []).map((l) => ({ key: clean(String(l.key)), value: clean(String(l.value)) })));

const lowerHas = (column: string, p: string): string => `strpos(lower(${column}), lower(${p})) > 0`;
const labelExists = (cond: string): string => `EXISTS (SELECT 1 FROM jsonb_array_elements(t.labels) l WHERE ${cond})`;

/** Search filters on the archive's columns (dates: the start date, as Kestra's), labels in the jsonb list. */
const FILTER_TARGET: SqlTarget = {
  text: { namespace: 'namespace', flowId: 'flow_id', state: 'state', triggerExecutionId: 'trigger_execution_id' },
  constants: { kind: 'NORMAL' },
  dates: { startDate: 'start_date', endDate: 'start_date' },
  label: (l, mode, d) => {
    if (mode === 'equals') return `labels @> ${d.param(JSON.stringify([{ key: clean(l.key), value: clean(l.value) }]))}::jsonb`;
    if (l.key === '') return labelExists(`${d.contains("l->>'key'", clean(l.value))} OR ${d.contains("l->>'value'", clean(l.value))}`);
    return labelExists(`l->>'key' = ${d.param(clean(l.key))} AND ${d.contains("l->>'value'", clean(l.value))}`);
  },
  q: (value, d) => `(${lowerHas('t.id', d.param(value))} OR ${lowerHas('namespace', d.param(value))} OR ${lowerHas('flow_id', d.param(value))}
    OR ${labelExists(lowerHas("(l->>'key') || ':' || (l->>'value')", d.param(value)))})`,
};

function parameters(): { params: unknown[]; param: (value: unknown) => string } {
  const params: unknown[] = [];
  const dialect = postgresDialect(params);
  return { params, param: dialect.param };
}

export class PgExecutionArchive implements ExecutionArchive {
  readonly table: string;
  private ready: Promise<void> | undefined;

  constructor(private readonly pool: Pool, options: PgExecutionArchiveOptions = {}) {
    this.table = options.table ?? 'flowpilot_executions';
    if (!/^[a-z_][a-z0-9_]{0,50}$/.test(this.table)) throw new Error(`invalid execution archive table name: ${this.table}`);
  }

  /** Creates the table and its indexes when missing (under an advisory lock, so concurrent replicas do not race). */
  init(): Promise<void> {
    this.ready ??= this.createSchema().catch((err) => { this.ready = undefined; throw err; });
    return this.ready;
  }

  async upsert(e: Execution, from: ArchivedFrom): Promise<void> {
    await this.init();
    const record = await gzipAsync(Buffer.from(JSON.stringify(e)));
    await this.pool.query(
      `INSERT INTO ${this.table} AS t (id, namespace, flow_id, state, start_date, end_date, labels, record_gz, resource_uid, resource_version, trigger_execution_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET namespace = excluded.namespace, flow_id = excluded.flow_id, state = excluded.state,
         start_date = excluded.start_date, end_date = excluded.end_date, labels = excluded.labels, record_gz = excluded.record_gz,
         trigger_execution_id = excluded.trigger_execution_id,
         resource_uid = excluded.resource_uid, resource_version = excluded.resource_version, archived_at = now()
       WHERE t.resource_version < excluded.resource_version`,
      [clean(e.id), clean(e.namespace), clean(e.flowId), e.state.current, date(e.state.startDate), date(e.state.endDate),
        labelsJson(e), record, from.uid ?? null, from.resourceVersion, e.parent ? clean(e.parent.executionId) : null],
    );
  }

  async get(id: string): Promise<Execution | undefined> {
    await this.init();
    const { rows } = await this.pool.query<{ record_gz: Buffer }>(`SELECT record_gz FROM ${this.table} WHERE id = $1`, [id]);
    return rows[0] ? decode(rows[0].record_gz) : undefined;
  }

  async archivedVersions(ids: string[]): Promise<Map<string, number>> {
    await this.init();
    const out = new Map<string, number>();
    for (let i = 0; i < ids.length; i += 5000) {
      const { rows } = await this.pool.query<{ id: string; resource_version: string }>(
        `SELECT id, resource_version FROM ${this.table} WHERE id = ANY($1::text[])`, [ids.slice(i, i + 5000)]);
      for (const r of rows) out.set(r.id, Number(r.resource_version));
    }
    return out;
  }

  /** The WHERE clause (and the `live` CTE) of a search or an aggregate: the query's filters, `exclude` left out. */
  private matching(query: ExecutionQuery, exclude: readonly string[], params: unknown[], param: (v: unknown) => string): { live: string; filter: string } {
    const where: string[] = [];
    if (query.namespace) {
      where.push(`(namespace = ${param(query.namespace)} OR (namespace >= ${param(`${query.namespace}.`)} AND namespace < ${param(`${query.namespace}/`)}))`);
    }
    if (query.flowId) where.push(`flow_id = ${param(query.flowId)}`);
    if (query.state?.length) where.push(`state = ANY(${param(query.state)}::text[])`);
    if (query.startDate) where.push(`start_date >= ${param(new Date(query.startDate))}`);
    if (query.endDate) where.push(`start_date <= ${param(new Date(query.endDate))}`);
    const labels = Object.entries(query.labels ?? {}).map(([key, value]) => ({ key: clean(key), value: clean(String(value)) }));
    if (labels.length) where.push(`labels @> ${param(JSON.stringify(labels))}::jsonb`);
    if (query.filters?.length) where.push(...filtersSql(query.filters, FILTER_TARGET, postgresDialect(params)));
    // Ids the live resources answer for: an anti-join on a hashed list, not a per-row scan of it.
    let live = '';
    if (exclude.length) {
      live = `WITH live AS (SELECT unnest(${param(exclude)}::text[]) COLLATE "C" AS id) `;
      where.push('NOT EXISTS (SELECT 1 FROM live WHERE live.id = t.id)');
    }
    return { live, filter: `FROM ${this.table} t${where.length ? ` WHERE ${where.join(' AND ')}` : ''}` };
  }

  async search(query: ExecutionQuery, exclude: readonly string[]): Promise<ArchivePage> {
    await this.init();
    const { params, param } = parameters();
    const { live, filter } = this.matching(query, exclude, params, param);
    const countParams = [...params];
    const limit = query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : null;
    const offset = query.offset !== undefined && query.offset > 0 ? Math.floor(query.offset) : 0;
    const page = `ORDER BY start_date DESC NULLS LAST, id DESC LIMIT ${param(limit)} OFFSET ${param(offset)}`;
    const [count, rows] = await Promise.all([
      this.pool.query<{ n: string }>(`${live}SELECT count(*) AS n ${filter}`, countParams),
      limit === 0 ? { rows: [] } : this.pool.query<{ record_gz: Buffer }>(`${live}SELECT record_gz ${filter} ${page}`, params),
    ]);
    return { results: await Promise.all(rows.rows.map((r) => decode(r.record_gz))), total: Number(count.rows[0]!.n) };
  }

  /** GROUP BY UTC day and state on the summary columns (the _start index bounds the range); no record is decoded. */
  async dailyStats(query: DailyStatsQuery, exclude: readonly string[]): Promise<DailyStatsRow[]> {
    await this.init();
    const { params, param } = parameters();
    const { live, filter } = this.matching(query, exclude, params, param);
    const ms = `CASE WHEN end_date IS NULL THEN NULL ELSE greatest(0, extract(epoch FROM end_date - start_date) * 1000) END`;
    const res = await this.pool.query<{ day: string; state: string; n: string; ended: string; mn: string | null; mx: string | null; sm: string | null }>(
      `${live}SELECT to_char(start_date AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, state, count(*) AS n, count(${ms}) AS ended,
         min(${ms}) AS mn, max(${ms}) AS mx, sum(${ms}) AS sm ${filter} GROUP BY 1, 2 ORDER BY 1, 2`, params);
    return res.rows.map((r) => ({
      day: r.day, state: r.state as DailyStatsRow['state'], count: Number(r.n), ended: Number(r.ended),
      durationMinMs: Math.round(Number(r.mn ?? 0)), durationMaxMs: Math.round(Number(r.mx ?? 0)), durationSumMs: Math.round(Number(r.sm ?? 0)),
    }));
  }

  async delete(id: string): Promise<boolean> {
    await this.init();
    const res = await this.pool.query(`DELETE FROM ${this.table} WHERE id = $1`, [id]);
    return (res.rowCount ?? 0) > 0;
  }

  private async createSchema(): Promise<void> {
    const t = this.table;
    await withSchemaLock(this.pool, t, async (client) => {
      await client.query(`CREATE TABLE IF NOT EXISTS ${t} (
        id               text COLLATE "C" PRIMARY KEY,
        namespace        text COLLATE "C" NOT NULL,
        flow_id          text NOT NULL,
        state            text NOT NULL,
        start_date       timestamptz,
        end_date         timestamptz,
        labels           jsonb NOT NULL DEFAULT '[]',
        record_gz        bytea NOT NULL,
        resource_uid     text,
        resource_version bigint NOT NULL,
        archived_at      timestamptz NOT NULL DEFAULT now()
      )`);
      // The parent execution (Kestra's triggerExecutionId / childFilter); rows archived before it have none.
      await client.query(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS trigger_execution_id text`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_start ON ${t} (start_date DESC NULLS LAST, id DESC)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_flow ON ${t} (namespace, flow_id, start_date DESC NULLS LAST, id DESC)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_state ON ${t} (state, start_date DESC NULLS LAST)`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${t}_labels ON ${t} USING GIN (labels jsonb_path_ops)`);
    });
  }

}

async function decode(gz: Buffer): Promise<Execution> {
  return JSON.parse((await gunzipAsync(gz)).toString('utf8')) as Execution;
}
