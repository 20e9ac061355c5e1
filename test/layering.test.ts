// Layering checks: the engine core, the model and the expressions stay pure (no I/O imports), and the API never
// imports the controller or the plugins (it only talks to the stores).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(join(ROOT, p)).isDirectory()) return files(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.includes('harness') ? [p] : [];
  });
}

const importsOf = (file: string) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);

const IO = /^(node:)?(fs|fs\/promises|child_process|http|https|net|dgram|worker_threads)$|^(better-sqlite3|koa|@koa\/router|minio|@kubernetes\/client-node|node-llama-cpp)$/;

describe.each([
  ['operator/core', ['operator/core', 'operator/model', 'operator/expr']],
  // The model reads the task type definitions from the plugin catalog, a leaf that imports no registry (catalog.ts).
  ['operator/model', ['operator/model', 'operator/core', 'operator/expr', 'operator/plugins/catalog.js', 'operator/plugins/define.js']],
  ['operator/expr', ['operator/expr', 'operator/core']],
])('%s', (dir, allowed) => {
  it.each(files(dir))('%s imports no I/O and stays in its layer', (file) => {
    for (const spec of importsOf(file)) {
      expect(spec, `${file} imports ${spec}`).not.toMatch(IO);
      if (!spec.startsWith('.')) continue;
      const target = relative(ROOT, join(ROOT, file, '..', spec));
      expect(allowed.some((a) => target.startsWith(a)), `${file} imports ${target}`).toBe(true);
    }
  });
});

it('the API does not import the controller or the plugins', () => {
  for (const file of files('api')) {
    for (const spec of importsOf(file)) {
      // The cluster API's entry point registers the task types of PLUGINS packages at startup, as every entry point does.
      if (file === 'api/kube-main.ts' && spec === '../operator/plugins/load.js') continue;
      expect(spec, `${file} imports ${spec}`).not.toMatch(/operator\/(controller|plugins)/);
    }
  }
});

it('every entry point imports the process hardening first', () => {
  const entries = ['operator', 'api', 'runner-image'].flatMap(files).filter((f) => /process\.argv\[1\]/.test(readFileSync(join(ROOT, f), 'utf8')));
  expect(entries.length).toBeGreaterThanOrEqual(5); // embedded, operator, cluster API, task runner, inference runner
  const firstImport = (file: string) => /^\s*import\s+(?:[^'"]*from\s+)?['"]([^'"]+)['"]/m.exec(readFileSync(join(ROOT, file), 'utf8'))?.[1];
  for (const file of entries) expect(firstImport(file), file).toMatch(/(^|\/)harden\.js$/);
});

it('the hardening refuses new properties on Object.prototype and keeps existing ones writable', async () => {
  await import('../operator/harden.js');
  expect(() => { (Object.prototype as Record<string, unknown>).polluted = 1; }).toThrow(TypeError);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  class Mine { }
  expect(() => { (Mine.prototype as unknown as { toString: () => string }).toString = () => 'mine'; }).not.toThrow();
});
