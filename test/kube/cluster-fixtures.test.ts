// The black-box flow fixtures (test/flows/*.yaml) in cluster mode: flows and executions are custom resources on the
// Kubernetes API test server, each runnable task attempt is a Job whose Pod the simulated kubelet runs as a local
// process (the runner program), logs go to PostgreSQL and files to an S3 bucket. The operator, the API and the task Pods
// each use their own token, authorized by exactly the Helm chart's RBAC rules. Three fixtures run at once (each has flows
// and namespaces of its own): a fixture keeps about one core busy starting its task Pods, each a process of its own.
import { vi } from 'vitest';
import { FIXTURE_SECRETS, fixtureSuite } from '../flows/fixture-suite.js';
import { startCluster } from './cluster.js';

// fixtureSuite's `timeoutMs` bounds each wait for an execution (up to three per fixture: kill, resume, end), not the
// test: without this the vitest default (30 s) applied, while one fixture already took 23 s on a loaded 2-core CI
// machine. The cluster start (PostgreSQL, S3, the operator taking the Lease) gets as wide a margin.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 180_000 });

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
}, { timeoutMs: 90_000, concurrency: 3 });
