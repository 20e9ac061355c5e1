// Helpers of cluster test files: the teardown and an API call (kept apart from cluster.ts, which the bench imports
// outside vitest).
import { expect } from 'vitest';
import type { TestCluster } from './cluster.js';

/** Closes the cluster, then fails when the chart's RBAC denied any request made in it. */
export async function closeCluster(c: TestCluster | undefined): Promise<void> {
  const denied = [...new Set(c?.denied ?? [])];
  await c?.close();
  expect(denied, 'requests the chart RBAC denied').toEqual([]);
}

/** A JSON call to the cluster's API (`path` under its /api/v1 base); a status of 300 or more throws with the body. */
export async function apiCall(c: TestCluster, path: string, init?: RequestInit): Promise<any> {
  const res = await fetch(`${c.base}${path}`, init);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}
