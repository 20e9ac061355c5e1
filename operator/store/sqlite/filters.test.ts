// Kestra's search filters on the SQLite stores (executions, flows, logs): the shared cases of test/support/filter-cases.ts
// on a real database file, REGEX through the registered RE2 function.
import { afterAll, beforeAll, describe } from 'vitest';
import {
  executionFilterCases, filterExecutions, filterFlows, filterLogLines, flowFilterCases, logFilterCases,
} from '../../../test/support/filter-cases.js';
import { openEmbeddedStores, type EmbeddedStores } from './index.js';
import { tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeAll(async () => {
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  for (const e of filterExecutions()) await stores.executions.create(e);
  for (const { flow, source } of filterFlows()) await stores.flows.save(flow, source);
  stores.logs.append(filterLogLines());
});
afterAll(async () => { await stores.close(); tmp.remove(); });

describe('SQLite execution search filters', () => {
  executionFilterCases(async (filters) => {
    const page = await stores.executions.search({ filters });
    return { ids: page.results.map((e) => e.id), total: page.total };
  });
});

describe('SQLite flow search filters', () => {
  flowFilterCases(async (filters) => {
    const page = await stores.flows.search({ filters });
    return { ids: page.results.map((r) => r.id), total: page.total };
  });
});

describe('SQLite log search filters', () => {
  logFilterCases(async (filters) => {
    const page = await stores.logs.search({ filters });
    return { messages: page.results.map((l) => l.message), total: page.total };
  });
});
