// Writes the CRDs of operator/kube/crds.ts to crds/ and charts/flowpilot/crds/ (Helm installs a chart's crds/ first).
// `npx tsx scripts/gen-crds.ts --check` only reports files that differ (exit code 1).
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCrdFiles } from '../operator/kube/crds.js';

const ROOT = new URL('..', import.meta.url).pathname;
export const CRD_DIRS = ['crds', 'charts/flowpilot/crds'];

const check = process.argv.includes('--check');
const files = renderCrdFiles();
let stale = 0;
for (const dir of CRD_DIRS) {
  const abs = join(ROOT, dir);
  mkdirSync(abs, { recursive: true });
  for (const old of readdirSync(abs)) {
    if (old.endsWith('.flowpilot.io.yaml') && !(old in files)) {
      stale++;
      if (check) console.log(`extra: ${dir}/${old}`); else rmSync(join(abs, old));
    }
  }
  for (const [name, text] of Object.entries(files)) {
    const path = join(abs, name);
    let current: string | undefined;
    try { current = readFileSync(path, 'utf8'); } catch { current = undefined; }
    if (current === text) continue;
    stale++;
    if (check) console.log(`differs: ${dir}/${name}`);
    else { writeFileSync(path, text); console.log(`wrote ${dir}/${name}`); }
  }
}
if (check && stale > 0) process.exit(1);
