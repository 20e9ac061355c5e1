// The repository's generated CRDs (crds/*.yaml) load into the test server as structural schemas and serve every kind
// of operator/kube/names.ts; a minimal object of each kind round-trips.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS, GROUP, VERSION } from '../../../operator/kube/names.js';
import { checkCrdDir, compileCrd, loadCrdFiles, startKubeTestServer, type KubeTestServer } from './index.js';

const dir = fileURLToPath(new URL('../../../crds', import.meta.url));
let srv: KubeTestServer;
beforeAll(async () => { srv = await startKubeTestServer({ crdDir: dir }); });
afterAll(async () => { await srv?.close(); });

describe.runIf(existsSync(dir))('repository CRDs', () => {
  it('are structural', () => {
    const crds = loadCrdFiles(dir);
    expect(crds.length).toBeGreaterThanOrEqual(Object.keys(KINDS).length);
    for (const crd of crds) expect(() => compileCrd(crd)).not.toThrow();
    expect(checkCrdDir(dir)).toEqual(expect.arrayContaining(Object.values(KINDS).map((k) => `${k.plural}.${GROUP}`)));
  });

  it('serve every kind with its plural and short names', async () => {
    const doc: any = await (await fetch(`${srv.url}/apis/${GROUP}/${VERSION}`)).json();
    for (const k of Object.values(KINDS)) {
      expect(doc.resources.find((r: any) => r.name === k.plural)).toMatchObject({ kind: k.kind, namespaced: true, shortNames: [...k.shortNames] });
    }
  });
});
