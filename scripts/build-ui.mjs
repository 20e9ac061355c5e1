// Builds the web UI (ui/, React + Vite) into ui/dist, which the API serves under /ui (api/ui.ts). Run by `npm install`
// (postinstall) and `npm run build:ui`; prints one line. A production install without the build tools (`npm ci
// --omit=dev`, as the image's dependency stage does) skips it: the image builds the UI in a stage of its own.
//   node scripts/build-ui.mjs
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');

export async function buildUi() {
  const { build } = await import('vite');
  const started = Date.now();
  const out = await build({ configFile: resolve(ROOT, 'ui/vite.config.ts'), logLevel: 'warn' });
  const outputs = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output ?? []);
  return { outDir: resolve(ROOT, 'ui/dist'), files: outputs.length, ms: Date.now() - started };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let vite = true;
  try { await import('vite'); } catch { vite = false; }
  if (!vite) {
    console.log('web UI not built: vite is not installed (a production install); run `npm install` then `npm run build:ui`');
  } else {
    const { outDir, files, ms } = await buildUi();
    console.log(`built the web UI (${files} files) into ${relative(process.cwd(), outDir) || '.'} in ${ms} ms`);
  }
}
