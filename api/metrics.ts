// Prometheus metrics of the REST API (prom-client): requests by method, route pattern and status, and their duration;
// `GET /metrics` serves the registry (the coordinator passes the operator's registry to expose both in one place).
import { Router } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { Counter, Histogram, Registry } from 'prom-client';

export interface HttpMetricsOptions {
  /** Registry to register in and to serve (default: a new one). */
  registry?: Registry;
  /** Metric name prefix (default `flowpilot_`). */
  prefix?: string;
}

export interface HttpMetrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
  /** Mount before the routers: it reads the route pattern the router matched (never the raw path). */
  middleware: Middleware;
  /** A router serving `GET /metrics`. */
  router: Router;
}

const UNMATCHED = '<unmatched>';

export function createHttpMetrics(options: HttpMetricsOptions = {}): HttpMetrics {
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'flowpilot_';
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: `${prefix}http_requests_total`, help: 'HTTP requests answered by the API', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: `${prefix}http_request_duration_seconds`, help: 'Time to answer an API request (until the body starts for streams)',
    labelNames, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry],
  });

  const middleware = async function httpMetrics(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    let status: number | undefined;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      const s = (err as { status?: unknown })?.status;
      status = typeof s === 'number' && s >= 400 && s < 600 ? s : 500;
      throw err;
    } finally {
      const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
      const labels = { method: ctx.method, route: typeof matched === 'string' ? matched : UNMATCHED, status: String(status ?? 500) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });

  return { registry, requests, duration, middleware, router };
}
