// Flow revisions on SQLite: every distinct source saved becomes a new immutable revision; deletion flags the latest.
// `is_latest` marks the newest revision of each flow so searches never need a max() subquery.
import { freezeData } from '../../core/keyed.js';
import type { Flow } from '../../core/types.js';
import { type SqlTarget, filtersSql, sqliteDialect } from '../filters.js';
import type { FlowEvent, FlowQuery, FlowRecord, FlowStore, Page } from '../types.js';
import { type Db, RowCache, StatementCache, namespaceClause, pageClause } from './db.js';
import { Emitter } from './emitter.js';

interface FlowRow {
  namespace: string;
  id: string;
  revision: number;
  source: string;
  json: string;
  updated: string;
  deleted: number;
}

const COLUMNS = 'namespace, id, revision, source, json, updated, deleted';

function toRecord(row: FlowRow): FlowRecord {
  const record: FlowRecord = {
    namespace: row.namespace,
    id: row.id,
    revision: row.revision,
    source: row.source,
    flow: JSON.parse(row.json) as Flow,
    updated: row.updated,
  };
  if (row.deleted) record.deleted = true;
  return record;
}

/** One label of the flow's JSON, whether stored as a map (`key: value`) or a list of `{key, value}`. */
const LABEL_KEY = "CASE WHEN j.type = 'object' THEN json_extract(j.value, '$.key') ELSE j.key END";
const LABEL_VALUE = "CAST(CASE WHEN j.type = 'object' THEN json_extract(j.value, '$.value') ELSE j.value END AS TEXT)";
const labelWhere = (cond: string): string => `EXISTS (SELECT 1 FROM json_each(flows.json, '$.labels') j WHERE ${cond})`;
const lowerHas = (column: string, p: string): string => `instr(lower(coalesce(${column}, '')), lower(${p})) > 0`;

/** Search filters on the flows table (the `q` of FlowQuery, as a filter too). */
const FILTER_TARGET: SqlTarget = {
  text: { namespace: 'namespace', flowId: 'id' },
  label: (l, mode, d) => {
    if (mode === 'equals') return labelWhere(`${LABEL_KEY} = ${d.param(l.key)} AND ${LABEL_VALUE} = ${d.param(l.value)}`);
    if (l.key === '') return labelWhere(`${d.contains(LABEL_KEY, l.value)} OR ${d.contains(LABEL_VALUE, l.value)}`);
    return labelWhere(`${LABEL_KEY} = ${d.param(l.key)} AND ${d.contains(LABEL_VALUE, l.value)}`);
  },
  q: (value, d) => `(${lowerHas('id', d.param(value))} OR ${lowerHas('namespace', d.param(value))} OR ${lowerHas('description', d.param(value))})`,
};

/** What a revision holds that never changes once saved (its `deleted` flag does: it is read each time). */
type RevisionParts = Pick<FlowRecord, 'source' | 'flow' | 'updated'>;

/** Parsed revisions kept (the least recently saved or read first forgotten). */
const PARSED_MAX = 1_000;

export class SqliteFlowStore implements FlowStore {
  private readonly dynamic: StatementCache;
  /**
   * Parsed revisions by namespace, id and revision: an execution created through the API reads its flow per request,
   * and a revision never changes, so its JSON is parsed once. The flow is frozen: it is shared by every reader, as the
   * controller's per-revision cache shares it already.
   */
  private readonly parsed = new Map<string, RevisionParts>();
  private readonly stmts;
  private readonly events = new Emitter<FlowEvent>('flow watch');
  /** The head (revision, deleted) of each flow and revision read: no query per request while nothing writes flows. */
  private readonly heads: RowCache<Pick<FlowRow, 'revision' | 'deleted'>>;

  constructor(private readonly db: Db) {
    this.dynamic = new StatementCache(db);
    this.heads = new RowCache(db);
    this.stmts = {
      latest: db.prepare(`SELECT ${COLUMNS} FROM flows WHERE namespace = ? AND id = ? AND is_latest = 1`),
      latestHead: db.prepare('SELECT revision, deleted FROM flows WHERE namespace = ? AND id = ? AND is_latest = 1'),
      revisionHead: db.prepare('SELECT revision, deleted FROM flows WHERE namespace = ? AND id = ? AND revision = ?'),
      revision: db.prepare(`SELECT ${COLUMNS} FROM flows WHERE namespace = ? AND id = ? AND revision = ?`),
      revisions: db.prepare(`SELECT ${COLUMNS} FROM flows WHERE namespace = ? AND id = ? ORDER BY revision`),
      unmarkLatest: db.prepare('UPDATE flows SET is_latest = 0 WHERE namespace = ? AND id = ? AND is_latest = 1'),
      insert: db.prepare(`INSERT INTO flows (namespace, id, revision, source, json, description, updated, deleted, is_latest)
        VALUES (@namespace, @id, @revision, @source, @json, @description, @updated, 0, 1)`),
      markDeleted: db.prepare('UPDATE flows SET deleted = 1 WHERE namespace = ? AND id = ? AND is_latest = 1 AND deleted = 0'),
      all: db.prepare(`SELECT ${COLUMNS} FROM flows WHERE is_latest = 1 AND deleted = 0 ORDER BY namespace, id`),
    };
  }

