// Compiles the TypeScript sources that run in production (operator/, api/, runner-image/; tests excluded) to plain
// ES modules in dist/, file for file, so images start `node dist/...` without compiling at every start (tsx takes
// seconds per Pod). Imports keep their `.js` specifiers, which now name real files. Type checking stays `npm run
// typecheck`; this only strips types (esbuild), the same transform tsx applies at run time.
// The entry points of task Pods (POD_ENTRIES) are then bundled over their compiled copy: one file with the code and
// the packages it imports, but native addons and packages loaded by path at run time (RUN_TIME_PACKAGES). A Pod is a new
// process per task attempt, and resolving and loading the ~1,800 files the task runner imports took ~1.3 s of CPU
// before the task began; bundled, it loaded in about half the time (0.9-1.0 s against 1.8-1.9 s, same load;
// `BENCH=kube npm run bench` prints both).
//   node scripts/build.mjs [outDir]      (default dist/)
import { readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const SOURCES = ['operator', 'api', 'runner-image'];
/** Started as a process per task attempt: bundled (see above). */
const POD_ENTRIES = ['runner-image/runner.ts', 'operator/inference/kube/runner.ts'];
/**
 * Left out of the bundles, imported from node_modules at run time: native addons (and their optional peers), and
 * packages our code resolves or patches by path (`require.resolve`, `require.cache`), which must be the copy on disk.
 */
const RUN_TIME_PACKAGES = [
  'better-sqlite3', 'node-llama-cpp', '@node-llama-cpp/*', 'ssh2', 'cpu-features', 'pg-native', 'pg-cloudflare',
  'exceljs', 'exceljs/*', 'saxes', 'nunjucks', 'nunjucks/*', 'jq-web', 'jq-web/*',
];
const isTest = (name) => /\.(test|child)\.ts$/.test(name) || /(^|\/)(test-support|test-harness|test-fixtures|bench)\.ts$/.test(name);

const sources = (dir) => readdirSync(dir, { recursive: true })
  .map((name) => join(dir, name))
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts') && !isTest(relative(ROOT, path)));

/** `bundle: false` leaves the Pod entry points file for file too (the bench compares both). */
export async function buildDist(outDir = join(ROOT, 'dist'), { bundle = true } = {}) {
  const entryPoints = SOURCES.flatMap((d) => sources(join(ROOT, d)));
  rmSync(outDir, { recursive: true, force: true });
  await build({
    entryPoints, outdir: outDir, outbase: ROOT, bundle: false, format: 'esm', platform: 'node', target: 'node20',
    sourcemap: 'linked', logLevel: 'warning',
  });
  if (bundle) await build({
    entryPoints: POD_ENTRIES.map((e) => join(ROOT, e)), outdir: outDir, outbase: ROOT, bundle: true, format: 'esm', platform: 'node',
    target: 'node20', sourcemap: 'linked', logLevel: 'warning', allowOverwrite: true, external: RUN_TIME_PACKAGES,
    // the CommonJS packages in the bundle call require() for node's own modules
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  });
  return { outDir, files: entryPoints.length };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir, files } = await buildDist(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`built ${files} modules into ${relative(process.cwd(), outDir) || '.'}`);
}
