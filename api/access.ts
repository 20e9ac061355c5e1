// Which Kubernetes permission each REST route needs in cluster mode: a table of (method, path pattern) → verbs on a
// flowpilot.io resource, matched like the router does (the same precedence: api/route-order.ts). Webhooks, the web
// UI's files (`/`, `/ui/*`: they hold no data, which the UI fetches from /api/v1 with the caller's credentials) and
// /healthz are public (webhooks are authenticated by their key); an /api/v1 route missing from the table is denied
// (fail closed).
import { GROUP, KINDS } from '../operator/kube/names.js';
import { comparePrecedence } from './route-order.js';
import { NOT_OFFERED, notOfferedStartsFlow } from './routes/not-offered.js';
import { isUiPath } from './ui.js';

export interface ResourceCheck { verb: string; group: string; resource: string }

export type Access =
  | { kind: 'public' }
  /** Every check must be allowed. */
  | { kind: 'resource'; checks: ResourceCheck[] }
  | { kind: 'nonResource'; verb: string; path: string }
  | { kind: 'unmapped' };

type Rule = [method: string, pattern: string, access: Access];

const PUBLIC: Access = { kind: 'public' };
const on = (resource: string, ...verbs: string[]): Access => ({ kind: 'resource', checks: verbs.map((verb) => ({ verb, group: GROUP, resource })) });
const onBoth = (...pairs: [resource: string, verb: string][]): Access =>
  ({ kind: 'resource', checks: pairs.map(([resource, verb]) => ({ verb, group: GROUP, resource })) });
const flows = (...verbs: string[]) => on(KINDS.Flow.plural, ...verbs);
const executions = (...verbs: string[]) => on(KINDS.Execution.plural, ...verbs);
const kv = (...verbs: string[]) => on(KINDS.KVPair.plural, ...verbs);
const triggers = (...verbs: string[]) => on(KINDS.TriggerState.plural, ...verbs);
const namespaces = (...verbs: string[]) => on(KINDS.FlowNamespace.plural, ...verbs);
/** Namespace lists read the stored namespaces and the namespaces of flows. */
const namespaceList = onBoth([KINDS.FlowNamespace.plural, 'list'], [KINDS.Flow.plural, 'list']);
/** Namespace files live in the bucket, not in custom resources: `namespacefiles` is a name for RBAC rules only. */
export const NAMESPACE_FILES_RESOURCE = 'namespacefiles';
const nsFiles = (...verbs: string[]) => on(NAMESPACE_FILES_RESOURCE, ...verbs);

