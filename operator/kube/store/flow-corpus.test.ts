// Every valid flow of the repository's fixtures and examples survives the Flow CRD schema unchanged (no pruning,
// no defaulting): what the API saves is exactly the document a later reconcile compares with, so it adds no revision.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseFlow } from '../../model/index.js';
import { flowDocument, sameDocument } from './flow-resources.js';
import { type StoreHarness, crd, startStoreHarness } from './test-support.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const DIRS = ['test/flows', 'examples/flows'];

function corpus(): { file: string; source: string }[] {
  return DIRS.flatMap((dir) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.yaml'))
    // Fixtures carry their expectations in a second YAML document.
    .map((f) => ({ file: `${dir}/${f}`, source: readFileSync(join(ROOT, dir, f), 'utf8').split(/^---$/m)[0]! })))
    .filter(({ source }) => { try { parseFlow(source); return true; } catch { return false; } });
}

let h: StoreHarness;
beforeAll(async () => { h = await startStoreHarness(); });
afterAll(async () => { await h.close(); });

it('stores every fixture flow as its exact document, and reconciling it adds no revision', async () => {
  const flows = corpus();
  expect(flows.length).toBeGreaterThan(20);
  const operator = await h.openPeer();
  for (const { file, source } of flows) {
    const flow = parseFlow(source);
    await h.stores.flows.save(flow, source);
    const obj = h.stores.flows.res.liveFlow(flow.namespace, flow.id)!;
    expect(JSON.parse(JSON.stringify(obj.spec)), file).toEqual(JSON.parse(JSON.stringify(flowDocument(source))));
  }
  // The operator (whose cache may lag behind the saves' status writes) reconciles them all: no revision is added.
  const revisions = h.stores.flows.res.revisions.list().length;
  await operator.flows.ensureRevisions();
  expect((await h.co.listNamespacedCustomObject({ ...crd('flowrevisions') }) as any).items).toHaveLength(revisions);
  // What reconcile compares: the stored spec is the same document as the latest revision's source.
  for (const { file, source } of flows) {
    const flow = parseFlow(source);
    const res = h.stores.flows.res;
    expect(sameDocument(res.latest(flow.namespace, flow.id), res.liveFlow(flow.namespace, flow.id)?.spec), file).toBe(true);
  }
});
