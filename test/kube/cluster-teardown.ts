// A cluster test's teardown (kept apart from cluster.ts, which the bench imports outside vitest).
import { expect } from 'vitest';
import type { TestCluster } from './cluster.js';

/** Closes the cluster, then fails when the chart's RBAC denied any request made in it. */
export async function closeCluster(c: TestCluster | undefined): Promise<void> {
  const denied = [...new Set(c?.denied ?? [])];
  await c?.close();
  expect(denied, 'requests the chart RBAC denied').toEqual([]);
}
