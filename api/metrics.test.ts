// API request metrics over real HTTP: the real Koa app with the metrics middleware before its routers, requests
// counted by route pattern (never the raw path) and status, durations observed, served at GET /metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEmbeddedStores, type EmbeddedStores } from '../operator/store/sqlite/index.js';
import { createApp } from './app.js';
import { createHttpMetrics } from './metrics.js';
import { startServer } from './server.js';

let dir: string;
let stores: EmbeddedStores;
let server: { port: number; close(): Promise<void> };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'api-metrics-'));
  stores = openEmbeddedStores(dir);
});
afterAll(async () => {
  await server?.close();
  await stores?.close();
  rmSync(dir, { recursive: true, force: true });
});

const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

it('counts requests by route pattern and status and serves them at /metrics', async () => {
  const metrics = createHttpMetrics();
  const app: Koa = createApp({ stores });
  app.middleware.splice(1, 0, metrics.middleware);
  app.use(metrics.router.routes());
  server = await startServer(app, 0, '127.0.0.1');
  const base = `http://127.0.0.1:${server.port}`;
  for (const p of ['/api/v1/flows/search', '/api/v1/flows/search?q=x', '/api/v1/flows/a.b/missing-1', '/api/v1/flows/c.d/missing-2', '/nope/secret-looking-path']) {
    await (await fetch(`${base}${p}`)).text();
  }
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const text = await res.text();
  expect(value(text, 'flowpilot_http_requests_total{method="GET",route="/api/v1/flows/search",status="200"}')).toBe(2);
  expect(value(text, 'flowpilot_http_requests_total{method="GET",route="/api/v1/flows/:namespace/:id",status="404"}')).toBe(2);
  expect(value(text, 'flowpilot_http_requests_total{method="GET",route="<unmatched>",status="404"}')).toBe(1);
  expect(value(text, 'flowpilot_http_request_duration_seconds_count{method="GET",route="/api/v1/flows/search",status="200"}')).toBe(2);
  expect(text).not.toContain('missing-1');
  expect(text).not.toContain('secret-looking-path');
});
