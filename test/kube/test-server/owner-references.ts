// The OwnerReferencesPermissionEnforcement admission plugin of kube-apiserver (plugin/pkg/admission/gc, on by default
// in OpenShift), as the real one decides: a create or update that changes metadata.ownerReferences needs `delete` on the
// object itself, and each ownerReference newly set with blockOwnerDeletion=true needs `update` on the owner's
// `<resource>/finalizers` (resource found from the reference's apiVersion and kind through the served types). Refusals
// are the real 403 Forbidden with the real messages (RBAC denials carry an empty reason and no error: ": , <nil>").
import { deepEqual } from './patch.js';
import { ApiError, groupResource } from './errors.js';
import type { AuthzAttributes } from './auth.js';
import type { KubeObject, ResourceType } from './resources.js';

export interface Requester { user: string; groups: string[] }

/** One create or update as the plugin sees it: `obj` is the object sent (after the patch, if any), `old` the stored one. */
export interface AdmissionRequest {
  who: Requester;
  t: ResourceType;
  version: string;
  ns?: string;
  /** The name on the URL, else the object's (empty for a create with generateName, as in the real server). */
  name: string;
  sub?: string;
  obj: KubeObject;
  old?: KubeObject;
}

interface OwnerRef { apiVersion?: unknown; kind?: unknown; name?: unknown; uid?: unknown; blockOwnerDeletion?: unknown }

const ownerRefs = (o: KubeObject | undefined): OwnerRef[] => {
  const refs = o?.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs.filter((r) => r && typeof r === 'object') : [];
};

/** pods/status is skipped by the real plugin (its strategy keeps ownerReferences). */
const WHITELISTED = (t: ResourceType, sub?: string): boolean => t.group === '' && t.plural === 'pods' && sub === 'status';

function changesOwnerReferences(obj: KubeObject, old: KubeObject | undefined): boolean {
  const now = ownerRefs(obj);
  if (!old) return now.length > 0;
  const before = ownerRefs(old);
  return now.length !== before.length || now.some((r, i) => !deepEqual(r, before[i]));
}

/** References that block owner deletion and did not before (new, or blockOwnerDeletion turned true), matched by uid. */
function newBlockingRefs(obj: KubeObject, old: KubeObject | undefined): OwnerRef[] {
  const blocking = ownerRefs(obj).filter((r) => r.blockOwnerDeletion === true);
  if (!old) return blocking;
  const before = new Map(ownerRefs(old).map((r) => [r.uid, r]));
  return blocking.filter((r) => before.get(r.uid)?.blockOwnerDeletion !== true);
}

function forbidden(req: AdmissionRequest, why: string): ApiError {
  const gr = groupResource(req.t.group, req.t.plural);
  const message = req.name ? `${gr} "${req.name}" is forbidden: ${why}` : `${gr} is forbidden: ${why}`;
  return new ApiError(403, 'Forbidden', message, { name: req.name || undefined, group: req.t.group, kind: req.t.plural });
}

/** The resources a (apiVersion, kind) maps to, like the RESTMapper; an error message when there is none. */
function restMappings(ref: OwnerRef, types: Iterable<ResourceType>): { group: string; version: string; plurals: string[] } | string {
  const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
  const parts = apiVersion.split('/');
  if (!apiVersion || parts.length > 2 || parts.some((p) => p === '')) return `unexpected GroupVersion string: ${apiVersion}`;
  const [group, version] = parts.length === 2 ? [parts[0]!, parts[1]!] : ['', parts[0]!];
  const kind = String(ref.kind ?? '');
  const plurals = [...types].filter((t) => t.group === group && t.kind === kind && t.versions.includes(version)).map((t) => t.plural);
  if (!plurals.length) return `no matches for kind "${kind}" in version "${apiVersion}"`;
  return { group, version, plurals };
}

/** Throws the plugin's 403 when the requester may not make this change of ownerReferences. */
export function enforceOwnerReferencePermissions(req: AdmissionRequest, authorize: (a: AuthzAttributes) => boolean, types: Iterable<ResourceType>): void {
  if (WHITELISTED(req.t, req.sub)) return;
  if (!changesOwnerReferences(req.obj, req.old)) return;
  const base = { user: req.who.user, groups: req.who.groups, ...(req.ns !== undefined ? { namespace: req.ns } : {}) };
  const mayDelete = authorize({
    ...base, verb: 'delete', group: req.t.group, version: req.version, resource: req.t.plural,
    ...(req.sub ? { subresource: req.sub } : {}), ...(req.name ? { name: req.name } : {}),
  });
  if (!mayDelete) throw forbidden(req, "cannot set an ownerRef on a resource you can't delete: , <nil>");
  for (const ref of newBlockingRefs(req.obj, req.old)) {
    const mapped = restMappings(ref, types);
    if (typeof mapped === 'string') {
      throw forbidden(req, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${String(ref.apiVersion ?? '')} Kind ${String(ref.kind ?? '')}: , ${mapped}`);
    }
    for (const plural of mapped.plurals) {
      const ok = authorize({ ...base, verb: 'update', group: mapped.group, version: mapped.version, resource: plural, subresource: 'finalizers', name: String(ref.name ?? '') });
      if (!ok) throw forbidden(req, "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>");
    }
  }
}
