// Every route of Kestra's OSS API (its controllers and the official SDK's OpenAPI spec; Enterprise-only areas apart:
// users, roles, groups, tenants, service accounts, apps, audit logs, blueprints, test suites, secrets writes) accounted
// for: served, served with a difference on purpose, or not offered. Checked over HTTP (a served route is routed, a
// not-offered one answers 501 naming why), against the router (no route missing from the list, none listed that is not
// registered) and against the README table (both ways). Kestra's shapes of these routes: test/api/compat/*.test.ts and
// test/api/flow-bulk.test.ts.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiRouter } from '../../../api/app.js';
import { startTestApi, type TestApi } from '../helpers.js';

type Status = 'served' | 'differs' | 'not-offered';
interface Route { method: string; path: string; status: Status; reason?: string }

/** `METHOD path | status | reason`: paths with this API's parameter names, under /api/v1 (and /api/v1/main). */
const ROUTES_TEXT = `
  GET /configs | served
  POST /flows/validate | served
  POST /flows | served
  GET /flows/search | served
  GET /flows/{namespace} | served
  GET /flows/{namespace}/{id} | served
  GET /flows/{namespace}/{id}/revisions | served
  PUT /flows/{namespace}/{id} | served
  DELETE /flows/{namespace}/{id} | served
  GET /flows/{namespace}/{id}/tasks/{taskId} | served
  DELETE /flows/delete/by-ids | served
  DELETE /flows/delete/by-query | served
  POST /flows/disable/by-ids | served
  POST /flows/disable/by-query | served
  POST /flows/enable/by-ids | served
  POST /flows/enable/by-query | served
  POST /flows/export/by-ids | served
  GET /flows/export/by-query | served
  POST /flows/import | served
  POST /flows/bulk | served
  POST /flows/{namespace} | differs | a multi-document YAML body; Kestra's multipart form (\`override\`) is not read
  GET /executions/search | served
  GET /executions | served
  POST /executions/trigger/{namespace}/{flowId} | served
  POST /executions/{namespace}/{flowId} | served
  GET /executions/{id} | served
  GET /executions/flows/{namespace}/{flowId} | served
  POST /executions/latest | served
  GET /executions/{id}/flow | served
  DELETE /executions/{id} | served
  DELETE /executions/{id}/kill | served
  POST /executions/{id}/restart | served
  POST /executions/{id}/resume | served
  POST /executions/{id}/replay | served
  POST /executions/{id}/labels | differs | applied by the controller: the API waits for it (at most the \`?wait=true\` timeout), then answers 202 with the record as it is
  POST /executions/{id}/change-status | differs | applied by the controller (202 after the wait, as labels); a running execution is 409
  DELETE /executions/by-ids | served
  DELETE /executions/by-query | served
  DELETE /executions/kill/by-ids | served
  DELETE /executions/kill/by-query | served
  POST /executions/restart/by-ids | served
  POST /executions/restart/by-query | served
  POST /executions/resume/by-ids | served
  POST /executions/resume/by-query | served
  POST /executions/labels/by-ids | served
  POST /executions/labels/by-query | served
  POST /executions/change-status/by-ids | served
  POST /executions/change-status/by-query | served
  POST /executions/replay/by-ids | served
  POST /executions/replay/by-query | served
  GET /executions/{id}/follow | served
  GET /executions/{id}/file | served
  GET /executions/{id}/file/metas | served
  GET /executions/webhook/{namespace}/{flowId}/{key} | served
  POST /executions/webhook/{namespace}/{flowId}/{key} | served
  PUT /executions/webhook/{namespace}/{flowId}/{key} | served
  GET /logs/search | served
  GET /logs/{executionId} | served
  GET /logs/{executionId}/download | served
  GET /logs/{executionId}/follow | differs | the stream ends once the execution has ended
  DELETE /logs/{executionId} | served
  GET /metrics/{executionId} | served
  GET /namespaces/{namespace}/kv | served
  GET /namespaces/{namespace}/kv/{key} | served
  PUT /namespaces/{namespace}/kv/{key} | served
  DELETE /namespaces/{namespace}/kv/{key} | served
  DELETE /namespaces/{namespace}/kv | served
  GET /flows/distinct-namespaces | served
  GET /executions/namespaces | served
  GET /executions/namespaces/{namespace}/flows | served
  POST /namespaces | served
  GET /namespaces/search | served
  GET /namespaces/ids | served
  POST /namespaces/autocomplete | served
  GET /namespaces/{id} | served
  PUT /namespaces/{id} | served
  DELETE /namespaces/{id} | served
  GET /namespaces/{id}/inherited-variables | served
  GET /namespaces/{id}/inherited-plugindefaults | served
  GET /flows/{namespace}/{id}/graph | served
  POST /flows/graph | served
  GET /executions/{executionId}/graph | served
  GET /flows/{namespace}/{id}/dependencies | served
  GET /namespaces/{namespace}/dependencies | served
  POST /flows/{namespace}/{id}/revisions/{revision}/rollback | differs | our addition: Kestra's UI saves an old source with PUT
  GET /plugins | served
  GET /plugins/{cls} | served
  GET /plugins/schemas/{type} | served
  GET /namespaces/{namespace}/files | served
  GET /namespaces/{namespace}/files/stats | served
  GET /namespaces/{namespace}/files/directory | served
  GET /namespaces/{namespace}/files/search | served
  GET /namespaces/{namespace}/files/export | served
  POST /namespaces/{namespace}/files | differs | writes answer 204; no revisions; \`/_flows/...\` paths are refused
  POST /namespaces/{namespace}/files/directory | served
  PUT /namespaces/{namespace}/files | served
  DELETE /namespaces/{namespace}/files | served
  GET /triggers/search | served
  GET /triggers/{namespace}/{flowId} | served
  PUT /triggers | served
  POST /triggers/set-disabled/by-triggers | served
  PUT /triggers/backfill/pause | served
  PUT /triggers/backfill/unpause | served
  POST /triggers/backfill/delete | served
  PUT /triggers/backfill/delete | served
  POST /triggers/{namespace}/{flowId}/{triggerId}/unlock | served
  POST /executions/{id}/pause | not-offered | an execution pauses only at a Pause task here; pausing a running one from outside is not implemented
  POST /executions/pause/by-ids | not-offered | an execution pauses only at a Pause task here; pausing a running one from outside is not implemented
  POST /executions/pause/by-query | not-offered | an execution pauses only at a Pause task here; pausing a running one from outside is not implemented
  POST /executions/{id}/force-run | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/force-run/by-ids | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/force-run/by-query | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/{id}/unqueue | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/unqueue/by-ids | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/unqueue/by-query | not-offered | executions are not held in a QUEUED state a caller could release; concurrency limits are applied by the controller
  POST /executions/{id}/resume/validate | not-offered | POST /executions/{id}/resume checks the values itself (422 naming each bad one)
  POST /executions/{namespace}/{flowId}/validate | not-offered | inputs are checked when the execution is created (422 naming each bad one)
  POST /executions/{id}/replay-with-inputs | not-offered | a replay keeps the inputs of the execution it copies
  POST /executions/{id}/state | not-offered | changing the state of one task run is not implemented
  POST /executions/{id}/eval/{taskRunId} | not-offered | expressions are rendered only inside a task attempt, under its rendering budget and secret masking
  GET /executions/{id}/file/preview | not-offered | file previews are not implemented; download the file with GET /executions/{id}/file
  GET /executions/{id}/follow-dependencies | not-offered | following the executions of dependent flows is not implemented
  GET /executions/export/by-query/csv | not-offered | CSV exports are not implemented
  GET /executions/webhook/{namespace}/{flowId}/{key}/{path} | not-offered | webhook sub-paths are not implemented; call the webhook URL without one
  POST /executions/webhook/{namespace}/{flowId}/{key}/{path} | not-offered | webhook sub-paths are not implemented; call the webhook URL without one
  PUT /executions/webhook/{namespace}/{flowId}/{key}/{path} | not-offered | webhook sub-paths are not implemented; call the webhook URL without one
  DELETE /flows/{namespace}/{id}/revisions | not-offered | revisions are append-only here; restore an old one with POST /flows/{namespace}/{id}/revisions/{revision}/rollback
  GET /flows/source | not-offered | full-text search of flow sources is not implemented; GET /flows/search?q= matches ids, namespaces and descriptions
  PATCH /flows/{namespace}/{id}/{taskId} | not-offered | deprecated by Kestra; update the whole flow with PUT /flows/{namespace}/{id}
  POST /flows/validate/task | not-offered | validate a whole flow with POST /flows/validate
  POST /flows/validate/trigger | not-offered | validate a whole flow with POST /flows/validate
  GET /flows/export/by-query/csv | not-offered | CSV exports are not implemented; GET /flows/export/by-query gives the sources
  GET /concurrency-limit/search | not-offered | a flow's concurrency limit is part of its source
  PUT /concurrency-limit/{namespace}/{flowId} | not-offered | a flow's concurrency limit is part of its source
  DELETE /logs/{namespace}/{flowId} | not-offered | delete logs per execution with DELETE /logs/{executionId}
  GET /metrics/names/{namespace}/{flowId} | not-offered | metrics live in each execution record; queries across executions are not indexed
  GET /metrics/names/{namespace}/{flowId}/{taskId} | not-offered | metrics live in each execution record; queries across executions are not indexed
  GET /metrics/tasks/{namespace}/{flowId} | not-offered | metrics live in each execution record; queries across executions are not indexed
  GET /metrics/aggregates/{namespace}/{flowId}/{metric} | not-offered | metrics live in each execution record; queries across executions are not indexed
  GET /metrics/aggregates/{namespace}/{flowId}/{taskId}/{metric} | not-offered | metrics live in each execution record; queries across executions are not indexed
  POST /stats/executions/daily | served
  POST /stats/taskruns/daily | not-offered | execution statistics are not implemented
  POST /stats/executions/daily/group-by-flow | not-offered | execution statistics are not implemented
  POST /stats/executions/latest/group-by-flow | not-offered | use POST /executions/latest
  GET /kv | not-offered | list keys per namespace with GET /namespaces/{namespace}/kv
  GET /namespaces/{namespace}/kv/inheritance | not-offered | KV pairs are not inherited from parent namespaces here
  GET /namespaces/{namespace}/secrets | not-offered | secrets come from the environment or Kubernetes Secrets; they are not listed over the API
  GET /namespaces/{namespace}/inherited-secrets | not-offered | secrets come from the environment or Kubernetes Secrets; they are not listed over the API
  GET /namespaces/{namespace}/files/revisions | not-offered | namespace files have no revisions here
  DELETE /triggers/{namespace}/{flowId}/{triggerId} | not-offered | a trigger's state follows its flow; disable it with PUT /triggers
  DELETE /triggers/delete/by-triggers | not-offered | a trigger's state follows its flow; disable it with PUT /triggers
  DELETE /triggers/delete/by-query | not-offered | a trigger's state follows its flow; disable it with PUT /triggers
  POST /triggers/set-disabled/by-query | not-offered | use POST /triggers/set-disabled/by-triggers
  POST /triggers/unlock/by-triggers | not-offered | unlock one trigger with POST /triggers/{namespace}/{flowId}/{triggerId}/unlock
  POST /triggers/unlock/by-query | not-offered | unlock one trigger with POST /triggers/{namespace}/{flowId}/{triggerId}/unlock
  POST /triggers/{namespace}/{flowId}/{triggerId}/restart | not-offered | restarting a realtime trigger is not implemented
  POST /triggers/backfill/pause/by-triggers | not-offered | use the single-trigger backfill pause route
  POST /triggers/backfill/pause/by-query | not-offered | use the single-trigger backfill pause route
  POST /triggers/backfill/unpause/by-triggers | not-offered | use the single-trigger backfill unpause route
  POST /triggers/backfill/unpause/by-query | not-offered | use the single-trigger backfill unpause route
  POST /triggers/backfill/delete/by-triggers | not-offered | use the single-trigger backfill delete route
  POST /triggers/backfill/delete/by-query | not-offered | use the single-trigger backfill delete route
  GET /triggers/export/by-query/csv | not-offered | CSV exports are not implemented
  GET /plugins/icons | not-offered | plugin icons are not served; the UI is not bundled
  GET /plugins/icons/groups | not-offered | plugin icons are not served; the UI is not bundled
  GET /plugins/groups/subgroups | not-offered | plugin groups are listed by GET /plugins
  GET /plugins/inputs | not-offered | input types are documented in the README, not as plugins
  GET /plugins/inputs/{type} | not-offered | input types are documented in the README, not as plugins
  GET /dashboards | not-offered | custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)
  POST /dashboards | not-offered | custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)
  GET /dashboards/{id} | not-offered | custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)
  PUT /dashboards/{id} | not-offered | custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)
  DELETE /dashboards/{id} | not-offered | custom dashboards are not implemented (GET /configs: isCustomDashboardsEnabled false)
`;

