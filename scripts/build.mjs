// Compiles the TypeScript sources that run in production (operator/, api/, runner-image/; tests excluded) to plain
// ES modules in dist/, file for file, so images start `node dist/...` without compiling at every start (tsx takes
// seconds per Pod). Imports keep their `.js` specifiers, which now name real files. Type checking stays `npm run
// typecheck`; this only strips types (esbuild), the same transform tsx applies at run time.
//   node scripts/build.mjs [outDir]      (default dist/)
import { readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const SOURCES = ['operator', 'api', 'runner-image'];
const isTest = (name) => /\.(test|child)\.ts$/.test(name) || /(^|\/)(test-support|test-harness|test-fixtures|bench)\.ts$/.test(name);

const sources = (dir) => readdirSync(dir, { recursive: true })
  .map((name) => join(dir, name))
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts') && !isTest(relative(ROOT, path)));

export async function buildDist(outDir = join(ROOT, 'dist')) {
  const entryPoints = SOURCES.flatMap((d) => sources(join(ROOT, d)));
  rmSync(outDir, { recursive: true, force: true });
  await build({
    entryPoints, outdir: outDir, outbase: ROOT, bundle: false, format: 'esm', platform: 'node', target: 'node20',
    sourcemap: 'linked', logLevel: 'warning',
  });
  return { outDir, files: entryPoints.length };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir, files } = await buildDist(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`built ${files} modules into ${relative(process.cwd(), outDir) || '.'}`);
}
