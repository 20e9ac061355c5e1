// Namespaces (description, variables, plugin defaults) on SQLite: one row per stored namespace, its body as JSON.
// Values read back have prototype-free objects (their keys are the writer's).
import { parseJsonSafe } from '../../core/keyed.js';
import { namespaceChain } from '../../model/namespaces.js';
import { ConflictError, type NamespaceRecord, type NamespaceSpec, type NamespaceStore } from '../types.js';
import { type Db, RowCache } from './db.js';

interface Row { id: string; body: string; updated: string; version: number }

const PARSED_MAX = 1000;

function toRecord(row: Row): NamespaceRecord {
  const body = parseJsonSafe(row.body) as Omit<NamespaceSpec, 'id'>;
  const rec: NamespaceRecord = {
    id: row.id, variables: body.variables ?? {}, pluginDefaults: body.pluginDefaults ?? [], updated: row.updated, version: row.version,
  };
  if (body.description !== undefined) rec.description = body.description;
  return rec;
}

/** The stored body: everything but the id, which is the key. */
function bodyOf(spec: NamespaceSpec): string {
  const { description, variables, pluginDefaults } = spec;
  return JSON.stringify({ ...(description !== undefined ? { description } : {}), variables, pluginDefaults });
}

export class SqliteNamespaceStore implements NamespaceStore {
  private readonly stmts;
  /** Parsed records `chain` handed out, reused while their version and date are unchanged (bodies may be large). */
  private readonly parsed = new Map<string, NamespaceRecord>();
  /** The head (version, date) of each namespace `chain` looked at: no query per step while nothing writes namespaces. */
  private readonly heads: RowCache<Pick<Row, 'version' | 'updated'>>;

  constructor(private readonly db: Db) {
    this.heads = new RowCache(db);
    this.stmts = {
      get: db.prepare('SELECT id, body, updated, version FROM namespaces WHERE id = ?'),
      list: db.prepare('SELECT id, body, updated, version FROM namespaces ORDER BY id'),
      upsert: db.prepare(`INSERT INTO namespaces (id, body, updated, version) VALUES (@id, @body, @updated, 1)
        ON CONFLICT (id) DO UPDATE SET body = excluded.body, updated = excluded.updated, version = namespaces.version + 1
        RETURNING id, body, updated, version`),
      insert: db.prepare(`INSERT INTO namespaces (id, body, updated, version) VALUES (@id, @body, @updated, 1)
        ON CONFLICT (id) DO NOTHING RETURNING id, body, updated, version`),
      delete: db.prepare('DELETE FROM namespaces WHERE id = ?'),
      head: db.prepare('SELECT version, updated FROM namespaces WHERE id = ?'),
    };
  }

  async get(id: string): Promise<NamespaceRecord | undefined> {
    const row = this.stmts.get.get(id) as Row | undefined;
    return row && toRecord(row);
  }

  async list(): Promise<NamespaceRecord[]> {
    return (this.stmts.list.all() as Row[]).map(toRecord);
  }

  async put(spec: NamespaceSpec, opts: { create?: boolean } = {}): Promise<NamespaceRecord> {
    const params = { id: spec.id, body: bodyOf(spec), updated: new Date().toISOString() };
    let row: Row | undefined;
    try { row = (opts.create ? this.stmts.insert : this.stmts.upsert).get(params) as Row | undefined; } finally { this.heads.clear(); }
    if (!row) throw new ConflictError(`Namespace '${spec.id}' already exists`);
    return toRecord(row);
  }

  async delete(id: string): Promise<boolean> {
    try { return this.stmts.delete.run(id).changes > 0; } finally { this.heads.clear(); }
  }

  async chain(namespace: string): Promise<NamespaceRecord[]> {
    const out: NamespaceRecord[] = [];
    for (const id of namespaceChain(namespace)) {
      const head = this.heads.get(id, () => this.stmts.head.get(id) as Pick<Row, 'version' | 'updated'> | undefined);
      if (!head) { this.parsed.delete(id); continue; }
      let rec = this.parsed.get(id);
      if (!rec || rec.version !== head.version || rec.updated !== head.updated) {
        const row = this.stmts.get.get(id) as Row | undefined;
        if (!row) continue;
        rec = toRecord(row);
        this.parsed.set(id, rec);
        if (this.parsed.size > PARSED_MAX) this.parsed.delete(this.parsed.keys().next().value!);
      }
      out.push(rec);
    }
    return out;
  }
}
