// Bearer-token authentication against the configured tokens (constant-time comparison), TokenReview and
// SubjectAccessReview answers, and the attributes handed to the `authorize` callback.
import { createHash, timingSafeEqual } from 'node:crypto';
import { badRequest } from './errors.js';

export interface TokenUser { username: string; uid?: string; groups?: string[] }

/** What `authorize` is asked: a SubjectAccessReview's spec, flattened (resource or non-resource request). */
export interface AuthzAttributes {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  verb: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Set for non-resource requests (e.g. `/healthz`). */
  path?: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export class TokenTable {
  private readonly entries: { hash: Buffer; user: TokenUser }[];
  constructor(tokens: Record<string, TokenUser> | undefined) {
    this.entries = Object.entries(tokens ?? {}).map(([tok, user]) => ({ hash: digest(tok), user }));
  }
  get enabled(): boolean { return this.entries.length > 0; }

  /** The user of a token; compares every entry in constant time so timing tells nothing. */
  lookup(token: string | undefined): TokenUser | undefined {
    if (!token) return undefined;
    const h = digest(token);
    let found: TokenUser | undefined;
    for (const e of this.entries) if (timingSafeEqual(e.hash, h)) found = e.user;
    return found;
  }

  fromHeader(header: string | undefined): TokenUser | undefined {
    const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
    return this.lookup(m?.[1]?.trim());
  }
}

type Body = Record<string, any>;
const base = (kind: string, group: string, body: Body) => ({
  kind, apiVersion: `${group}/v1`, metadata: { creationTimestamp: null, ...(body.metadata ?? {}) }, spec: body.spec ?? {},
});

export function tokenReview(table: TokenTable, body: Body): object {
  const token = body?.spec?.token;
  if (typeof token !== 'string' || !token) throw badRequest('spec.token: Required value');
  const user = table.lookup(token);
  const status = user
    ? { authenticated: true, user: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: [...(user.groups ?? []), 'system:authenticated'] }, audiences: body.spec.audiences }
    : { authenticated: false, user: {}, error: 'invalid bearer token' };
  return { ...base('TokenReview', 'authentication.k8s.io', body), status };
}

export function accessAttributes(spec: Body): AuthzAttributes {
  const ra = spec.resourceAttributes;
  const na = spec.nonResourceAttributes;
  if (!ra && !na) throw badRequest('exactly one of nonResourceAttributes or resourceAttributes must be specified');
  if (!spec.user && !(spec.groups?.length)) throw badRequest('at least one of user or group must be specified');
  const who = { user: spec.user ?? '', groups: spec.groups ?? [], uid: spec.uid, extra: spec.extra };
  if (ra) return { ...who, verb: ra.verb ?? '', group: ra.group ?? '', version: ra.version, resource: ra.resource, subresource: ra.subresource, namespace: ra.namespace, name: ra.name };
  return { ...who, verb: na.verb ?? '', path: na.path ?? '' };
}

export function subjectAccessReview(authorize: ((a: AuthzAttributes) => boolean) | undefined, body: Body): object {
  const attrs = accessAttributes(body?.spec ?? {});
  const allowed = authorize ? authorize(attrs) === true : true;
  return { ...base('SubjectAccessReview', 'authorization.k8s.io', body), status: allowed ? { allowed: true, reason: 'allowed by test server policy' } : { allowed: false, reason: 'denied by test server policy' } };
}
