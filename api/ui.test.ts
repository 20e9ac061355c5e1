// Serving of the web UI's files by the Koa app over real HTTP, from a temporary build folder: the redirect, the SPA
// fallback, long-cached assets, no path traversal, the page naming `npm run build:ui` when the build is missing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type Listening } from './server.js';
import { uiMiddleware } from './ui.js';

const dir = mkdtempSync(join(tmpdir(), 'ui-dist-'));
let built: Listening;
let missing: Listening;
const serve = (distDir: string) => {
  const app = new Koa();
  app.use(uiMiddleware(distDir));
  app.use((ctx) => { ctx.status = 418; ctx.body = 'next'; });
  return startServer(app, 0, '127.0.0.1');
};

beforeAll(async () => {
  mkdirSync(join(dir, 'dist/assets'), { recursive: true });
  writeFileSync(join(dir, 'dist/index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(dir, 'dist/assets/index-Ab12.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'not public');
  built = await serve(join(dir, 'dist'));
  missing = await serve(join(dir, 'nothing-here'));
});
afterAll(async () => { await built.close(); await missing.close(); rmSync(dir, { recursive: true, force: true }); });

const get = (l: Listening, path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${l.port}${path}`, { redirect: 'manual', ...init });

describe('uiMiddleware', () => {
  it('redirects / to /ui and answers index.html for /ui and every page path, never cached', async () => {
    const root = await get(built, '/');
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui');
    for (const p of ['/ui', '/ui/', '/ui/flows', '/ui/flows/edit/a.b/c/overview', '/UI/executions']) {
      const res = await get(built, p);
      expect(res.status, p).toBe(200);
      expect(await res.text()).toBe('<!doctype html><title>app</title>');
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    }
  });

  it('serves assets with a year-long immutable cache, HEAD included', async () => {
    const res = await get(built, '/ui/assets/index-Ab12.js');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('console.log(1)');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const head = await get(built, '/ui/assets/index-Ab12.js', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('14');
  });

  it.each(['/ui/assets/missing.js', '/ui/assets/..%2f..%2fsecret.txt', '/ui/assets/sub/x.js', '/ui/assets/'])(
    'answers 404 JSON for %s (no index.html, nothing outside assets/)', async (p) => {
      const res = await get(built, p);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('not public');
    });

  it('refuses other methods on UI paths and leaves other paths to the next middleware', async () => {
    const post = await get(built, '/ui/flows', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await get(built, '/uix')).status).toBe(418);
    expect((await get(built, '/api/v1/flows/search')).status).toBe(418);
  });

  it('answers a page naming `npm run build:ui` when the build is missing', async () => {
    const res = await get(missing, '/ui/flows');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('npm run build:ui');
  });
});
