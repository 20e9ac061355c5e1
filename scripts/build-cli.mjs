// Builds the CLI ahead of time, so `flowpilot` starts without compiling TypeScript: esbuild bundles cli/main.ts and
// what it imports into cli/dist/ (git-ignored), one chunk per lazily loaded part (the offline validator, the kubectl
// plugin mode...), with a manifest of every input. bin/flowpilot.mjs runs the build while `currentBuild` finds it
// current, else the sources through tsx. The embedded server (`flowpilot server`) stays out of the bundle: it runs
// from its sources through tsx, as `npm start` runs it. Run by `npm install` (postinstall) and the tests' global setup;
// a production install (no esbuild) skips it.
//   node scripts/build-cli.mjs
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
export const CLI_DIST = join(ROOT, 'cli', 'dist');
const ENTRY = 'cli/main.ts';
const MANIFEST = 'build.json';
/** Modules the bundle leaves to their sources (run through tsx): the embedded server's entry. */
const FROM_SOURCE = new Set(['operator/main.ts']);

/**
 * The built entry (a file URL) when `dir` holds a build whose inputs are all as they were built: same size and
 * modification time, or else the same content (a checkout that touched a file without changing it). Undefined when
 * there is no build, or one input changed, went missing or the manifest is unreadable. Costs one stat per input.
 */
export function currentBuild(dir = CLI_DIST) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'));
  } catch {
    return undefined;
  }
  const root = resolve(dir, manifest.root ?? '');
  for (const [path, { size, mtimeMs, sha256 }] of Object.entries(manifest.inputs ?? {})) {
    let st;
    try {
      st = statSync(join(root, path));
    } catch {
      return undefined;
    }
    if (st.size !== size) return undefined;
    if (st.mtimeMs !== mtimeMs && sha256Of(join(root, path)) !== sha256) return undefined;
  }
  const entry = join(dir, manifest.entry ?? '');
  return manifest.entry && existsSync(entry) ? new URL(`file://${entry}`).href : undefined;
}

function sha256Of(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Writes `data` to `file` through a temporary file and a rename, so a CLI starting meanwhile reads the old or the new. */
function writeAtomic(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/**
 * Bundles the CLI into `outDir` (default cli/dist/). Chunks are named by their content and written before the entry
 * and the manifest, so a CLI starting during a rebuild runs either build whole; chunks no build has referenced for a
 * day are removed.
 */
export async function buildCli(outDir = CLI_DIST) {
  const { build } = await import('esbuild');
  const started = Date.now();
  const fromSource = {
    name: 'from-source',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = relative(ROOT, resolve(args.resolveDir, args.path)).replace(/\.js$/, '.ts');
        if (!FROM_SOURCE.has(target)) return undefined;
        // The output sits in outDir (chunks beside the entry): the import names the source's .js, which tsx maps to .ts.
        return { path: relative(outDir, join(ROOT, target.replace(/\.ts$/, '.js'))), external: true };
      });
    },
  };
  const result = await build({
    absWorkingDir: ROOT, entryPoints: [ENTRY], bundle: true, splitting: true, format: 'esm', platform: 'node',
    target: 'node20', packages: 'external', outdir: outDir, entryNames: '[name]', chunkNames: '[name]-[hash]',
    sourcemap: 'linked', metafile: true, write: false, logLevel: 'warning', plugins: [fromSource],
  });
  const inputs = {};
  for (const path of [...Object.keys(result.metafile.inputs), relative(ROOT, fileURLToPath(import.meta.url))].sort()) {
    const file = join(ROOT, path);
    const st = statSync(file);
    inputs[path] = { size: st.size, mtimeMs: st.mtimeMs, sha256: sha256Of(file) };
  }
  const entry = `${ENTRY.replace(/^cli\//, '').replace(/\.ts$/, '')}.js`;
  const files = result.outputFiles.map((f) => ({ rel: relative(outDir, f.path), data: f.contents }));
  const last = (rel) => rel === entry || rel === `${entry}.map`;
  for (const f of [...files.filter((x) => !last(x.rel)), ...files.filter((x) => last(x.rel))]) writeAtomic(join(outDir, f.rel), f.data);
  writeAtomic(join(outDir, MANIFEST), `${JSON.stringify({ entry, root: relative(outDir, ROOT), inputs }, null, 1)}\n`);
  const keep = new Set([...files.map((f) => f.rel), MANIFEST]);
  for (const name of readdirSync(outDir)) {
    if (!keep.has(name) && Date.now() - statSync(join(outDir, name)).mtimeMs > 86_400_000) rmSync(join(outDir, name), { force: true });
  }
  return { outDir, files: files.length, inputs: Object.keys(inputs).length, ms: Date.now() - started };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let esbuild = true;
  try { await import('esbuild'); } catch { esbuild = false; }
  if (!esbuild || !existsSync(join(ROOT, ENTRY))) {
    console.log('CLI not built: esbuild or cli/ is missing (a production install); bin/flowpilot.mjs runs the sources through tsx');
  } else {
    const { outDir, files, inputs, ms } = await buildCli();
    console.log(`built the CLI (${inputs} inputs, ${files} files) into ${relative(process.cwd(), outDir) || '.'} in ${ms} ms`);
  }
}
