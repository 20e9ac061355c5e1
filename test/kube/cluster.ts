// Test support: cluster mode end to end on this machine. The Kubernetes API test server (CRDs from crds/), the simulated
// kubelet running task Pods as local processes, a real PostgreSQL log store and a real S3-protocol bucket (s3rver),
// one or more operator replicas (leader election on a Lease, executions spread over them in partitions, each replica
// with its own token, stores and identity) and the Koa API over its own custom-resource stores.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { createApp } from '../../api/app.js';
import { startServer } from '../../api/server.js';
import { initExpressions } from '../../operator/expr/index.js';
import { openKubeStores, type KubeStores } from '../../operator/kube/store/index.js';
import { envSecrets, maskedStores, type MaskedStores } from '../../operator/secrets/index.js';
import { startOperator, type RunningOperator } from '../../operator/kube/operator.js';
import { S3Storage } from '../../operator/storage/s3.js';
import { PgLogStore } from '../../operator/store/postgres/logs.js';
import { PgExecutionArchive } from '../../operator/kube/archive/pg-archive.js';
import { startPostgres, startS3rver, type Service } from '../support/services.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';
import { chartAuthorizer, COMPONENT_ROLES } from './chart-rbac.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const CLUSTER_NS = 'flowpilot';
/** The Secret holding ENCRYPTION_KEY, as the chart creates it (operators and the API get it by env, task Pods by reference). */
export const ENCRYPTION_SECRET = { name: 'flowpilot-encryption-key', key: 'key' } as const;
export const BUCKET = 'flowpilot';

export interface ClusterOptions {
  /** Operator replicas started (each with its own stores, competing for the Lease). */
  replicas?: number;
  /** Keys of the flow-secrets Secret (plain values). */
  secrets?: Record<string, string>;
  leaseDurationSec?: number;
  /** OPERATOR_PARTITIONS of every replica (default 16); false: the leader runs every execution (no partitions). */
  partitions?: number | false;
  /** Execution history in the PostgreSQL database (operators and the API read it; the leader archives and deletes). */
  archive?: ArchiveSettings;
  /** More env of task Pods (e.g. RUNNER_START_TIMEOUT_MS) and of the operators (e.g. TASK_INFRA_RETRIES). */
  podEnv?: Record<string, string>;
  operatorEnv?: Record<string, string>;
}

export interface ArchiveSettings { ttlSeconds: number; sweepIntervalMs?: number }

export interface TestCluster {
  server: KubeTestServer;
  /** Admin credentials (the test itself). */
  kc: KubeConfig;
  /** Requests the chart's RBAC denied (operator, API and task Pods each use their own token). */
  denied: string[];
  kubelet: SimulatedKubelet;
  operators: RunningOperator[];
  /** API base URL ending in /api/v1. */
  base: string;
  apiStores: MaskedStores<KubeStores>;
  logs: PgLogStore;
  storage: S3Storage;
  /** The execution history table, when `archive` was set. */
  archive?: PgExecutionArchive;
  /** A pool on the cluster's PostgreSQL (tests reading the tables). */
  pg: pg.Pool;
  /** Starts one more operator replica (e.g. after stopping one), with its own archive settings if given. */
  addOperator(identity?: string, archive?: ArchiveSettings): Promise<RunningOperator>;
  /** Stops a replica as kill -9 would for the others: its Leases are left to expire (it is removed from `operators`). */
  crash(op: RunningOperator): Promise<void>;
  leader(): RunningOperator | undefined;
  close(): Promise<void>;
}

