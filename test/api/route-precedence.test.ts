// Route precedence over HTTP: every pair of API routes that can match one URL is listed from the real routers, and a
// request to such a URL must reach the route with a literal segment at the first position where the two differ
// (`POST /executions/{id}/labels` over `POST /executions/{namespace}/{flowId}`), whatever the registration order.
import { Router } from '@koa/router';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIXES, createApiRouter } from '../../api/app.js';
import { orderRoutes } from '../../api/route-order.js';
import { startServer } from '../../api/server.js';
import { call, startTestApi, type TestApi } from './helpers.js';

interface Route { method: string; path: string }

const segments = (p: string): string[] => p.split('/').filter((s) => s !== '');
const isParam = (s: string): boolean => s.startsWith(':');

/** A URL both routes match, or undefined when none exists. */
function sharedUrl(a: string, b: string): string | undefined {
  const sa = segments(a);
  const sb = segments(b);
  if (sa.length !== sb.length) return undefined;
  const parts: string[] = [];
  for (let i = 0; i < sa.length; i++) {
    const x = sa[i]!;
    const y = sb[i]!;
    if (!isParam(x) && !isParam(y) && x.toLowerCase() !== y.toLowerCase()) return undefined;
    parts.push(!isParam(x) ? x : !isParam(y) ? y : 'x1');
  }
  return `/${parts.join('/')}`;
}

/** The route that must win: the one with a literal where the other has a parameter, first such position. */
function expectedWinner(a: string, b: string): string | undefined {
  const sa = segments(a);
  const sb = segments(b);
  for (let i = 0; i < sa.length; i++) {
    if (isParam(sa[i]!) !== isParam(sb[i]!)) return isParam(sa[i]!) ? b : a;
  }
  return undefined; // same shape: a duplicate route
}

function routesOf(): Route[] {
  const stores = { } as never; // the routers are only listed here, never called
  return API_PREFIXES.flatMap((prefix) => createApiRouter({ stores }, prefix).stack.flatMap((layer) =>
    layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path) }))));
}

function collisions(routes: Route[]): { method: string; a: string; b: string; url: string }[] {
  const out: { method: string; a: string; b: string; url: string }[] = [];
  routes.forEach((r, i) => routes.slice(i + 1).forEach((s) => {
    if (r.method !== s.method) return;
    const url = sharedUrl(r.path, s.path);
    if (url !== undefined) out.push({ method: r.method, a: r.path, b: s.path, url });
  }));
  return out;
}

describe('route collisions of the API', () => {
  let api: TestApi;
  const matched = new Map<string, string | undefined>();
  const record: Koa.Middleware = async (ctx, next) => {
    try { await next(); } finally { matched.set(`${ctx.method} ${ctx.path}`, (ctx as unknown as { _matchedRoute?: string })._matchedRoute); }
  };
  beforeAll(async () => { api = await startTestApi({ before: [record], waitTimeoutMs: 100 }); });
  afterAll(async () => { await api?.close(); });

  const pairs = collisions(routesOf());

  it('lists the pairs that can collide, the known ones among them, and no duplicate route', () => {
    const names = pairs.map((p) => `${p.method} ${p.a} × ${p.b}`);
    expect(names).toContain('POST /api/v1/executions/:namespace/:flowId × /api/v1/executions/:id/labels');
    expect(names).toContain('DELETE /api/v1/executions/:id × /api/v1/executions/by-ids');
    expect(names).toContain('GET /api/v1/executions/:id × /api/v1/executions/search');
    expect(pairs.filter((p) => expectedWinner(p.a, p.b) === undefined).map((p) => `${p.method} ${p.a}`)).toEqual([]);
  });

  it('sends each colliding URL to the more specific route', async () => {
    const wrong: string[] = [];
    for (const p of pairs) {
      await call(`${api.url}${p.url}`, { method: p.method });
      const got = matched.get(`${p.method} ${p.url}`);
      const want = expectedWinner(p.a, p.b);
      if (got !== want) wrong.push(`${p.method} ${p.url}: reached ${got}, want ${want}`);
    }
    expect(pairs.length).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });
});

describe('orderRoutes', () => {
  // Two routes with one parameter each: `@koa/router`'s own "specificity" (fewest parameters) leaves this to the
  // registration order; here the literal at the first differing position wins either way.
  it.each([
    [['/x/:a/lit', '/x/lit/:b']],
    [['/x/lit/:b', '/x/:a/lit']],
    [['/x/:a/:b/c', '/x/:a/lit/:c', '/x/lit/:b/:c']],
  ])('routes %j: GET /x/lit/lit... reaches the leftmost literal', async (paths) => {
    const r = new Router({ exclusive: true });
    for (const p of paths) r.get(p, (ctx) => { ctx.body = p; });
    orderRoutes(r);
    const app = new (await import('koa')).default();
    app.use(r.routes());
    const server = await startServer(app, 0, '127.0.0.1');
    try {
      const url = paths.length === 2 ? '/x/lit/lit' : '/x/lit/lit/c';
      const res = await call(`http://127.0.0.1:${server.port}${url}`);
      expect(res.body).toBe(paths.length === 2 ? '/x/lit/:b' : '/x/lit/:b/:c');
    } finally {
      await server.close();
    }
  });

  it('refuses wildcard segments and a router that is not exclusive', () => {
    const star = new Router({ exclusive: true });
    star.get('/files/*rest', () => undefined);
    expect(() => orderRoutes(star)).toThrow(/only literal and ':param' segments/);
    expect(() => orderRoutes(new Router({ exclusive: 'specificity' }))).toThrow(/exclusive: true/);
  });
});
