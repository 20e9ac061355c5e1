// API authentication and authorization in cluster mode, delegated to Kubernetes: the bearer token goes through a
// TokenReview, the user's permission for the route (see api/access.ts) through SubjectAccessReviews. Positive answers
// are cached briefly, keyed by a hash of the token; tokens are never logged nor kept.
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import type { Context, Middleware, Next } from 'koa';
import { type Access, accessFor } from './access.js';

export interface KubeAuthOptions {
  /** Credentials of the API server itself (its service account needs create on tokenreviews and subjectaccessreviews). */
  kc: KubeConfig;
  /** Kubernetes namespace of the flowpilot resources the permissions are checked in. */
  namespace: string;
  /** How long a successful review is reused (default 10 s). */
  cacheTtlMs?: number;
  /** Audiences the token must be valid for (TokenReview spec.audiences); default: the API server's. */
  audiences?: string[];
  /** Cached entries kept at most (default 10000). */
  maxCacheEntries?: number;
  /** Where review failures are reported (default console.warn); messages never hold a token. */
  log?: (message: string) => void;
}

export interface AuthenticatedUser { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> }

type Check = { kind: 'resource'; verb: string; group: string; resource: string } | { kind: 'nonResource'; verb: string; path: string };

/** A small TTL cache with a size bound (oldest entries go first). */
class TtlCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number }>();
  constructor(private readonly ttlMs: number, private readonly max: number) {}
  get(key: string): T | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= Date.now()) { this.entries.delete(key); return undefined; }
    return hit.value;
  }
  set(key: string, value: T): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

class ReviewUnavailable extends Error {}

const bearer = (header: string | undefined): string | undefined => {
  const m = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(header ?? '');
  return m?.[1];
};

const describeCheck = (c: Check, namespace: string): string =>
  c.kind === 'resource' ? `${c.verb} resource "${c.resource}.${c.group}" in namespace "${namespace}"` : `${c.verb} path "${c.path}"`;

function checksOf(access: Access): Check[] {
  if (access.kind === 'resource') return access.checks.map((c) => ({ kind: 'resource', ...c }));
  if (access.kind === 'nonResource') return [{ kind: 'nonResource', verb: access.verb, path: access.path }];
  return [];
}

function deny(ctx: Context, status: 401 | 403 | 503, message: string): void {
  ctx.status = status;
  if (status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="flowpilot"');
  ctx.body = { message };
}

/** Koa middleware: 401 without or with an invalid token, 403 when a SubjectAccessReview denies; sets ctx.state.user. */
export function kubeAuth(options: KubeAuthOptions): Middleware {
  const authn = options.kc.makeApiClient(AuthenticationV1Api);
  const authz = options.kc.makeApiClient(AuthorizationV1Api);
  const ttl = options.cacheTtlMs ?? 10_000;
  const max = options.maxCacheEntries ?? 10_000;
  const users = new TtlCache<AuthenticatedUser>(ttl, max);
  const decisions = new TtlCache<true>(ttl, max);
  const log = options.log ?? ((m: string) => console.warn(`[api auth] ${m}`));

  async function authenticate(token: string, key: string): Promise<AuthenticatedUser | undefined> {
    const cached = users.get(key);
    if (cached) return cached;
    let review;
    try {
      review = await authn.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(options.audiences ? { audiences: options.audiences } : {}) } } });
    } catch (err) {
      // The error may echo the request (and so the token): report its status code only.
      log(`TokenReview failed (HTTP ${(err as { code?: number }).code ?? 'error'})`);
      throw new ReviewUnavailable();
    }
    const status = review.status;
    if (!status?.authenticated || !status.user?.username) return undefined;
    const user: AuthenticatedUser = { username: status.user.username, groups: status.user.groups ?? [] };
    if (status.user.uid) user.uid = status.user.uid;
    if (status.user.extra) user.extra = status.user.extra;
    users.set(key, user);
    return user;
  }

  async function authorize(user: AuthenticatedUser, check: Check, key: string): Promise<{ allowed: boolean; reason?: string }> {
    const cacheKey = `${key}|${JSON.stringify(check)}`;
    if (decisions.get(cacheKey)) return { allowed: true };
    const spec: V1SubjectAccessReviewSpec = { user: user.username, groups: user.groups };
    if (user.uid) spec.uid = user.uid;
    if (user.extra) spec.extra = user.extra;
    if (check.kind === 'resource') spec.resourceAttributes = { namespace: options.namespace, verb: check.verb, group: check.group, resource: check.resource };
    else spec.nonResourceAttributes = { verb: check.verb, path: check.path };
    let status;
    try {
      status = (await authz.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } })).status;
    } catch (err) {
      log(`SubjectAccessReview failed (HTTP ${(err as { code?: number }).code ?? 'error'})`);
      throw new ReviewUnavailable();
    }
    if (status?.allowed && !status.denied) {
      decisions.set(cacheKey, true);
      return { allowed: true };
    }
    const reason = status?.reason || status?.evaluationError;
    return reason ? { allowed: false, reason } : { allowed: false };
  }

  return async function kubeAuthMiddleware(ctx: Context, next: Next): Promise<void> {
    const access = accessFor(ctx.method, ctx.path);
    if (access.kind === 'public') return next();
    const token = bearer(ctx.get('authorization'));
    if (!token) return deny(ctx, 401, 'Unauthorized: a bearer token is required');
    const key = createHash('sha256').update(token).digest('hex');
    try {
      const user = await authenticate(token, key);
      if (!user) return deny(ctx, 401, 'Unauthorized: invalid bearer token');
      if (access.kind === 'unmapped') return deny(ctx, 403, `Forbidden: no access rule for ${ctx.method} ${ctx.path}`);
      for (const check of checksOf(access)) {
        const decision = await authorize(user, check, key);
        if (!decision.allowed) {
          const why = decision.reason ? `: ${decision.reason}` : '';
          return deny(ctx, 403, `Forbidden: user "${user.username}" cannot ${describeCheck(check, options.namespace)}${why}`);
        }
      }
      ctx.state.user = user;
    } catch (err) {
      if (err instanceof ReviewUnavailable) return deny(ctx, 503, 'Authentication service unavailable');
      throw err;
    }
    return next();
  };
}
