// The Koa application of the REST API: `/api/v1` routes (also under the `/api/v1/main` tenant path) over the
// stores (it never runs tasks), `/healthz`, and the web UI's files under `/ui` (api/ui.ts).
// Other routers (for example `/v1/completions`) can be mounted on the returned app with `app.use(router.routes())`.
import { Router } from '@koa/router';
import Koa from 'koa';
import { resolveDeps, type ApiOptions } from './deps.js';
import { errorHandler } from './errors.js';
import { registerConfigRoutes } from './routes/configs.js';
import { registerExecutionActionRoutes } from './routes/execution-actions.js';
import { registerExecutionBulkRoutes } from './routes/execution-bulk.js';
import { registerMetricRoutes } from './routes/execution-metrics.js';
import { registerExecutionStreamRoutes } from './routes/execution-stream.js';
import { createFromRequest, registerExecutionRoutes } from './routes/executions.js';
import { registerFlowBulkRoutes } from './routes/flow-bulk.js';
import { registerFlowRoutes } from './routes/flows.js';
import { registerNotOfferedRoutes } from './routes/not-offered.js';
import { registerGraphRoutes } from './routes/graphs.js';
import { registerKvRoutes } from './routes/kv.js';
import { registerLogRoutes } from './routes/logs.js';
import { registerNamespaceRoutes } from './routes/namespaces.js';
import { registerPluginRoutes } from './routes/plugins.js';
import { registerNamespaceFileRoutes } from './routes/namespace-files.js';
import { registerStatsRoutes } from './routes/stats.js';
import { registerTriggerRoutes } from './routes/triggers.js';
import { registerWebhookRoutes } from './routes/webhook.js';
import { orderRoutes } from './route-order.js';
import { uiMiddleware } from './ui.js';
import { newReadScope } from '../operator/store/read-scope.js';

/** Kestra ≥ 0.24 puts a tenant in the path (`/api/v1/main/...`); both forms are served. */
export const API_PREFIXES = ['/api/v1', '/api/v1/main'] as const;

/**
 * Builds the API router. Where two routes match one URL, the one with a literal segment at the first position where
 * they differ wins, whatever the registration order (api/route-order.ts): `/executions/search` over
 * `/executions/:id`, `/executions/:id/labels` over `/executions/:namespace/:flowId`.
 */
export function createApiRouter(options: ApiOptions, prefix: string = API_PREFIXES[0]): Router {
  const deps = resolveDeps(options);
  const r = new Router({ prefix, exclusive: true });
  registerConfigRoutes(r);
  registerFlowRoutes(r, deps);
  registerFlowBulkRoutes(r, deps);
  registerExecutionRoutes(r, deps);
  registerExecutionActionRoutes(r, deps);
  registerExecutionBulkRoutes(r, deps);
  registerExecutionStreamRoutes(r, deps);
  registerWebhookRoutes(r, deps);
  registerLogRoutes(r, deps);
  registerMetricRoutes(r, deps);
  registerKvRoutes(r, deps);
  registerNamespaceRoutes(r, deps);
  registerNamespaceFileRoutes(r, deps);
  registerTriggerRoutes(r, deps);
  registerGraphRoutes(r, deps);
  registerStatsRoutes(r, deps);
  registerPluginRoutes(r, deps);
  registerNotOfferedRoutes(r, deps, (ctx) => createFromRequest(ctx, deps));
  orderRoutes(r);
  return r;
}

/**
 * `before`: middleware run ahead of every route, after error handling (cluster mode: metrics, then authentication).
 * `uiDir`: the built web UI's folder (default ui/dist, or UI_DIST_DIR).
 */
export function createApp(deps: ApiOptions, opts: { before?: Koa.Middleware[]; uiDir?: string } = {}): Koa {
  const app = new Koa();
  app.silent = true; // errors are answered (and logged) by the error handler, secrets masked
  app.use(errorHandler((text) => deps.stores.secrets?.masker().mask(text) ?? text));
  // Each request sees every write committed before it, also by another process on the same store (read-scope.ts).
  app.use((_ctx, next) => { newReadScope(); return next(); });
  for (const mw of opts.before ?? []) app.use(mw);
  const health = new Router();
  health.get('/healthz', (ctx) => { ctx.body = { status: 'UP' }; });
  app.use(health.routes());
  app.use(uiMiddleware(opts.uiDir));
  for (const prefix of API_PREFIXES) {
    const api = createApiRouter(deps, prefix);
    app.use(api.routes());
    app.use(api.allowedMethods());
  }
  return app;
}
