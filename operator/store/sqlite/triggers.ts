// Durable trigger state on SQLite: one JSON row per (flow, trigger) with compare-and-set versions, and "done once" marks.
import { ConflictError, type TriggerStateRecord, type TriggerStateStore } from '../types.js';
import type { Db } from './db.js';

interface Row { namespace: string; flow_id: string; trigger_id: string; disabled: number; state: string; updated: string; version: number }

const toRecord = (r: Row): TriggerStateRecord => ({
  namespace: r.namespace, flowId: r.flow_id, triggerId: r.trigger_id, disabled: r.disabled === 1,
  state: JSON.parse(r.state) as Record<string, unknown>, updated: r.updated, version: r.version,
});

export class SqliteTriggerStateStore implements TriggerStateStore {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      get: db.prepare('SELECT * FROM trigger_state WHERE namespace = ? AND flow_id = ? AND trigger_id = ?'),
      all: db.prepare('SELECT * FROM trigger_state ORDER BY namespace, flow_id, trigger_id'),
      byNamespace: db.prepare(`SELECT * FROM trigger_state WHERE namespace = @ns OR namespace LIKE @prefix ESCAPE '\\' ORDER BY namespace, flow_id, trigger_id`),
      byFlow: db.prepare('SELECT * FROM trigger_state WHERE namespace = ? AND flow_id = ? ORDER BY trigger_id'),
      insert: db.prepare(`INSERT INTO trigger_state (namespace, flow_id, trigger_id, disabled, state, updated, version)
        VALUES (@namespace, @flow_id, @trigger_id, @disabled, @state, @updated, 1) ON CONFLICT DO NOTHING`),
      update: db.prepare(`UPDATE trigger_state SET disabled = @disabled, state = @state, updated = @updated, version = version + 1
        WHERE namespace = @namespace AND flow_id = @flow_id AND trigger_id = @trigger_id AND version = @expected`),
      delete: db.prepare('DELETE FROM trigger_state WHERE namespace = ? AND flow_id = ? AND trigger_id = ?'),
      mark: db.prepare('INSERT INTO trigger_marks (scope, key, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
      isMarked: db.prepare('SELECT 1 FROM trigger_marks WHERE scope = ? AND key = ?'),
      unmark: db.prepare('DELETE FROM trigger_marks WHERE scope = ? AND key = ?'),
      purge: db.prepare(`DELETE FROM trigger_marks WHERE scope = @scope AND key IN
        (SELECT key FROM trigger_marks WHERE scope = @scope AND created < @before LIMIT @limit)`),
    };
  }

  async get(namespace: string, flowId: string, triggerId: string): Promise<TriggerStateRecord | undefined> {
    const row = this.stmts.get.get(namespace, flowId, triggerId) as Row | undefined;
    return row && toRecord(row);
  }

  async list(query: { namespace?: string; flowId?: string } = {}): Promise<TriggerStateRecord[]> {
    let rows: Row[];
    if (query.namespace && query.flowId) rows = this.stmts.byFlow.all(query.namespace, query.flowId) as Row[];
    else if (query.namespace) {
      const prefix = `${query.namespace.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
      rows = this.stmts.byNamespace.all({ ns: query.namespace, prefix }) as Row[];
    } else rows = this.stmts.all.all() as Row[];
    return rows.map(toRecord);
  }

  async put(rec: { namespace: string; flowId: string; triggerId: string; disabled?: boolean; state: Record<string, unknown> }, expected: number): Promise<TriggerStateRecord> {
    const params = {
      namespace: rec.namespace, flow_id: rec.flowId, trigger_id: rec.triggerId, disabled: rec.disabled ? 1 : 0,
      state: JSON.stringify(rec.state), updated: new Date().toISOString(), expected,
    };
    const changes = expected === 0 ? this.stmts.insert.run(params).changes : this.stmts.update.run(params).changes;
    if (changes === 0) throw new ConflictError(`Trigger ${rec.namespace}.${rec.flowId}.${rec.triggerId} changed since version ${expected}`);
    return (await this.get(rec.namespace, rec.flowId, rec.triggerId))!;
  }

  async delete(namespace: string, flowId: string, triggerId: string): Promise<boolean> {
    return this.stmts.delete.run(namespace, flowId, triggerId).changes > 0;
  }

  async mark(scope: string, key: string): Promise<boolean> {
    return this.stmts.mark.run(scope, key, new Date().toISOString()).changes > 0;
  }

  async isMarked(scope: string, key: string): Promise<boolean> {
    return this.stmts.isMarked.get(scope, key) !== undefined;
  }

  async unmark(scope: string, key: string): Promise<void> {
    this.stmts.unmark.run(scope, key);
  }

  async purgeMarks(scope: string, before: string, limit = 1000): Promise<number> {
    return this.stmts.purge.run({ scope, before, limit }).changes;
  }
}