  async save(flow: Flow, source: string): Promise<{ record: FlowRecord; created: boolean }> {
    const result = this.saveSync(flow, source);
    if (result.created) this.events.emit({ type: 'SAVED', record: result.record });
    return result;
  }

  watch(listener: (event: FlowEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  /** Synchronous body of `save`, in one immediate transaction so concurrent writers cannot share a revision. */
  saveSync(flow: Flow, source: string): { record: FlowRecord; created: boolean } {
    try {
      return this.saveInTransaction(flow, source);
    } finally {
      this.heads.clear();
    }
  }

  private saveInTransaction(flow: Flow, source: string): { record: FlowRecord; created: boolean } {
    return this.db.transaction(() => {
      const latest = this.stmts.latest.get(flow.namespace, flow.id) as FlowRow | undefined;
      if (latest && !latest.deleted && latest.source === source) {
        flow.revision = latest.revision;
        return { record: toRecord(latest), created: false };
      }
      const revision = (latest?.revision ?? 0) + 1;
      flow.revision = revision;
      const row: FlowRow = {
        namespace: flow.namespace, id: flow.id, revision, source,
        json: JSON.stringify(flow), updated: new Date().toISOString(), deleted: 0,
      };
      this.stmts.unmarkLatest.run(flow.namespace, flow.id);
      this.stmts.insert.run({ ...row, description: flow.description ?? null });
      return { record: toRecord(row), created: true };
    }).immediate();
  }

  async get(namespace: string, id: string, revision?: number): Promise<FlowRecord | undefined> {
    type Head = Pick<FlowRow, 'revision' | 'deleted'>;
    const head = this.heads.get(`${namespace}\n${id}\n${revision ?? ''}`, () =>
      (revision === undefined ? this.stmts.latestHead.get(namespace, id) : this.stmts.revisionHead.get(namespace, id, revision)) as Head | undefined);
    if (!head || (revision === undefined && head.deleted)) return undefined;
    const key = `${namespace}\n${id}\n${head.revision}`;
    let parts = this.parsed.get(key);
    if (!parts) {
      const row = this.stmts.revision.get(namespace, id, head.revision) as FlowRow | undefined;
      if (!row) return undefined; // deleted meanwhile by another connection
      const { source, flow, updated } = toRecord(row);
      parts = { source, flow: freezeData(flow), updated };
      this.parsed.set(key, parts);
      if (this.parsed.size > PARSED_MAX) this.parsed.delete(this.parsed.keys().next().value!);
    }
    const record: FlowRecord = { namespace, id, revision: head.revision, ...parts };
    if (head.deleted) record.deleted = true;
    return record;
  }

  async revisions(namespace: string, id: string): Promise<FlowRecord[]> {
    return (this.stmts.revisions.all(namespace, id) as FlowRow[]).map(toRecord);
  }

  async delete(namespace: string, id: string): Promise<boolean> {
    let deleted: boolean;
    try { deleted = this.stmts.markDeleted.run(namespace, id).changes > 0; } finally { this.heads.clear(); }
    if (deleted) this.events.emit({ type: 'DELETED', namespace, id });
    return deleted;
  }

  async search(query: FlowQuery): Promise<Page<FlowRecord>> {
    const params: unknown[] = [];
    const where = ['is_latest = 1', 'deleted = 0'];
    if (query.namespace) where.push(namespaceClause('namespace', query.namespace, params));
    const filters = [...(query.q ? [{ kind: 'q', op: 'EQUALS', value: query.q } as const] : []), ...(query.filters ?? [])];
    where.push(...filtersSql(filters, FILTER_TARGET, sqliteDialect(params)));
    const filter = `FROM flows WHERE ${where.join(' AND ')}`;
    const total = (this.dynamic.get(`SELECT count(*) AS n ${filter}`).get(...params) as { n: number }).n;
    const pageParams = [...params];
    const sql = `SELECT ${COLUMNS} ${filter} ORDER BY namespace, id ${pageClause(query, pageParams)}`;
    const rows = this.dynamic.get(sql).all(...pageParams) as FlowRow[];
    return { results: rows.map(toRecord), total };
  }

  async all(): Promise<FlowRecord[]> {
    return (this.stmts.all.all() as FlowRow[]).map(toRecord);
  }
}