const ROUTES: Route[] = ROUTES_TEXT.trim().split('\n').map((line) => {
  const [route, status, reason] = line.split('|').map((s) => s.trim());
  const [method, path] = route!.split(' ');
  return { method: method!, path: path!, status: status as Status, ...(reason ? { reason } : {}) };
});
const key = (r: { method: string; path: string }): string => `${r.method} ${r.path}`;

/** Sample values: resources that do not exist, so no call changes anything (a served route answers its own 4xx). */
const SAMPLES: Record<string, string> = {
  namespace: 'cov', id: 'nope', flowId: 'nope', executionId: 'nope', key: 'k', taskId: 't', revision: '1', triggerId: 't',
  cls: 'io.kestra.plugin.core.log.Log', type: 'flow', taskRunId: 'x', metric: 'm', path: 'p',
};
const sample = (path: string): string => path.replace(/\{(\w+)\}/g, (_, name: string) => {
  if (!(name in SAMPLES)) throw new Error(`no sample for {${name}}`);
  return SAMPLES[name]!;
});

let api: TestApi;
beforeAll(async () => { api = await startTestApi(); });
afterAll(async () => { await api.close(); });

/** Status and JSON message of one call; a server-sent event stream is left as soon as its headers arrive. */
async function probe(method: string, path: string): Promise<{ status: number; message?: string }> {
  const abort = new AbortController();
  const res = await fetch(`${api.url}/api/v1/main${sample(path)}`, { method, signal: abort.signal });
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    const body = await res.json() as { message?: unknown };
    return { status: res.status, message: typeof body?.message === 'string' ? body.message : undefined };
  }
  abort.abort();
  return { status: res.status };
}

