// The durable registry of embedded task process groups on SQLite (table task_processes): one row per live group,
// written synchronously right after spawn and before the process is let run, deleted once the group is gone.
import type { ProcessRegistry, TaskProcess } from '../types.js';
import type { Db } from './db.js';

interface Row {
  id: string; execution_id: string; task_run_id: string; attempt: number; pid: number; start_time: number; boot_id: string; created: string;
}

const toProcess = (r: Row): TaskProcess => ({
  id: r.id, executionId: r.execution_id, taskRunId: r.task_run_id, attempt: r.attempt, pid: r.pid,
  startTime: r.start_time, bootId: r.boot_id, created: r.created,
});

export class SqliteProcessRegistry implements ProcessRegistry {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      add: db.prepare(`INSERT INTO task_processes (id, execution_id, task_run_id, attempt, pid, start_time, boot_id, created)
        VALUES (@id, @executionId, @taskRunId, @attempt, @pid, @startTime, @bootId, @created)`),
      remove: db.prepare('DELETE FROM task_processes WHERE id = ?'),
      list: db.prepare('SELECT * FROM task_processes ORDER BY created, id'),
    };
  }

  add(p: TaskProcess): void { this.stmts.add.run(p); }

  remove(id: string): void { this.stmts.remove.run(id); }

  list(): TaskProcess[] { return (this.stmts.list.all() as Row[]).map(toProcess); }
}