/** Every route under /api/v1 (and /api/v1/main). Keep in step with api/routes: a test checks that none is missing. */
export const API_ROUTE_ACCESS: Rule[] = [
  ['GET', '/configs', PUBLIC],
  ['POST', '/flows/validate', flows('create')],
  ['POST', '/flows', flows('create')],
  ['GET', '/flows/search', flows('list')],
  ['GET', '/flows/:namespace', flows('list')],
  ['GET', '/flows/:namespace/:id', flows('get')],
  ['GET', '/flows/:namespace/:id/revisions', flows('get')],
  ['PUT', '/flows/:namespace/:id', flows('update')],
  ['DELETE', '/flows/:namespace/:id', flows('delete')],
  ['GET', '/flows/:namespace/:id/tasks/:taskId', flows('get')],
  ['DELETE', '/flows/delete/by-ids', flows('delete')],
  ['DELETE', '/flows/delete/by-query', flows('list', 'delete')],
  ...(['disable', 'enable'].flatMap((verb): Rule[] => [
    ['POST', `/flows/${verb}/by-ids`, flows('update')],
    ['POST', `/flows/${verb}/by-query`, flows('list', 'update')],
  ])),
  ['POST', '/flows/export/by-ids', flows('get')],
  ['GET', '/flows/export/by-query', flows('list')],
  ['POST', '/flows/import', flows('create', 'update')],
  // Both replace a namespace's flows: the ones missing from the body are deleted (`delete=true`, Kestra's default).
  ['POST', '/flows/bulk', flows('list', 'create', 'update', 'delete')],
  ['POST', '/flows/:namespace', flows('list', 'create', 'update', 'delete')],

  ['GET', '/executions/search', executions('list')],
  ['GET', '/executions', executions('list')],
  ['POST', '/executions/trigger/:namespace/:flowId', executions('create')],
  ['POST', '/executions/:namespace/:flowId', executions('create')],
  ['GET', '/executions/:id', executions('get')],
  ['GET', '/executions/flows/:namespace/:flowId', executions('list')],
  ['POST', '/executions/latest', executions('list')],
  ['GET', '/executions/:id/flow', onBoth([KINDS.Execution.plural, 'get'], [KINDS.Flow.plural, 'get'])],
  ['DELETE', '/executions/:id', executions('delete')],
  ['DELETE', '/executions/:id/kill', executions('update')],
  ['POST', '/executions/:id/restart', executions('update')],
  ['POST', '/executions/:id/resume', executions('update')],
  ['POST', '/executions/:id/replay', executions('create')],
  ['POST', '/executions/:id/labels', executions('update')],
  ['POST', '/executions/:id/change-status', executions('update')],
  ['DELETE', '/executions/by-ids', executions('delete')],
  ['DELETE', '/executions/by-query', executions('list', 'delete')],
  ['DELETE', '/executions/kill/by-ids', executions('update')],
  ['DELETE', '/executions/kill/by-query', executions('list', 'update')],
  ...(['restart', 'resume', 'labels', 'change-status'].flatMap((verb): Rule[] => [
    ['POST', `/executions/${verb}/by-ids`, executions('update')],
    ['POST', `/executions/${verb}/by-query`, executions('list', 'update')],
  ])),
  ['POST', '/executions/replay/by-ids', executions('create')],
  ['POST', '/executions/replay/by-query', executions('list', 'create')],
  ['GET', '/executions/:id/follow', executions('get')],
  ['GET', '/executions/:id/file', executions('get')],
  ['GET', '/executions/:id/file/metas', executions('get')],
  ['GET', '/executions/webhook/:namespace/:flowId/:key', PUBLIC],
  ['POST', '/executions/webhook/:namespace/:flowId/:key', PUBLIC],
  ['PUT', '/executions/webhook/:namespace/:flowId/:key', PUBLIC],

  ['GET', '/logs/search', executions('list')],
  ['POST', '/stats/executions/daily', executions('list')],
  ['GET', '/logs/:executionId', executions('get')],
  ['GET', '/logs/:executionId/download', executions('get')],
  ['GET', '/logs/:executionId/follow', executions('get')],
  ['DELETE', '/logs/:executionId', executions('delete')],
  ['GET', '/metrics/:executionId', executions('get')],

  ['GET', '/namespaces/:namespace/kv', kv('list')],
  ['GET', '/namespaces/:namespace/kv/:key', kv('get')],
  ['PUT', '/namespaces/:namespace/kv/:key', kv('create', 'update')],
  ['DELETE', '/namespaces/:namespace/kv/:key', kv('delete')],
  ['DELETE', '/namespaces/:namespace/kv', kv('delete')],

  ['GET', '/flows/distinct-namespaces', flows('list')],
  ['GET', '/executions/namespaces', flows('list')],
  ['GET', '/executions/namespaces/:namespace/flows', flows('list')],
  ['POST', '/namespaces', namespaces('create')],
  ['GET', '/namespaces/search', namespaceList],
  ['GET', '/namespaces/ids', namespaceList],
  ['POST', '/namespaces/autocomplete', namespaceList],
  ['GET', '/namespaces/:id', namespaces('get')],
  ['PUT', '/namespaces/:id', namespaces('create', 'update')],
  ['DELETE', '/namespaces/:id', namespaces('delete')],
  ['GET', '/namespaces/:id/inherited-variables', namespaces('list')],
  ['GET', '/namespaces/:id/inherited-plugindefaults', namespaces('list')],

  ['GET', '/flows/:namespace/:id/graph', flows('get')],
  ['POST', '/flows/graph', flows('create', 'get')],
  ['GET', '/executions/:executionId/graph', onBoth([KINDS.Execution.plural, 'get'], [KINDS.Flow.plural, 'get'])],
  ['GET', '/flows/:namespace/:id/dependencies', flows('list')],
  ['GET', '/namespaces/:namespace/dependencies', flows('list')],
  ['POST', '/flows/:namespace/:id/revisions/:revision/rollback', flows('get', 'update')],
  // The plugin catalog and editor schemas: what any caller that may read flows may see.
  ['GET', '/plugins', flows('list')],
  ['GET', '/plugins/:cls', flows('list')],
  ['GET', '/plugins/schemas/:type', flows('list')],

  ['GET', '/namespaces/:namespace/files', nsFiles('get')],
  ['GET', '/namespaces/:namespace/files/stats', nsFiles('get')],
  ['GET', '/namespaces/:namespace/files/directory', nsFiles('list')],
  ['GET', '/namespaces/:namespace/files/search', nsFiles('list')],
  ['GET', '/namespaces/:namespace/files/export', nsFiles('list', 'get')],
  ['POST', '/namespaces/:namespace/files', nsFiles('create', 'update')],
  ['POST', '/namespaces/:namespace/files/directory', nsFiles('create')],
  ['PUT', '/namespaces/:namespace/files', nsFiles('update', 'delete')],
  ['DELETE', '/namespaces/:namespace/files', nsFiles('delete')],

  ['GET', '/triggers/search', triggers('list')],
  ['GET', '/triggers/:namespace/:flowId', triggers('list')],
  ['PUT', '/triggers', triggers('update')],
  ['POST', '/triggers/set-disabled/by-triggers', triggers('update')],
  ['PUT', '/triggers/backfill/pause', triggers('update')],
  ['PUT', '/triggers/backfill/unpause', triggers('update')],
  ['POST', '/triggers/backfill/delete', triggers('update')],
  ['PUT', '/triggers/backfill/delete', triggers('update')],
  ['POST', '/triggers/:namespace/:flowId/:triggerId/unlock', triggers('update')],
  // Kestra routes answered with a fixed 501 that reads and writes nothing (api/routes/not-offered.ts).
  // Public: they answer 501 and touch nothing, except where the URL also starts a flow of that name.
  ...NOT_OFFERED.map(([method, path]): Rule => [method, path, notOfferedStartsFlow(method, path) ? executions('create') : PUBLIC]),
];

