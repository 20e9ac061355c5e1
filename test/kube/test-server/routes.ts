// Maps a resource URL and HTTP method to the resource type, namespace, name, subresource and Kubernetes verb.
import { ApiError } from './errors.js';
import type { ResourceType } from './resources.js';

export interface Route { t: ResourceType; version: string; ns?: string; name?: string; sub?: string; verb: string }

const notFound = (): ApiError => new ApiError(404, 'NotFound', 'the server could not find the requested resource');

export function routeRequest(path: string, method: string, q: URLSearchParams, types: Map<string, ResourceType>): Route {
  const segs = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) { group = ''; version = segs[1]; rest = segs.slice(2); }
  else if (segs[0] === 'apis' && segs.length >= 3) { group = segs[1]; version = segs[2]; rest = segs.slice(3); }
  else throw notFound();
  let watchPath = false;
  if (rest[0] === 'watch') { watchPath = true; rest = rest.slice(1); }
  const find = (plural: string): ResourceType | undefined => {
    const t = types.get(`${group}/${plural}`);
    return t && t.versions.includes(version) ? t : undefined;
  };
  let t: ResourceType | undefined;
  let ns: string | undefined;
  let name: string | undefined;
  let sub: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && find(rest[2])?.namespaced) {
    ns = rest[1];
    t = find(rest[2]);
    name = rest[3];
    sub = rest[4];
    if (rest.length > 5) throw notFound();
  } else {
    t = find(rest[0] ?? '');
    name = rest[1];
    sub = rest[2];
    if (rest.length > 3) throw notFound();
    // A namespaced type is reachable without a namespace only to list / watch across all namespaces.
    if (t?.namespaced && name !== undefined) throw notFound();
  }
  if (!t) throw notFound();
  if (sub !== undefined && !(sub === 'status' && t.status)) throw notFound();
  const w = q.get('watch');
  const watch = watchPath || w === 'true' || w === '1';
  let verb: string;
  switch (method) {
    case 'GET': verb = name === undefined || watch ? (watch ? 'watch' : 'list') : 'get'; break;
    case 'POST': if (name !== undefined) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'); verb = 'create'; break;
    case 'PUT': verb = 'update'; break;
    case 'PATCH': verb = 'patch'; break;
    case 'DELETE': verb = name === undefined ? 'deletecollection' : 'delete'; break;
    default: throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }
  if ((verb === 'update' || verb === 'patch') && name === undefined) throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  if (t.namespaced && ns === undefined && verb !== 'list' && verb !== 'watch') throw notFound();
  if (verb === 'watch' && name !== undefined) {
    // GET /namespaces/ns/pods/name?watch=true → watch of that object only.
    const extra = `metadata.name=${name}`;
    q.set('fieldSelector', q.get('fieldSelector') ? `${q.get('fieldSelector')},${extra}` : extra);
    name = undefined;
  }
  return { t, version, ns, name, sub, verb };
}
