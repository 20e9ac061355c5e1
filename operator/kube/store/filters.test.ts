// Kestra's search filters on the cluster stores (Kubernetes API test server, informer caches): executions and flows
// answer the shared cases of test/support/filter-cases.ts as the SQLite stores do.
import { afterAll, beforeAll, describe } from 'vitest';
import { executionFilterCases, filterExecutions, filterFlows, flowFilterCases } from '../../../test/support/filter-cases.js';
import { type StoreHarness, startStoreHarness } from './test-support.js';

let h: StoreHarness;
beforeAll(async () => {
  h = await startStoreHarness();
  for (const e of filterExecutions()) await h.stores.executions.create(e);
  for (const { flow, source } of filterFlows()) await h.stores.flows.save(flow, source);
});
afterAll(async () => { await h?.close(); });

describe('cluster execution search filters', () => {
  executionFilterCases(async (filters) => {
    const page = await h.stores.executions.search({ filters });
    return { ids: page.results.map((e) => e.id), total: page.total };
  });
});

describe('cluster flow search filters', () => {
  flowFilterCases(async (filters) => {
    const page = await h.stores.flows.search({ filters });
    return { ids: page.results.map((r) => r.id), total: page.total };
  });
});
