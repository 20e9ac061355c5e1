// Kestra OSS routes that flowpilot does not offer: each answers 501 with a JSON message naming the route and why, so a
// Kestra client or UI gets a clear refusal instead of a 404 (or, worse, another route matching the same URL).
import type { Router, RouterContext } from '@koa/router';
import type { ApiDeps } from '../deps.js';

/** [method, path (router syntax), why it is not offered]. README "Kestra routes not offered" lists the same. */
export const NOT_OFFERED: readonly (readonly [method: string, path: string, reason: string])[] = [
  ...['pause', 'force-run', 'unqueue'].flatMap((verb) => {
    const why = verb === 'pause'
      ? 'an execution pauses only at a Pause task here; pausing a running one from outside is not implemented'
      : 'executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller';
    return [['POST', `/executions/:id/${verb}`, why], ['POST', `/executions/${verb}/by-ids`, why], ['POST', `/executions/${verb}/by-query`, why]] as const;
  }),
  ['POST', '/executions/:id/resume/validate', 'POST /executions/{id}/resume checks the values itself (422 naming each bad one)'],
  ['POST', '/executions/:namespace/:flowId/validate', 'inputs are checked when the execution is created (422 naming each bad one)'],
  ['POST', '/executions/:id/replay-with-inputs', 'a replay keeps the inputs of the execution it copies'],
  ['POST', '/executions/:id/state', 'changing the state of one task run is not implemented'],
  ['POST', '/executions/:id/eval/:taskRunId', 'expressions are rendered only inside a task attempt, under its rendering budget and secret masking'],
  ['GET', '/executions/:id/file/preview', 'file previews are not implemented; download the file with GET /executions/{id}/file'],
  ['GET', '/executions/:id/follow-dependencies', 'following the executions of dependent flows is not implemented'],
  ['GET', '/executions/export/by-query/csv', 'CSV exports are not implemented'],
  ...['GET', 'POST', 'PUT'].map((m) => [m, '/executions/webhook/:namespace/:flowId/:key/:path', 'webhook sub-paths are not implemented; call the webhook URL without one'] as const),

  ['DELETE', '/flows/:namespace/:id/revisions', 'revisions are append-only here; restore an old one with POST /flows/{namespace}/{id}/revisions/{revision}/rollback'],
  ['GET', '/flows/source', 'full-text search of flow sources is not implemented; GET /flows/search?q= matches ids, namespaces and descriptions'],
  ['PATCH', '/flows/:namespace/:id/:taskId', 'deprecated by Kestra; update the whole flow with PUT /flows/{namespace}/{id}'],
  ['POST', '/flows/validate/task', 'validate a whole flow with POST /flows/validate'],
  ['POST', '/flows/validate/trigger', 'validate a whole flow with POST /flows/validate'],
  ['GET', '/flows/export/by-query/csv', 'CSV exports are not implemented; GET /flows/export/by-query gives the sources'],
  ['GET', '/concurrency-limit/search', 'a flow\'s concurrency limit is part of its source'],
  ['PUT', '/concurrency-limit/:namespace/:flowId', 'a flow\'s concurrency limit is part of its source'],

  ['DELETE', '/logs/:namespace/:flowId', 'delete logs per execution with DELETE /logs/{executionId}'],
  ['GET', '/metrics/names/:namespace/:flowId', 'metrics live in each execution record; queries across executions are not indexed'],
  ['GET', '/metrics/names/:namespace/:flowId/:taskId', 'metrics live in each execution record; queries across executions are not indexed'],
  ['GET', '/metrics/tasks/:namespace/:flowId', 'metrics live in each execution record; queries across executions are not indexed'],
  ['GET', '/metrics/aggregates/:namespace/:flowId/:metric', 'metrics live in each execution record; queries across executions are not indexed'],
  ['GET', '/metrics/aggregates/:namespace/:flowId/:taskId/:metric', 'metrics live in each execution record; queries across executions are not indexed'],
  ['POST', '/stats/taskruns/daily', 'execution statistics are not implemented'],
  ['POST', '/stats/executions/daily/group-by-flow', 'execution statistics are not implemented'],
  ['POST', '/stats/executions/latest/group-by-flow', 'use POST /executions/latest'],

  ['GET', '/kv', 'list keys per namespace with GET /namespaces/{namespace}/kv'],
  ['GET', '/namespaces/:namespace/kv/inheritance', 'KV pairs are not inherited from parent namespaces here'],
  ['GET', '/namespaces/:namespace/secrets', 'secrets come from the environment or Kubernetes Secrets; they are not listed over the API'],
  ['GET', '/namespaces/:namespace/inherited-secrets', 'secrets come from the environment or Kubernetes Secrets; they are not listed over the API'],
  ['GET', '/namespaces/:namespace/files/revisions', 'namespace files have no revisions here'],

  ['DELETE', '/triggers/:namespace/:flowId/:triggerId', 'a trigger\'s state follows its flow; disable it with PUT /triggers'],
  ['DELETE', '/triggers/delete/by-triggers', 'a trigger\'s state follows its flow; disable it with PUT /triggers'],
  ['DELETE', '/triggers/delete/by-query', 'a trigger\'s state follows its flow; disable it with PUT /triggers'],
  ['POST', '/triggers/set-disabled/by-query', 'use POST /triggers/set-disabled/by-triggers'],
  ['POST', '/triggers/unlock/by-triggers', 'unlock one trigger with POST /triggers/{namespace}/{flowId}/{triggerId}/unlock'],
  ['POST', '/triggers/unlock/by-query', 'unlock one trigger with POST /triggers/{namespace}/{flowId}/{triggerId}/unlock'],
  ['POST', '/triggers/:namespace/:flowId/:triggerId/restart', 'restarting a realtime trigger is not implemented'],
  ...['pause', 'unpause', 'delete'].flatMap((verb) => ['by-triggers', 'by-query'].map((by) =>
    ['POST', `/triggers/backfill/${verb}/${by}`, `use the single-trigger backfill ${verb} route`] as const)),
  ['GET', '/triggers/export/by-query/csv', 'CSV exports are not implemented'],

  ['GET', '/plugins/icons', 'plugin icons are not served; the UI is not bundled'],
  ['GET', '/plugins/icons/groups', 'plugin icons are not served; the UI is not bundled'],
  ['GET', '/plugins/groups/subgroups', 'plugin groups are listed by GET /plugins'],
  ['GET', '/plugins/inputs', 'input types are documented in the README, not as plugins'],
  ['GET', '/plugins/inputs/:type', 'input types are documented in the README, not as plugins'],
  ['GET', '/dashboards', 'custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)'],
  ['POST', '/dashboards', 'custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)'],
  ['GET', '/dashboards/:id', 'custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)'],
  ['PUT', '/dashboards/:id', 'custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)'],
  ['DELETE', '/dashboards/:id', 'custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)'],
];