describe('Kestra OSS routes, accounted for', () => {
  it('lists each route once, with a reason for every difference and every route not offered', () => {
    expect(ROUTES.length).toBeGreaterThan(150);
    expect(new Set(ROUTES.map(key)).size).toBe(ROUTES.length);
    for (const r of ROUTES) {
      expect(['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], key(r)).toContain(r.method);
      expect(['served', 'differs', 'not-offered'], key(r)).toContain(r.status);
      expect(r.status === 'served' ? r.reason === undefined : (r.reason ?? '').length > 10, key(r)).toBe(true);
    }
  });

  it('matches the routes the API router registers, both ways', () => {
    const router = createApiRouter({ stores: api.stores });
    const registered = new Set(router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD')
      .map((m) => `${m} ${String(layer.path).replace(/^\/api\/v1/, '').replace(/:(\w+)/g, '{$1}')}`)));
    expect([...registered].filter((r) => !ROUTES.some((x) => key(x) === r)).sort(), 'registered, not listed').toEqual([]);
    expect(ROUTES.map(key).filter((r) => !registered.has(r)), 'listed, not registered').toEqual([]);
  });

  it.each(ROUTES.filter((r) => r.status !== 'not-offered').map((r) => [key(r), r] as const))('%s is routed', async (_, r) => {
    const { status, message } = await probe(r.method, r.path);
    expect(status, message).not.toBe(405);
    expect(status, message).not.toBe(501);
    // The router's own 404 names the method and path; a route's 404 names the missing resource.
    expect(message ?? '').not.toMatch(/^(Not found|Method not allowed): /);
  });

  it.each(ROUTES.filter((r) => r.status === 'not-offered').map((r) => [key(r), r] as const))('%s answers 501 naming why', async (_, r) => {
    const { status, message } = await probe(r.method, r.path);
    expect(status).toBe(501);
    expect(message).toBe(`${r.method} ${r.path} is not offered by flowpilot: ${r.reason}`);
  });

  it('the README table lists the same routes, statuses and reasons', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = readme.split('### Kestra routes, accounted for')[1]?.split(/\n#{2,3} /)[0] ?? '';
    const rows = [...section.matchAll(/^\| `(\w+) ([^`]+)` \| (served|differs|not offered)(?:: (.*?))? \|$/gm)]
      .map(([, method, path, status, reason]) => ({
        method: method!, path: path!, status: (status === 'not offered' ? 'not-offered' : status) as Status, ...(reason ? { reason } : {}),
      }));
    expect(rows.length, 'README rows').toBeGreaterThan(0);
    const text = (list: Route[]): string[] => list.map((r) => `${key(r)} | ${r.status}${r.reason ? ` | ${r.reason}` : ''}`).sort();
    expect(text(rows)).toEqual(text(ROUTES));
  });
});

describe('a not-offered route sharing its URL with execution creation', () => {
  it('starts the flow when one of that name exists in the namespace, else answers 501', async () => {
    const yaml = 'id: pause\nnamespace: cov.shadow\ntasks:\n  - id: hi\n    type: io.kestra.plugin.core.log.Log\n    message: hi\n';
    expect((await fetch(`${api.url}/api/v1/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml })).status).toBe(200);
    const started = await fetch(`${api.url}/api/v1/executions/cov.shadow/pause`, { method: 'POST' });
    expect(started.status).toBe(200);
    expect(await started.json()).toMatchObject({ namespace: 'cov.shadow', flowId: 'pause', state: { current: 'CREATED' } });
    const refused = await probe('POST', '/executions/{id}/pause');
    expect(refused.status).toBe(501);
  });
});
