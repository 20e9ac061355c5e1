// The two external services of cluster mode, opened one way for the operator, the API and task Pods: the internal
// storage bucket (S3 through minio) and the PostgreSQL log store (whose database also holds the execution history).
import pg from 'pg';
import { S3Storage, type S3StorageOptions } from '../storage/s3.js';
import { PgLogStore } from '../store/postgres/logs.js';
import { PgExecutionArchive } from './archive/pg-archive.js';

export interface ClusterEdges {
  storage: S3Storage;
  logs: PgLogStore;
  /** Execution history (finished executions off etcd), on the log store's database. */
  archive: PgExecutionArchive;
  /** Flushes buffered logs, then closes the pool and the storage client. */
  close(): Promise<void>;
}

export interface ClusterEdgesOptions {
  storage: S3StorageOptions;
  logStoreUrl: string;
  /** PostgreSQL connections at most (default 5). */
  maxConnections?: number;
  /** Create the bucket when missing (the operator does; the API and task Pods expect it). */
  ensureBucket?: boolean;
  /** Create the log and execution history tables and indexes when missing (operator and API; task Pods only append). */
  initLogs?: boolean;
}

export async function openClusterEdges(o: ClusterEdgesOptions): Promise<ClusterEdges> {
  const storage = new S3Storage(o.storage);
  const pool = new pg.Pool({ connectionString: o.logStoreUrl, max: o.maxConnections ?? 5 });
  const logs = new PgLogStore(pool);
  const archive = new PgExecutionArchive(pool);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try { await logs.close(); } finally {
      await pool.end();
      await storage.close();
    }
  };
  try {
    if (o.ensureBucket) await storage.ensureBucket();
    if (o.initLogs) { await logs.init(); await archive.init(); }
  } catch (err) {
    await close();
    throw err;
  }
  return { storage, logs, archive, close };
}
