// The records of active executions the controller keeps between their batches, least recently written first out, so
// that their task runs together stay within EXECUTION_CACHE_MAX_TASK_RUNS (core/limits.ts): a record let go is read
// back from the store at its execution's next event. Many wide executions waiting at once (paused, or waiting on long
// tasks) no longer keep every run of every one of them in memory. The record just kept is never the one let go, so a
// record larger than the bound still steps from memory (and its successor replaces it).
import type { StoredExecution } from '../store/types.js';

export class RecordCache {
  private readonly records = new Map<string, StoredExecution>();
  private runs = 0;

  /** `onLetGo`: told of each record let go for the bound (not of those deleted). */
  constructor(private readonly maxTaskRuns: number, private readonly onLetGo?: (id: string) => void) {}

  get(id: string): StoredExecution | undefined { return this.records.get(id); }

  has(id: string): boolean { return this.records.has(id); }

  /** Keeps `stored` as the most recent record, then lets the least recent others go while the bound is passed. */
  set(id: string, stored: StoredExecution): void {
    this.delete(id);
    this.records.set(id, stored);
    this.runs += stored.execution.taskRunList.length;
    for (const [other, record] of this.records) {
      if (this.runs <= this.maxTaskRuns) break;
      if (other === id) continue;
      this.records.delete(other);
      this.runs -= record.execution.taskRunList.length;
      this.onLetGo?.(other);
    }
  }

  delete(id: string): void {
    const old = this.records.get(id);
    if (!old) return;
    this.records.delete(id);
    this.runs -= old.execution.taskRunList.length;
  }

  /** Task runs of the records kept. */
  get taskRuns(): number { return this.runs; }

  get size(): number { return this.records.size; }
}
