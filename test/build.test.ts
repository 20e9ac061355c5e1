// The compiled output the images run (dist/, built by scripts/build.mjs in the test setup): every relative import
// names a file that exists, no test code is shipped, and the entry points start as plain node (no tsx).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');

/** The relative specifiers a module imports, block comments left out (bundled packages name `import('./x.js')` types in JSDoc). */
const relativeImports = (file: string): string[] =>
  [...readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').matchAll(/(?:from\s*|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);

describe('dist/', () => {
  const js = readdirSync(DIST, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js')).map((f) => join(DIST, f));

  it('holds every production module, and no tests', () => {
    const rel = js.map((f) => relative(DIST, f));
    for (const entry of ['runner-image/runner.js', 'operator/kube/main.js', 'api/kube-main.js', 'operator/main.js', 'operator/inference/kube/runner.js']) {
      expect(rel).toContain(entry);
    }
    expect(rel.filter((f) => /\.test\.js$|test-support|test-harness|test-fixtures/.test(f))).toEqual([]);
  });

  it('resolves every relative import to a compiled file', () => {
    const missing: string[] = [];
    for (const file of js) {
      for (const spec of relativeImports(file)) {
        if (!existsSync(resolve(dirname(file), spec))) missing.push(`${relative(DIST, file)} → ${spec}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(['runner-image/runner.js', 'operator/inference/kube/runner.js'])('%s, started once per task Pod, is one bundle: it imports no other compiled module', (entry) => {
    expect(relativeImports(join(DIST, entry))).toEqual([]);
    expect(readFileSync(join(DIST, entry), 'utf8')).toContain('// operator/'); // the code of operator/ is inside (esbuild names each bundled module)
  });

  it.each([
    ['runner-image/runner.js', /Internal storage is not configured in this runner/],
    ['operator/inference/kube/runner.js', /INFERENCE_JOB_NAME/],
    ['operator/kube/main.js', /STORAGE_S3_ENDPOINT is required in cluster mode/],
    ['api/kube-main.js', /STORAGE_S3_ENDPOINT is required in cluster mode/],
  ])('%s starts with plain node and names what it is missing', (entry, message) => {
    const run = spawnSync(process.execPath, [join(DIST, entry)], { cwd: ROOT, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
    expect(run.status).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(message);
    expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|ERR_UNKNOWN_FILE_EXTENSION|SyntaxError/);
  });
});
