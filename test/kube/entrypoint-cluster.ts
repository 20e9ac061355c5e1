// Test support: the cluster-mode entry points as deployed (`operator/kube/main.ts` and `api/kube-main.ts` started from
// the chart's environment) against the Kubernetes API test server (TokenReview and SubjectAccessReview), a real
// PostgreSQL log store and S3 bucket, task Pods run as local processes by the simulated kubelet. Callers of /api/v1
// need a bearer token `<user>-token`; what each user may do is the chart's Roles unless `authorize` decides.
import { CoreV1Api } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { main as apiMain } from '../../api/kube-main.js';
import { main as operatorMain } from '../../operator/kube/main.js';
import { startPostgres, startS3rver, type Service } from '../support/services.js';
import { chartAuthorizer, COMPONENT_ROLES } from './chart-rbac.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type AuthzAttributes, type KubeTestServer } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The Kubernetes namespace flowpilot runs in (WATCH_NAMESPACE). */
export const ENTRY_NS = 'flowpilot';

export interface EntrypointClusterOptions {
  /** Users besides `admin` and the chart's components, each with the token `<user>-token`. */
  users?: string[];
  /** Decides a user's SubjectAccessReview; `undefined` leaves it to the chart's Roles (admin may do anything). */
  authorize?: (a: AuthzAttributes) => boolean | undefined;
  /** More env of the API process, given a private directory (e.g. the admission webhook's certificate files). */
  apiEnv?: (dir: string) => Record<string, string>;
}

export interface EntrypointCluster {
  server: KubeTestServer;
  kubelet: SimulatedKubelet;
  op: Awaited<ReturnType<typeof operatorMain>>;
  api: Awaited<ReturnType<typeof apiMain>>;
  /** Requests the chart's Roles denied. */
  denied: string[];
  close(): Promise<void>;
}

export async function startEntrypointCluster(opts: EntrypointClusterOptions = {}): Promise<EntrypointCluster> {
  const denied: string[] = [];
  const chart = chartAuthorizer(denied);
  const tokens = Object.fromEntries(['admin', ...Object.keys(COMPONENT_ROLES), ...(opts.users ?? [])].map((u) => [`${u}-token`, { username: u }]));
  const server = await startKubeTestServer({
    tokens, authorizeRequests: true, ownerReferencesPermissionEnforcement: true,
    authorize: (a) => opts.authorize?.(a) ?? chart(a),
  });
  const services: Service[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'entry-'));
  let kubelet: SimulatedKubelet | undefined;
  let op: EntrypointCluster['op'] | undefined;
  let api: EntrypointCluster['api'] | undefined;
  const close = async () => {
    await api?.close();
    await op?.close();
    await kubelet?.stop();
    await server.close();
    for (const s of services) await s.stop();
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    const admin = server.kubeConfig('admin-token');
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ENTRY_NS } } });
    // The bucket key pair as the chart passes it: a Secret, named in RUNNER_ENV_FROM_SECRETS (task Jobs carry references).
    await core.createNamespacedSecret({ namespace: ENTRY_NS, body: { metadata: { name: 'flowpilot-s3' }, stringData: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' } } });
    const [pg, s3] = await Promise.all([startPostgres(), startS3rver()]);
    services.push(pg, s3);
    writeFileSync(join(tmp, 'kubeconfig'), server.kubeConfig('task-token').exportConfig());
    kubelet = await startSimulatedKubelet({ kc: admin, namespace: ENTRY_NS, pathMap: { '/app': ROOT } });
    const env = {
      FLOWPILOT_MODE: 'cluster', WATCH_NAMESPACE: ENTRY_NS, POD_NAME: 'operator-0', METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', PORT: '0', HOST: '127.0.0.1',
      LEADER_ELECTION_LEASE_NAME: 'flowpilot-operator', RUNNER_IMAGE: 'flowpilot-runner:test',
      STORAGE_S3_ENDPOINT: s3.url, STORAGE_S3_BUCKET: 'flowpilot', STORAGE_S3_ACCESS_KEY_ID: 'S3RVER', STORAGE_S3_SECRET_ACCESS_KEY: 'S3RVER',
      LOG_STORE_URL: pg.url, PATH: process.env.PATH, KUBECONFIG: join(tmp, 'kubeconfig'),
      RUNNER_ENV_FROM_SECRETS: JSON.stringify({
        STORAGE_S3_ACCESS_KEY_ID: { name: 'flowpilot-s3', key: 'AWS_ACCESS_KEY_ID' }, STORAGE_S3_SECRET_ACCESS_KEY: { name: 'flowpilot-s3', key: 'AWS_SECRET_ACCESS_KEY' },
      }),
    };
    op = await operatorMain(env, server.kubeConfig('operator-token'));
    api = await apiMain({ ...env, ...opts.apiEnv?.(tmp) }, server.kubeConfig('api-token'));
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return { server, kubelet, op, api, denied, close };
}