/**
 * Not-offered routes `POST /executions/{id}/<verb>` share their URL with the contract's execution creation
 * `POST /executions/{namespace}/{flowId}`: when a flow `<verb>` exists in namespace `{id}`, the URL starts it.
 */
const shadowedCreation = (method: string, path: string): string | undefined =>
  (method === 'POST' ? /^\/executions\/:id\/([a-z-]+)$/.exec(path)?.[1] : undefined);

/** Access of a not-offered route: none (it reads and writes nothing), except where it may start a flow (see above). */
export const notOfferedStartsFlow = (method: string, path: string): boolean => shadowedCreation(method, path) !== undefined;

/** Adds a 501 answer for each route of NOT_OFFERED (mounted under /api/v1); `create` starts an execution (see above). */
export function registerNotOfferedRoutes(r: Router, deps: ApiDeps, create: (ctx: RouterContext) => Promise<void>): void {
  for (const [method, path, reason] of NOT_OFFERED) {
    const verb = shadowedCreation(method, path);
    r.register(path, [method], async (ctx) => {
      if (verb !== undefined && await deps.stores.flows.get(ctx.params.id!, verb).catch(() => undefined)) {
        ctx.params = { namespace: ctx.params.id!, flowId: verb };
        await create(ctx);
        return;
      }
      ctx.status = 501;
      ctx.body = { message: `${method} ${path.replace(/:(\w+)/g, '{$1}')} is not offered by flowpilot: ${reason}` };
    });
  }
}
