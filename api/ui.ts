// Serves the web UI (the Vite build in ui/dist) from the API's Koa app, in both homes: `/` redirects to `/ui`,
// `/ui/assets/*` are hashed files with a long cache, every other `/ui/*` path answers index.html (the UI routes in the
// browser), and a missing build answers an HTML page naming `npm run build:ui`. The files are public (api/access.ts);
// the data the UI shows comes through /api/v1 with the caller's credentials.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware, Next } from 'koa';

/** Where the UI is served; `/` redirects here. */
export const UI_BASE = '/ui';

/** Whether a request path belongs to the UI (public: the page itself carries no data). */
export function isUiPath(path: string): boolean {
  const lower = path.toLowerCase();
  return lower === '/' || lower === UI_BASE || lower.startsWith(`${UI_BASE}/`);
}

/** The repository (or image) root: the nearest folder above this module holding package.json (api/ or dist/api/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The built UI's folder: UI_DIST_DIR, else ui/dist at the package root. */
export function uiDistDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.UI_DIST_DIR ? resolve(env.UI_DIST_DIR) : join(packageRoot(), 'ui', 'dist');
}

/**
 * Scripts and styles only from this origin, no plugins, no framing: even if a page rendered hostile text as HTML,
 * no injected script would run. Styles set from script (React's `style` props) are allowed by CSP as CSSOM changes.
 */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2', '.json': 'application/json',
  '.map': 'application/json', '.txt': 'text/plain; charset=utf-8',
};

const MISSING_BUILD = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>flowpilot: UI not built</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>The web UI is not built</h1>
<p>This server found no <code>ui/dist/index.html</code>. Build it with <code>npm run build:ui</code>
(<code>npm install</code> does it too), then reload this page. The REST API under <code>/api/v1</code> works meanwhile.</p>
</body></html>`;

/** One asset name: a single path segment of safe characters (Vite's hashed names), never `..` or a folder. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function securityHeaders(ctx: Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('Referrer-Policy', 'same-origin');
}

async function serveAsset(ctx: Context, dir: string, name: string): Promise<void> {
  const assets = join(dir, 'assets');
  const file = resolve(assets, name);
  const ext = /\.[^.]+$/.exec(name)?.[0] ?? '';
  const info = ASSET_NAME.test(name) && file.startsWith(assets + sep) ? await stat(file).catch(() => undefined) : undefined;
  if (!info?.isFile()) {
    ctx.status = 404;
    ctx.body = { message: `UI asset '${name}' not found` };
    return;
  }
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.type = TYPES[ext] ?? 'application/octet-stream';
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.length = info.size;
    return;
  }
  ctx.body = await readFile(file);
}

async function serveIndex(ctx: Context, dir: string): Promise<void> {
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = 'text/html; charset=utf-8';
  const html = await readFile(join(dir, 'index.html')).catch(() => undefined);
  if (!html) {
    ctx.status = 503;
    ctx.body = MISSING_BUILD;
    return;
  }
  ctx.body = html;
}

/** Koa middleware serving the UI from `dir` (default uiDistDir()); other paths pass through. */
export function uiMiddleware(dir: string = uiDistDir()): Middleware {
  return async function serveUi(ctx: Context, next: Next): Promise<void> {
    if (!isUiPath(ctx.path)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      ctx.body = { message: `${ctx.method} is not allowed on the web UI's pages` };
      return;
    }
    if (ctx.path === '/') {
      ctx.redirect(UI_BASE);
      return;
    }
    const rest = ctx.path.slice(UI_BASE.length);
    const asset = /^\/assets\/(.*)$/.exec(rest);
    if (asset) return serveAsset(ctx, dir, asset[1]!);
    return serveIndex(ctx, dir);
  };
}
