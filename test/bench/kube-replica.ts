// One operator replica in its own process, for the scale-out bench (test/bench/kube-scale.ts): started with fork(),
// configured by FLOWPILOT_BENCH_REPLICA (JSON: kubeconfig file, namespace, identity, S3, PostgreSQL, partitions), it
// reports 'ready' and, when asked 'cpu', its CPU time; SIGTERM stops it cleanly.
import { KubeConfig } from '@kubernetes/client-node';
import pg from 'pg';
import { initExpressions } from '../../operator/expr/index.js';
import { startOperator } from '../../operator/kube/operator.js';
import { S3Storage, type S3StorageOptions } from '../../operator/storage/s3.js';
import { PgLogStore } from '../../operator/store/postgres/logs.js';

export interface ReplicaConfig {
  kubeconfig: string; namespace: string; identity: string; storage: S3StorageOptions; logStoreUrl: string;
  partitions: number; env: Record<string, string>;
}

const cfg = JSON.parse(process.env.FLOWPILOT_BENCH_REPLICA ?? '{}') as ReplicaConfig;
await initExpressions();
const kc = new KubeConfig();
kc.loadFromFile(cfg.kubeconfig);
const pool = new pg.Pool({ connectionString: cfg.logStoreUrl, max: 4 });
const logs = new PgLogStore(pool);
await logs.init();
const op = await startOperator({
  kc, namespace: cfg.namespace, identity: cfg.identity, storage: new S3Storage(cfg.storage), logs,
  launcher: { runnerImage: 'flowpilot-runner:bench' }, secretsSecretName: null, triggers: false,
  leaderElection: { enabled: true, leaseName: 'flowpilot-operator', leaseDurationSec: 6, renewEverySec: 1 },
  partitions: cfg.partitions, env: { PATH: process.env.PATH ?? '', ...cfg.env },
  onError: (err, where) => console.error(`[${cfg.identity}] ${where}:`, (err as Error)?.message ?? err),
});
process.send?.({ type: 'ready' });
process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu') { const u = process.cpuUsage(); process.send?.({ type: 'cpu', ms: (u.user + u.system) / 1000, partitions: op.partitions() }); }
});
process.on('SIGTERM', () => { void op.stop().then(() => pool.end()).finally(() => process.exit(0)); });