export async function startCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  await initExpressions();
  const tmp = mkdtempSync(join(tmpdir(), 'cluster-'));
  const services: Service[] = [];
  const denied: string[] = [];
  const tokens = Object.fromEntries([['admin', 'admin'], ...Object.keys(COMPONENT_ROLES).map((u) => [u, u])].map(([u]) => [`${u}-token`, { username: u! }]));
  const server = await startKubeTestServer({ tokens, authorize: chartAuthorizer(denied), authorizeRequests: true, ownerReferencesPermissionEnforcement: true });
  const kc = server.kubeConfig('admin-token');
  const kubeconfig = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig('task-token').exportConfig());
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: CLUSTER_NS } } }).catch(() => undefined);
  const encryptionKey = randomBytes(32).toString('base64');
  await core.createNamespacedSecret({ namespace: CLUSTER_NS, body: { metadata: { name: ENCRYPTION_SECRET.name }, stringData: { [ENCRYPTION_SECRET.key]: encryptionKey } } });
  if (opts.secrets) {
    await core.createNamespacedSecret({ namespace: CLUSTER_NS, body: { metadata: { name: 'flowpilot-secrets' }, stringData: opts.secrets } });
  }
  const [pgSvc, s3] = await Promise.all([startPostgres(), startS3rver()]);
  services.push(pgSvc, s3);
  const storageOpts = { endpoint: s3.url, bucket: BUCKET, accessKey: 'S3RVER', secretKey: 'S3RVER' };
  const kubelet = await startSimulatedKubelet({ kc, namespace: CLUSTER_NS, pathMap: { '/app': ROOT } });
  const pools: pg.Pool[] = [];
  const openLogs = async () => {
    const pool = new pg.Pool({ connectionString: pgSvc.url, max: 4 });
    pools.push(pool);
    const logs = new PgLogStore(pool);
    await logs.init();
    return logs;
  };
  const storage = new S3Storage(storageOpts);
  await storage.ensureBucket();
  const podEnv = [
    ...Object.entries({
      STORAGE_S3_ENDPOINT: s3.url, STORAGE_S3_BUCKET: BUCKET, STORAGE_S3_ACCESS_KEY_ID: 'S3RVER', STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
      LOG_STORE_URL: pgSvc.url, WATCH_NAMESPACE: CLUSTER_NS, KUBECONFIG: kubeconfig, PATH: process.env.PATH ?? '', ...opts.podEnv,
    }).map(([name, value]) => ({ name, value })),
    { name: 'ENCRYPTION_KEY', valueFrom: { secretKeyRef: { ...ENCRYPTION_SECRET } } },
  ];
  const operators: RunningOperator[] = [];
  let n = 0;
  const openArchive = async () => {
    const pool = new pg.Pool({ connectionString: pgSvc.url, max: 4 });
    pools.push(pool);
    const archive = new PgExecutionArchive(pool);
    await archive.init();
    return archive;
  };
  const addOperator = async (identity = `operator-${n++}`, archived = opts.archive) => {
    const op = await startOperator({
      ...(archived ? { archive: { archive: await openArchive(), ttlSeconds: archived.ttlSeconds, sweepIntervalMs: archived.sweepIntervalMs ?? 200 } } : {}),
      kc: server.kubeConfig('operator-token'), namespace: CLUSTER_NS, identity, storage: new S3Storage(storageOpts), logs: await openLogs(),
      launcher: { runnerImage: 'flowpilot-runner:test', env: podEnv, terminationGracePeriodSeconds: 5 },
      leaderElection: { enabled: true, leaseName: 'flowpilot-operator', leaseDurationSec: opts.leaseDurationSec ?? 6, renewEverySec: 1 },
      ...(opts.partitions === false ? {} : { partitions: opts.partitions ?? 16 }),
      env: { PATH: process.env.PATH, ENCRYPTION_KEY: encryptionKey, ...opts.operatorEnv },
      onError: (err, where) => console.error(`[${identity}] ${where}:`, (err as Error)?.message ?? err),
    });
    operators.push(op);
    return op;
  };
  for (let i = 0; i < (opts.replicas ?? 1); i++) await addOperator();
  const logs = await openLogs();
  const archive = opts.archive ? await openArchive() : undefined;
  const apiStores = maskedStores(await openKubeStores({ kc: server.kubeConfig('api-token'), namespace: CLUSTER_NS, logs, storage, ...(archive ? { archive } : {}) }), envSecrets({ ENCRYPTION_KEY: encryptionKey }));
  await apiStores.ready();
  const api = await startServer(createApp({ stores: apiStores }), 0, '127.0.0.1');
  return {
    server, kc, denied, kubelet, operators, base: `http://127.0.0.1:${api.port}/api/v1`, apiStores, logs, storage, addOperator,
    ...(archive ? { archive } : {}), pg: pools[pools.length - 1]!,
    leader: () => operators.find((o) => o.isLeader()),
    async crash(op) {
      operators.splice(operators.indexOf(op), 1);
      await op.stop({ release: false });
    },
    async close() {
      await api.close();
      for (const op of operators) await op.stop().catch(() => undefined);
      await apiStores.close();
      await kubelet.stop();
      await server.close();
      for (const p of pools) await p.end().catch(() => undefined);
      await storage.close();
      for (const s of services) await s.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
