// The black-box flow fixtures (test/flows/*.yaml) in cluster mode: flows and executions are custom resources on the
// Kubernetes API test server, each runnable task attempt is a Job whose Pod the simulated kubelet runs as a local
// process (the runner program), logs go to PostgreSQL and files to an S3 bucket. The operator, the API and the task Pods
// each use their own token, authorized by exactly the Helm chart's RBAC rules.
import { FIXTURE_SECRETS, fixtureSuite } from '../flows/fixture-suite.js';
import { startCluster } from './cluster.js';

fixtureSuite('cluster', async () => {
  const secrets = Object.fromEntries(Object.entries(FIXTURE_SECRETS).map(([k, v]) => [k.replace(/^SECRET_/, ''), Buffer.from(v, 'base64').toString()]));
  const c = await startCluster({ secrets });
  await Promise.race([c.operators[0]!.whenLeading(), new Promise((r) => setTimeout(r, 20_000))]);
  return {
    base: c.base, flushLogs: () => c.logs.flush(),
    async close() {
      const denied = [...new Set(c.denied)];
      await c.close();
      // Operator, API and task Pods each run with their own token under the chart's RBAC rules.
      if (denied.length) throw new Error(`The chart's RBAC denied: ${denied.join('; ')}`);
    },
  };
}, { timeoutMs: 60_000 });
