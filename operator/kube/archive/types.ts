// What the cluster execution store and the leader's sweeper need of the execution history (finished executions moved
// off etcd): the interface only, so the store does not depend on PostgreSQL (operator/kube/archive/pg-archive.ts).
import type { Execution } from '../../core/types.js';
import type { DailyStatsQuery, DailyStatsRow, ExecutionQuery } from '../../store/types.js';

/** The resource an archived record was read from: a later version (or a new incarnation) replaces the row. */
export interface ArchivedFrom { uid?: string; resourceVersion: number }

export interface ArchivePage {
  /** Matching records in the search order (start date newest first, then id descending). */
  results: Execution[];
  /** Matching records, the excluded ids left out. */
  total: number;
}

export interface ExecutionArchive {
  /** Stores (or replaces with a newer version) the full record of a finished execution; idempotent. */
  upsert(execution: Execution, from: ArchivedFrom): Promise<void>;
  get(id: string): Promise<Execution | undefined>;
  /** The resourceVersion each archived id was archived at (ids not archived are absent). */
  archivedVersions(ids: string[]): Promise<Map<string, number>>;
  /**
   * One page of the records matching `query` (filters as ExecutionStore.search), leaving out `exclude` (ids the live
   * resources answer for); `offset`/`limit` of the query apply to the archive alone.
   */
  search(query: ExecutionQuery, exclude: readonly string[]): Promise<ArchivePage>;
  /** Counts by UTC start day and state of the records matching `query`, leaving out `exclude` (as search). */
  dailyStats(query: DailyStatsQuery, exclude: readonly string[]): Promise<DailyStatsRow[]>;
  /** Removes the row; false when there was none. */
  delete(id: string): Promise<boolean>;
}