const API_PREFIXES = ['/api/v1/main', '/api/v1'];

interface Compiled { method: string; pattern: string; segments: string[]; access: Access }
const COMPILED: Compiled[] = API_ROUTE_ACCESS.map(([method, pattern, access]) => ({ method, pattern, segments: pattern.split('/').slice(1), access }));

/** Path segments of `path` as the router sees them (case-insensitive literals, optional trailing slash). */
function matches(rule: Compiled, parts: string[]): boolean {
  if (rule.segments.length !== parts.length) return false;
  return rule.segments.every((s, i) => (s.startsWith(':') ? parts[i] !== '' : s === parts[i]!.toLowerCase()));
}

/** The access rule of one API path (without prefix): the matching pattern the router would choose (api/route-order.ts). */
function apiAccess(method: string, rest: string): Access | undefined {
  const trimmed = rest.length > 1 && rest.endsWith('/') ? rest.slice(0, -1) : rest;
  if (!trimmed.startsWith('/')) return undefined;
  const parts = trimmed.split('/').slice(1);
  // HEAD is served by GET routes.
  const m = method === 'HEAD' ? 'GET' : method;
  let best: Compiled | undefined;
  for (const rule of COMPILED) {
    if (rule.method === m && matches(rule, parts) && (!best || comparePrecedence(rule.pattern, best.pattern) > 0)) best = rule;
  }
  return best?.access;
}

/**
 * What a request needs. `/healthz` and the web UI's files (`/`, `/ui`, `/ui/*`) are public; `/metrics` needs `get` on that non-resource URL; API paths follow the
 * table (both the `/api/v1` and the tenant `/api/v1/main` forms); other paths are left to their own routers (public).
 */
export function accessFor(method: string, path: string): Access {
  const lower = path.toLowerCase();
  if (lower === '/healthz' || lower === '/healthz/') return PUBLIC;
  if (isUiPath(path)) return PUBLIC;
  if (lower === '/metrics' || lower === '/metrics/') return { kind: 'nonResource', verb: 'get', path: '/metrics' };
  const candidates: Access[] = [];
  for (const prefix of API_PREFIXES) {
    if (lower === prefix || lower.startsWith(`${prefix}/`)) {
      const access = apiAccess(method.toUpperCase(), path.slice(prefix.length) || '/');
      if (access) candidates.push(access);
    }
  }
  if (lower === '/api' || lower.startsWith('/api/')) {
    // A path both routers could serve must satisfy both rules; public only when every match is public.
    const checks = candidates.flatMap((a) => (a.kind === 'resource' ? a.checks : []));
    if (checks.length > 0) return { kind: 'resource', checks };
    return candidates.length > 0 ? PUBLIC : { kind: 'unmapped' };
  }
  return PUBLIC;
}
